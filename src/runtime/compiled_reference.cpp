// The compiled float64 reference; the contract is in compiled_reference.h.
#include "runtime/compiled_reference.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "analysis/cost.h"
#include "codegen/c_like/reference_cpp.h"
#include "ir/printer.h"
#include "runtime/cache_key.h"
#include "runtime/compile_shared.h"
#include "support/diagnostic.h"
#include "verify/float64_twin.h"
#include "verify/interpreter.h"
#include "verify/kernel_io.h"

namespace axon::runtime {

namespace fs = std::filesystem;

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

namespace {

// Every field of the graph that the printer reads, in order: op, type,
// operands and attributes of each node, the parameters, the outputs, the
// entry. Two graphs with the same text print the same kernel.
std::string graph_key_text(const ir::Graph& g) {
  std::ostringstream os;
  os.precision(17);
  os << g.entry << "\n";
  for (const ir::ParamInfo& p : g.params) os << p.name << ":" << ir::type_str(p.type) << "\n";
  for (const ir::Node& n : g.nodes()) {
    os << static_cast<int>(n.op) << " " << ir::type_str(n.type) << " (";
    for (ir::NodeId a : n.args) os << a << ",";
    os << ") [";
    for (int64_t v : n.attrs.ints) os << v << ",";
    os << "] [";
    for (int64_t v : n.attrs.ints2) os << v << ",";
    uint64_t bits;
    std::memcpy(&bits, &n.attrs.value, sizeof bits);
    os << "] " << bits << " " << n.attrs.text.size() << ":" << n.attrs.text << "\n";
  }
  os << "->";
  for (ir::NodeId o : g.outputs) os << " " << o;
  return os.str();
}

// The printed twin of a graph, memoised in the kernel cache: lowering a
// large twin takes seconds (m2_matmul_bias_gelu's, with its GELU's bound
// chain: 5 s), compiling it nothing once its object is cached. Keyed by the
// graph's text, the threads, the host and the axon executable's bytes (a
// rebuilt axon prints afresh); written whole under a private name and
// renamed into place; a file that does not read back whole is printed anew.
codegen::KernelSource memoised_reference_source(const ir::Graph& g, int threads) {
  CacheKey key;
  key.add("compiled float64 reference source, format 1");
  key.add(executable_identity());
  key.add(host_cpu_signature());  // in case the printer asks the host anything
  key.add(std::to_string(threads));
  key.add(graph_key_text(g));
  const fs::path dir = fs::path(resolve_cache_dir(CompileOptions{})) / "reference-sources";
  const fs::path file = dir / (key.hex() + ".txt");
  auto read_field = [](std::istream& in, std::string& out) {
    size_t n = 0;
    if (!(in >> n) || in.get() != '\n') return false;
    out.resize(n);
    return static_cast<bool>(in.read(out.data(), static_cast<std::streamsize>(n)));
  };
  {
    std::ifstream in(file, std::ios::binary);
    codegen::KernelSource k;
    std::string magic;
    if (in && std::getline(in, magic) && magic == "axon reference source 1" && read_field(in, k.entry) &&
        read_field(in, k.header) && read_field(in, k.source))
      return k;
  }
  codegen::KernelSource k = codegen::print_reference_cpp(g, threads);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path tmp = dir / (key.hex() + private_suffix());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << "axon reference source 1\n";
    for (const std::string* f : {&k.entry, &k.header, &k.source}) out << f->size() << "\n" << *f;
    if (!out) {
      fs::remove(tmp, ec);
      return k;
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
  return k;
}

}  // namespace

CompiledGraph::CompiledGraph(const ir::Graph& g, int threads) : g_(g) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto t0 = std::chrono::steady_clock::now();
  codegen::KernelSource src = memoised_reference_source(g_, threads);
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

ReferenceEvaluator::ReferenceEvaluator(const ir::Graph& g, int threads)
    : ReferenceEvaluator(g, chosen_path(g), threads) {}
ReferenceEvaluator::ReferenceEvaluator(const ir::Graph& g, Path p, int threads) : g_(g), threads_(threads), path_(p) {}

void ReferenceEvaluator::prepare() const {
  std::call_once(once_, [&] {
    if (path_ != Path::Compiled) return;
    try {
      compiled_ = std::make_unique<CompiledGraph>(verify::float64_twin(verify::reference_with_bounds_graph(g_)), threads_);
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
