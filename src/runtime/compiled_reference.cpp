// The compiled float64 reference; the contract is in compiled_reference.h.
#include "runtime/compiled_reference.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "analysis/cost.h"
#include "codegen/c_like/reference_cpp.h"
#include "runtime/compile_shared.h"
#include "support/diagnostic.h"
#include "verify/float64_twin.h"
#include "verify/interpreter.h"
#include "verify/kernel_io.h"

namespace axon::runtime {

double interpreter_seconds_estimate(const ir::Graph& g) {
  analysis::Cost c = analysis::graph_cost(g);
  return 0.5e-9 * c.contraction_flops + 100e-9 * (c.flops - c.contraction_flops);
}

bool compiled_reference_preferred(const ir::Graph& g) {
  return interpreter_seconds_estimate(g) > kCompiledReferenceSeconds;
}

std::string reference_path_setting() {
  const char* p = std::getenv("AXON_REFERENCE");
  if (!p || !*p) return "auto";
  std::string s = p;
  AXON_CHECK(s == "auto" || s == "interpreter" || s == "compiled")
      << "AXON_REFERENCE is '" << s << "': expected auto, interpreter or compiled";
  return s;
}

CompiledGraph::CompiledGraph(const ir::Graph& g, int threads) : g_(g) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto t0 = std::chrono::steady_clock::now();
  codegen::KernelSource src = codegen::print_reference_cpp(g_, threads);
  CompileOptions o;
  // No fast-math: nothing may round differently from the source; no
  // contraction into FMAs the graph does not write (-ffp-contract=off, so
  // -march=native changes the width of vectors, never a rounding). No
  // auto-vectorizer: GCC 12.2 at -O2 vectorizes a loop of
  // `(double)(float)x[i] - x[i]` into a subtraction of x from itself,
  // dropping the rounding (compiled_reference_test's CastRoundingIsKept);
  // only the loops the printer marks `omp simd` (tile vectorize_exact: no
  // narrowing cast, no value carried between lanes) run as vectors.
  o.flags = {"-O2", "-march=native", "-fno-tree-vectorize", "-fopenmp", "-ffp-contract=off", "-fPIC", "-shared"};
  std::string so = compile_shared(src, o);
  kernel_ = std::make_unique<LoadedKernel>(so, src.entry);
  compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<ir::Tensor> CompiledGraph::run(const std::vector<ir::Tensor>& inputs) const {
  AXON_CHECK(inputs.size() == g_.params.size())
      << "the compiled graph takes " << g_.params.size() << " inputs, got " << inputs.size();
  std::vector<std::vector<uint8_t>> storage;
  for (size_t i = 0; i < g_.params.size(); ++i) {
    AXON_CHECK(inputs[i].type.shape == g_.params[i].type.shape) << "input " << i << " has the wrong shape";
    storage.push_back(verify::to_buffer(inputs[i], g_.params[i].type.dtype));
    if (storage.back().empty()) storage.back().resize(8);
  }
  for (ir::NodeId o : g_.outputs) {
    const ir::Type& t = g_[o].type;
    storage.emplace_back(static_cast<size_t>(std::max<int64_t>(t.numel(), 1)) * ir::dtype_bytes(t.dtype), uint8_t{0xFF});
  }
  std::vector<void*> ptrs;
  for (auto& s : storage) ptrs.push_back(s.data());
  kernel_->call(ptrs);
  std::vector<ir::Tensor> out;
  for (size_t j = 0; j < g_.outputs.size(); ++j) {
    const ir::Type& t = g_[g_.outputs[j]].type;
    out.push_back(ir::Tensor{t, verify::from_buffer(storage[g_.params.size() + j].data(), t.numel(), t.dtype)});
  }
  return out;
}

namespace {
ReferenceEvaluator::Path chosen_path(const ir::Graph& g) {
  const std::string s = reference_path_setting();
  if (s == "interpreter") return ReferenceEvaluator::Path::Interpreter;
  if (s == "compiled") return ReferenceEvaluator::Path::Compiled;
  return compiled_reference_preferred(g) ? ReferenceEvaluator::Path::Compiled : ReferenceEvaluator::Path::Interpreter;
}
}  // namespace

ReferenceEvaluator::ReferenceEvaluator(const ir::Graph& g) : ReferenceEvaluator(g, chosen_path(g)) {}
ReferenceEvaluator::ReferenceEvaluator(const ir::Graph& g, Path p) : g_(g), path_(p) {}

void ReferenceEvaluator::prepare() const {
  std::call_once(once_, [&] {
    if (path_ != Path::Compiled) return;
    try {
      compiled_ = std::make_unique<CompiledGraph>(verify::float64_twin(verify::reference_with_bounds_graph(g_)));
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu_);
      failure_ = e.what();
      path_ = Path::Interpreter;
      std::cerr << "axon: warning: the compiled float64 reference of " << g_.entry
                << " failed; the interpreter computes it instead: " << failure_ << "\n";
    }
  });
}

verify::ReferenceWithBounds ReferenceEvaluator::evaluate(const std::vector<ir::Tensor>& inputs) const {
  prepare();
  if (!compiled_) return verify::reference_with_bounds(g_, inputs);
  return verify::split_reference_with_bounds(g_, compiled_->run(inputs));
}

ReferenceEvaluator::Path ReferenceEvaluator::path() const {
  std::lock_guard<std::mutex> lock(mu_);
  return path_;
}

std::string ReferenceEvaluator::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

}  // namespace axon::runtime
