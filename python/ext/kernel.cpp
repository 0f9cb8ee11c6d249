#include "kernel.h"

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <nanobind/ndarray.h>

#include "errors.h"
#include "runtime/compile_shared.h"

namespace nb = nanobind;

namespace axon::python {

namespace {

using Array = nb::ndarray<nb::ro>;
constexpr size_t kMax = runtime::LoadedKernel::kMaxBuffers;

nb::dlpack::dtype dl_dtype(ir::DType d) {
  using C = nb::dlpack::dtype_code;
  auto make = [](C code, int bits) { return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1}; };
  switch (d) {
    case ir::DType::Bool: return make(C::Bool, 8);
    case ir::DType::I32: return make(C::Int, 32);
    case ir::DType::I64: return make(C::Int, 64);
    case ir::DType::F16: return make(C::Float, 16);
    case ir::DType::BF16: return make(C::Bfloat, 16);
    case ir::DType::F32: return make(C::Float, 32);
    case ir::DType::F64: return make(C::Float, 64);
  }
  return make(C::Float, 32);
}

std::string dl_name(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  const char* code = "?";
  switch (static_cast<C>(t.code)) {
    case C::Int: code = "int"; break;
    case C::UInt: code = "uint"; break;
    case C::Float: code = "float"; break;
    case C::Bfloat: code = "bfloat"; break;
    case C::Complex: code = "complex"; break;
    case C::Bool: return "bool";
    default: break;
  }
  return code + std::to_string(t.bits);
}

std::string shape_text(const Array& a) {
  std::string s = "[";
  for (size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + "]";
}

// True when `o` is a torch.Tensor (torch already imported by the caller;
// the type is looked up once).
bool is_torch_tensor(PyObject* o) {
  static PyTypeObject* tensor = nullptr;
  if (!tensor) {
    PyObject* torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");  // borrowed
    if (!torch) return false;
    PyObject* t = PyObject_GetAttrString(torch, "Tensor");
    if (!t || !PyType_Check(t)) {
      Py_XDECREF(t);
      PyErr_Clear();
      return false;
    }
    tensor = reinterpret_cast<PyTypeObject*>(t);  // kept for the process
  }
  return PyObject_TypeCheck(o, tensor);
}

bool c_contiguous(const Array& a) {
  int64_t expect = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    int64_t n = static_cast<int64_t>(a.shape(i));
    if (n != 1 && a.stride(i) != expect) return false;
    expect *= n;
  }
  return true;
}

// The arguments read as arrays, kept alive for one call.
struct Views {
  std::array<Array, kMax> a;
  size_t n = 0;
  bool torch = false;
};

// Reads each argument as a CPU array without converting it; false with `why` when one is not.
bool import_args(nb::handle args, Views& v, std::string* why) {
  PyObject* t = args.ptr();
  Py_ssize_t n = PyTuple_GET_SIZE(t);
  if (n > static_cast<Py_ssize_t>(kMax)) {
    if (why) *why = "too many arguments";
    return false;
  }
  v.n = static_cast<size_t>(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    nb::handle h(PyTuple_GET_ITEM(t, i));
    if (!nb::try_cast(h, v.a[i], false) || v.a[i].device_type() != nb::device::cpu::value) {
      if (why) *why = "argument " + std::to_string(i + 1) + " is not an array on the CPU";
      return false;
    }
    if (i == 0) v.torch = is_torch_tensor(h.ptr());
  }
  return true;
}

// Whether the arrays fit `params`; `why` says how the first misfit differs.
bool fits(const Views& v, const std::vector<ir::Type>& params, const std::vector<std::string>& names,
          std::string* why) {
  if (v.n != params.size()) {
    if (why) *why = "expected " + std::to_string(params.size()) + " arguments, got " + std::to_string(v.n);
    return false;
  }
  for (size_t i = 0; i < v.n; ++i) {
    const Array& a = v.a[i];
    const ir::Type& p = params[i];
    nb::dlpack::dtype want = dl_dtype(p.dtype);
    bool same_shape = a.ndim() == p.shape.size();
    for (size_t d = 0; same_shape && d < a.ndim(); ++d) same_shape = static_cast<int64_t>(a.shape(d)) == p.shape[d];
    if (a.dtype() != want || !same_shape) {
      if (why)
        *why = "argument '" + names[i] + "' is " + dl_name(a.dtype()) + shape_text(a) + "; the kernel takes " +
               ir::type_str(p);
      return false;
    }
    if (!c_contiguous(a)) {
      if (why) *why = "argument '" + names[i] + "' is not C-contiguous";
      return false;
    }
  }
  return true;
}

}  // namespace

Kernel::Kernel(const Program& p, const SearchResult& r)
    : kernel_([&] {
        runtime::CompileOptions co;
        co.flags = r.compile_flags;
        std::string so;
        {
          nb::gil_scoped_release unlocked;
          so = runtime::compile_shared(r.kernel, co);
        }
        return runtime::LoadedKernel(so, r.kernel.entry);
      }()) {
  for (const auto& prm : p.graph.params) {
    params_.push_back(prm.type);
    names_.push_back(prm.name);
  }
  for (ir::NodeId o : p.graph.outputs) outputs_.push_back(p.graph[o].type);
  if (params_.size() + outputs_.size() > kMax)
    throw ShapeError("the kernel has more than " + std::to_string(kMax) + " parameters and outputs");
}

nb::object Kernel::run(std::vector<void*>& ptrs, bool torch_out) const {
  size_t first_out = ptrs.size();
  std::array<void*, kMax> mem{};
  for (size_t j = 0; j < outputs_.size(); ++j) {
    size_t bytes = static_cast<size_t>(outputs_[j].numel()) * ir::dtype_bytes(outputs_[j].dtype);
    mem[j] = std::aligned_alloc(64, (bytes + 64) / 64 * 64);
    if (!mem[j]) {
      for (size_t k = 0; k < j; ++k) std::free(mem[k]);
      throw std::bad_alloc();
    }
    ptrs.push_back(mem[j]);
  }
  {
    nb::gil_scoped_release unlocked;
    kernel_.call(ptrs);
  }
  ptrs.resize(first_out);
  nb::object result[kMax];
  for (size_t j = 0; j < outputs_.size(); ++j) {
    const ir::Type& t = outputs_[j];
    std::array<size_t, 16> shape{};
    size_t nd = t.shape.size();
    if (nd > shape.size()) throw ShapeError("an output has more than 16 dimensions");
    for (size_t d = 0; d < nd; ++d) shape[d] = static_cast<size_t>(t.shape[d]);
    nb::capsule owner(mem[j], [](void* p) noexcept { std::free(p); });
    mem[j] = nullptr;
    if (torch_out)
      result[j] = nb::ndarray<nb::pytorch>(owner.data(), nd, shape.data(), owner, nullptr, dl_dtype(t.dtype),
                                           nb::device::cpu::value)
                      .cast();
    else
      result[j] = nb::ndarray<nb::numpy>(owner.data(), nd, shape.data(), owner, nullptr, dl_dtype(t.dtype),
                                         nb::device::cpu::value)
                      .cast();
  }
  if (outputs_.size() == 1) return result[0];
  nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(outputs_.size())));
  for (size_t j = 0; j < outputs_.size(); ++j) PyTuple_SET_ITEM(tuple.ptr(), j, result[j].release().ptr());
  return tuple;
}

nb::object Kernel::call(nb::args args) const {
  Views v;
  std::string why;
  if (!import_args(args, v, &why) || !fits(v, params_, names_, &why)) throw ShapeError(why);
  std::vector<void*> ptrs;
  ptrs.reserve(params_.size() + outputs_.size());
  for (size_t i = 0; i < v.n; ++i) ptrs.push_back(const_cast<void*>(v.a[i].data()));
  return run(ptrs, v.torch);
}

double Kernel::time_raw(nb::tuple args, int reps) const {
  Views v;
  std::string why;
  if (!import_args(args, v, &why) || !fits(v, params_, names_, &why)) throw ShapeError(why);
  std::vector<void*> ptrs;
  for (size_t i = 0; i < v.n; ++i) ptrs.push_back(const_cast<void*>(v.a[i].data()));
  std::vector<void*> mem;
  for (const ir::Type& t : outputs_) {
    size_t bytes = static_cast<size_t>(t.numel()) * ir::dtype_bytes(t.dtype);
    mem.push_back(std::aligned_alloc(64, (bytes + 64) / 64 * 64));
    ptrs.push_back(mem.back());
  }
  double ns;
  {
    nb::gil_scoped_release unlocked;
    kernel_.call(ptrs);  // warm
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) kernel_.call(ptrs);
    ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / reps;
  }
  for (void* m : mem) std::free(m);
  return ns;
}

nb::object Dispatcher::call(nb::args args) const {
  Views v;
  if (kernels_.empty() || !import_args(args, v, nullptr)) return miss_;
  for (const auto& k : kernels_) {
    if (!fits(v, k->params(), k->param_names(), nullptr)) continue;
    std::shared_ptr<Kernel> hold = k;  // alive while the kernel runs without the GIL
    std::vector<void*> ptrs;
    ptrs.reserve(hold->params().size() + hold->outputs().size());
    for (size_t i = 0; i < v.n; ++i) ptrs.push_back(const_cast<void*>(v.a[i].data()));
    return hold->run(ptrs, v.torch);
  }
  return miss_;
}

}  // namespace axon::python
