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

// One argument as the kernel sees it: a pointer, an element type, a shape
// and strides (in elements). Only CPU arrays are read.
struct View {
  const void* data = nullptr;
  nb::dlpack::dtype dtype{};
  size_t ndim = 0;
  int64_t shape[16];
  int64_t strides[16];
};

std::string shape_text(const View& a) {
  std::string s = "[";
  for (size_t i = 0; i < a.ndim; ++i) s += (i ? ", " : "") + std::to_string(a.shape[i]);
  return s + "]";
}

// torch's types and dtypes, looked up once torch is imported (by the caller).
struct Torch {
  PyTypeObject* tensor = nullptr;
  PyObject* from_numpy = nullptr;
  std::vector<std::pair<PyObject*, nb::dlpack::dtype>> dtypes;
};

const Torch* torch_types() {
  static Torch t;
  if (t.tensor) return &t;
  PyObject* torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");  // borrowed
  if (!torch) return nullptr;
  try {
    nb::handle m(torch);
    nb::object tensor = m.attr("Tensor");
    if (!PyType_Check(tensor.ptr())) return nullptr;
    using C = nb::dlpack::dtype_code;
    auto dt = [](C c, int bits) { return nb::dlpack::dtype{static_cast<uint8_t>(c), static_cast<uint8_t>(bits), 1}; };
    const std::pair<const char*, nb::dlpack::dtype> names[] = {
        {"float32", dt(C::Float, 32)}, {"float64", dt(C::Float, 64)}, {"float16", dt(C::Float, 16)},
        {"bfloat16", dt(C::Bfloat, 16)}, {"int32", dt(C::Int, 32)},   {"int64", dt(C::Int, 64)},
        {"bool", dt(C::Bool, 8)}};
    for (const auto& [name, d] : names) t.dtypes.emplace_back(nb::object(m.attr(name)).release().ptr(), d);  // kept for the process
    t.from_numpy = nb::object(m.attr("from_numpy")).release().ptr();
    t.tensor = reinterpret_cast<PyTypeObject*>(tensor.release().ptr());
  } catch (const nb::python_error&) {
    t.dtypes.clear();
    return nullptr;
  }
  return &t;
}

bool is_torch_tensor(PyObject* o, const Torch** t) {
  *t = torch_types();
  return *t && PyObject_TypeCheck(o, (*t)->tensor);
}

// Reads a sequence of ints (a torch.Size, a stride tuple) into `out`; false past 16 or on a non-int.
bool read_ints(PyObject* seq, int64_t* out, size_t* n) {
  if (!seq || !PyTuple_Check(seq)) return false;
  Py_ssize_t k = PyTuple_GET_SIZE(seq);
  if (k > 16) return false;
  for (Py_ssize_t i = 0; i < k; ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, i));
    if (v == -1 && PyErr_Occurred()) return false;
    out[i] = v;
  }
  *n = static_cast<size_t>(k);
  return true;
}

// A torch CPU tensor read through its own accessors (data_ptr, shape,
// stride, dtype): much cheaper than a DLPack export per call.
bool view_torch(PyObject* o, const Torch& t, View& v) {
  nb::object is_cpu = nb::steal(PyObject_GetAttrString(o, "is_cpu"));
  if (!is_cpu.is_valid() || is_cpu.ptr() != Py_True) return false;
  nb::object dtype = nb::steal(PyObject_GetAttrString(o, "dtype"));
  bool known = false;
  for (const auto& [obj, d] : t.dtypes)
    if (dtype.ptr() == obj) {
      v.dtype = d;
      known = true;
    }
  if (!known) return false;
  nb::object shape = nb::steal(PyObject_GetAttrString(o, "shape"));
  nb::object strides = nb::steal(PyObject_CallMethod(o, "stride", nullptr));
  nb::object ptr = nb::steal(PyObject_CallMethod(o, "data_ptr", nullptr));
  size_t ns = 0;
  if (!ptr.is_valid() || !read_ints(shape.ptr(), v.shape, &v.ndim) || !read_ints(strides.ptr(), v.strides, &ns) ||
      ns != v.ndim)
    return false;
  v.data = PyLong_AsVoidPtr(ptr.ptr());
  return !PyErr_Occurred();
}

bool view_array(nb::handle h, Array& keep, View& v) {
  if (!nb::try_cast(h, keep, false) || keep.device_type() != nb::device::cpu::value || keep.ndim() > 16) return false;
  v.data = keep.data();
  v.dtype = keep.dtype();
  v.ndim = keep.ndim();
  for (size_t d = 0; d < v.ndim; ++d) {
    v.shape[d] = static_cast<int64_t>(keep.shape(d));
    v.strides[d] = keep.stride(d);
  }
  return true;
}

bool c_contiguous(const View& a) {
  int64_t expect = 1;
  for (size_t i = a.ndim; i-- > 0;) {
    if (a.shape[i] != 1 && a.strides[i] != expect) return false;
    expect *= a.shape[i];
  }
  return true;
}

// The arguments read as views; `keep` holds the imported numpy arrays for one call.
struct Views {
  std::array<View, kMax> v;
  std::array<Array, kMax> keep;
  size_t n = 0;
  bool torch = false;
};

// Reads each argument as a CPU array without converting it; false (with `why`) when one is not.
bool import_args(nb::handle args, Views& v, std::string* why) {
  PyObject* t = args.ptr();
  Py_ssize_t n = PyTuple_GET_SIZE(t);
  if (n > static_cast<Py_ssize_t>(kMax)) {
    if (why) *why = "too many arguments";
    return false;
  }
  v.n = static_cast<size_t>(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* o = PyTuple_GET_ITEM(t, i);
    const Torch* tt = nullptr;
    bool torch = is_torch_tensor(o, &tt);
    bool ok = torch ? view_torch(o, *tt, v.v[i]) : view_array(nb::handle(o), v.keep[i], v.v[i]);
    if (!ok) {
      PyErr_Clear();
      if (why) *why = "argument " + std::to_string(i + 1) + " is not an array on the CPU";
      return false;
    }
    if (i == 0) v.torch = torch;
  }
  return true;
}

// Whether the arrays fit `params`; `why` says how the first misfit differs.
bool fits(const Views& vs, const std::vector<ir::Type>& params, const std::vector<std::string>& names,
          std::string* why) {
  if (vs.n != params.size()) {
    if (why) *why = "expected " + std::to_string(params.size()) + " arguments, got " + std::to_string(vs.n);
    return false;
  }
  for (size_t i = 0; i < vs.n; ++i) {
    const View& a = vs.v[i];
    const ir::Type& p = params[i];
    bool same_shape = a.ndim == p.shape.size();
    for (size_t d = 0; same_shape && d < a.ndim; ++d) same_shape = a.shape[d] == p.shape[d];
    if (a.dtype != dl_dtype(p.dtype) || !same_shape) {
      if (why)
        *why = "argument '" + names[i] + "' is " + dl_name(a.dtype) + shape_text(a) + "; the kernel takes " +
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
    // A torch caller gets torch tensors: torch.from_numpy shares the buffer
    // (cheaper than a DLPack export); bfloat16, which numpy lacks, goes through DLPack.
    const Torch* tt = torch_out ? torch_types() : nullptr;
    if (torch_out && (!tt || t.dtype == ir::DType::BF16)) {
      result[j] = nb::ndarray<nb::pytorch>(owner.data(), nd, shape.data(), owner, nullptr, dl_dtype(t.dtype),
                                           nb::device::cpu::value)
                      .cast();
      continue;
    }
    result[j] = nb::ndarray<nb::numpy>(owner.data(), nd, shape.data(), owner, nullptr, dl_dtype(t.dtype),
                                       nb::device::cpu::value)
                    .cast();
    if (tt) {
      result[j] = nb::steal(PyObject_CallOneArg(tt->from_numpy, result[j].ptr()));
      if (!result[j].is_valid()) throw nb::python_error();
    }
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
  for (size_t i = 0; i < v.n; ++i) ptrs.push_back(const_cast<void*>(v.v[i].data));
  return run(ptrs, v.torch);
}

double Kernel::time_raw(nb::tuple args, int reps) const {
  Views v;
  std::string why;
  if (!import_args(args, v, &why) || !fits(v, params_, names_, &why)) throw ShapeError(why);
  std::vector<void*> ptrs;
  for (size_t i = 0; i < v.n; ++i) ptrs.push_back(const_cast<void*>(v.v[i].data));
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
    for (size_t i = 0; i < v.n; ++i) ptrs.push_back(const_cast<void*>(v.v[i].data));
    return hold->run(ptrs, v.torch);
  }
  return miss_;
}

}  // namespace axon::python
