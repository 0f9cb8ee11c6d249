// A compiled kernel called on Python arrays, and the per-function cache of
// them that @axon.jit serves calls from.
//
// Kernel: one kernel.cpp built (runtime/compile_shared, cached on disk) and
// loaded (dlopen) for one signature, the parameter and output types of its
// graph. call(args) takes one array per parameter: numpy arrays and anything
// with the buffer protocol or __dlpack__, and torch tensors (read through
// their own data_ptr, shape, stride and dtype), on the CPU, each of exactly
// its parameter's dtype and shape and C-contiguous; they are passed to the
// kernel by pointer, without a copy. The outputs are allocated here (64-byte
// aligned, row-major) and returned as numpy arrays, or as torch tensors
// (torch.from_numpy) when the first argument is a torch tensor: one
// array, or a tuple for several outputs. The GIL is released while the
// kernel runs. An argument that does not fit throws ShapeError saying which
// and why.
//
// Dispatcher: the kernels of one function, one per signature. call(args)
// finds the kernel whose parameter types the arguments have and calls it;
// when none has them, or an argument would need a conversion (not
// C-contiguous, not an array), it returns the `miss` object instead, and
// the caller (axon/_jit.py) binds, searches, converts and adds.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "ir/type.h"
#include "program.h"
#include "runtime/loaded_kernel.h"
#include "search.h"

namespace axon::python {

class Kernel {
 public:
  /// Compiles (or finds in the compile cache) and loads the kernel of `r` for `p`'s signature.
  Kernel(const Program& p, const SearchResult& r);

  nanobind::object call(nanobind::args args) const;
  /// The floor of the overhead benchmark: calls the kernel `reps` times in
  /// a C loop on the arguments' buffers and outputs allocated once, and
  /// returns the mean nanoseconds per call.
  double time_raw(nanobind::tuple args, int reps) const;

  const std::vector<ir::Type>& params() const { return params_; }
  const std::vector<ir::Type>& outputs() const { return outputs_; }
  const std::vector<std::string>& param_names() const { return names_; }
  const std::string& library() const { return kernel_.path(); }

  /// Allocates the outputs, runs the kernel without the GIL, returns the result object.
  nanobind::object run(std::vector<void*>& ptrs, bool torch_out) const;

 private:
  runtime::LoadedKernel kernel_;
  std::vector<ir::Type> params_, outputs_;
  std::vector<std::string> names_;
};

class Dispatcher {
 public:
  explicit Dispatcher(nanobind::object miss) : miss_(std::move(miss)) {}
  nanobind::object call(nanobind::args args) const;
  void add(std::shared_ptr<Kernel> k) { kernels_.push_back(std::move(k)); }
  size_t size() const { return kernels_.size(); }

 private:
  nanobind::object miss_;
  std::vector<std::shared_ptr<Kernel>> kernels_;
};

}  // namespace axon::python
