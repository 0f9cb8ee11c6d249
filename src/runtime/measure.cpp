// The measurement harness: compile in parallel, check, then time; the contract is in measure.h.
#include "runtime/measure.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <thread>

#include "runtime/compile_shared.h"
#include "runtime/compiled_reference.h"
#include "runtime/loaded_kernel.h"
#include "runtime/time_calls.h"
#include "support/diagnostic.h"
#include "verify/error_budget.h"
#include "verify/inputs.h"
#include "verify/kernel_io.h"
#include "runtime/run_check.h"

namespace axon::runtime {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string first_line(const std::string& s) {
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// Working sets below this are rotated among copies; a conservative stand-in
// for the last-level cache when the target does not say.
constexpr double kRotateBelowBytes = 8.0 * 1024 * 1024;
constexpr int kCopies = 4;
// Cold inputs never allocate more copies than this.
constexpr int kMaxColdCopies = 4096;

}  // namespace

void pin_openmp_threads() {
  setenv("OMP_PROC_BIND", "close", 0);
  setenv("OMP_PLACES", "cores", 0);
}

Measurer::Measurer(const ir::Graph& g, MeasureOptions opts) : g_(g), opts_(std::move(opts)) {
  pin_openmp_threads();
  auto t0 = std::chrono::steady_clock::now();
  // Big graphs: the compiled float64 twin (compiled_reference.h).
  ReferenceEvaluator references(g_);
  for (int i = 0; i < std::max(1, opts_.check_inputs); ++i) {
    auto in = verify::random_inputs(g_, opts_.check_seed + static_cast<uint64_t>(i),
                                    verify::Draw{verify::Distribution::Normal, 1, opts_.input_offset});
    verify::ReferenceWithBounds rb = references.evaluate(in);
    inputs_.push_back(std::move(in));
    reference_.push_back(std::move(rb.reference));
    bounds_.push_back(std::move(rb.bounds));
  }
  reference_seconds_ = seconds_since(t0);
}

Measurement Measurer::check_and_time(const std::string& so, const std::string& entry, bool time) const {
  Measurement m;
  m.compiled = true;
  LoadedKernel kernel(so, entry);
  for (size_t s = 0; s < inputs_.size(); ++s) {
    KernelBuffers b = make_buffers(g_, inputs_[s]);
    kernel.call(b.pointers());
    for (size_t j = 0; j < g_.outputs.size(); ++j) {
      const ir::Type& t = g_[g_.outputs[j]].type;
      auto got = verify::from_buffer(b.storage[g_.params.size() + j].data(), t.numel(), t.dtype);
      verify::Comparison c = verify::compare_with_budget(got, reference_[s][j], bounds_[s][j]);
      m.max_error_over_budget = std::max(m.max_error_over_budget, c.max_error_over_budget);
      if (!c.ok()) {
        m.error = "output " + std::to_string(j) + " over its error budget on input " + std::to_string(s) + " (" +
                  std::to_string(c.mismatches) + " elements, worst " + std::to_string(c.max_error_over_budget) +
                  " of the budget)";
        return m;
      }
    }
  }
  m.verified = true;
  if (!time) return m;
  const int copies = timing_copies();
  std::vector<KernelBuffers> bufs;
  std::vector<std::vector<void*>> ptrs;
  for (int c = 0; c < copies; ++c) bufs.push_back(make_buffers(g_, inputs_[0]));
  for (auto& b : bufs) ptrs.push_back(b.pointers());
  size_t next = 0;
  Timing t = time_calls([&] { kernel.call(ptrs[next++ % ptrs.size()]); }, opts_.warmup, opts_.min_reps,
                        opts_.min_seconds);
  m.ms = t.median_ms;
  m.min_ms = t.min_ms;
  m.max_ms = t.max_ms;
  m.reps = t.reps;
  m.copies = copies;
  return m;
}

int Measurer::timing_copies() const {
  // The bytes of one set of buffers, as make_buffers lays them out.
  double bytes = 0;
  for (const auto& p : g_.params) bytes += static_cast<double>(p.type.numel() * ir::dtype_bytes(p.type.dtype));
  for (ir::NodeId o : g_.outputs)
    bytes += static_cast<double>(std::max<int64_t>(g_[o].type.numel(), 1) * ir::dtype_bytes(g_[o].type.dtype));
  if (opts_.cold_bytes > 0)
    return std::clamp(static_cast<int>(std::ceil(opts_.cold_bytes / std::max(bytes, 1.0))), 2, kMaxColdCopies);
  return bytes * kCopies <= kRotateBelowBytes ? kCopies : 1;
}

std::vector<Timing> Measurer::time_side_by_side(const std::vector<codegen::KernelSource>& ks, int rounds,
                                                double seconds_each) const {
  std::vector<Timing> out(ks.size());
  const int copies = timing_copies();
  CompileOptions co;
  if (!opts_.flags.empty()) co.flags = opts_.flags;
  std::vector<std::unique_ptr<LoadedKernel>> kernels(ks.size());
  for (size_t i = 0; i < ks.size(); ++i) {
    try {
      kernels[i] = std::make_unique<LoadedKernel>(compile_shared(ks[i], co), ks[i].entry);  // cached: no recompile
    } catch (const std::exception&) {
      kernels[i].reset();
    }
  }
  // One set of buffers for all: the kernels share the graph's ABI.
  std::vector<KernelBuffers> bufs;
  std::vector<std::vector<void*>> ptrs;
  for (int c = 0; c < copies; ++c) bufs.push_back(make_buffers(g_, inputs_[0]));
  for (auto& b : bufs) ptrs.push_back(b.pointers());
  size_t next = 0;
  rounds = std::max(1, rounds);
  if (!(seconds_each > 0)) seconds_each = std::max(opts_.min_seconds, 0.1) * 2;
  const double slice_s = seconds_each / rounds;
  std::vector<std::vector<double>> calls(ks.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t n = 0; n < ks.size(); ++n) {
      const size_t i = r % 2 == 0 ? n : ks.size() - 1 - n;
      if (!kernels[i]) continue;
      kernels[i]->call(ptrs[next++ % ptrs.size()]);  // one untimed call: this kernel's code back in cache
      auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < 3 || seconds_since(t0) < slice_s; ++c) {
        auto c0 = std::chrono::steady_clock::now();
        kernels[i]->call(ptrs[next++ % ptrs.size()]);
        calls[i].push_back(seconds_since(c0) * 1e3);
      }
    }
  }
  for (size_t i = 0; i < ks.size(); ++i) out[i] = timing_of(std::move(calls[i]));
  return out;
}

std::vector<std::string> Measurer::compile_all(const std::vector<codegen::KernelSource>& ks,
                                               std::vector<Measurement>& out) const {
  std::vector<std::string> libs(ks.size());
  CompileOptions co;
  if (!opts_.flags.empty()) co.flags = opts_.flags;
  // compile_shared is safe across threads and caches.
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < ks.size();) {
      auto t0 = std::chrono::steady_clock::now();
      try {
        libs[i] = compile_shared(ks[i], co);
      } catch (const std::exception& e) {
        out[i].error = "compile failed: " + first_line(e.what());
      }
      out[i].compile_seconds = seconds_since(t0);
    }
  };
  std::vector<std::thread> pool;
  int jobs = std::max(1, std::min<int>(opts_.jobs, static_cast<int>(ks.size())));
  for (int j = 0; j < jobs; ++j) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  return libs;
}

void Measurer::check_each(const std::vector<codegen::KernelSource>& ks, const std::vector<std::string>& libs, bool time,
                          std::vector<Measurement>& out) const {
  // One at a time, so that candidates do not share the cores.
  for (size_t i = 0; i < ks.size(); ++i) {
    if (libs[i].empty()) continue;
    double cs = out[i].compile_seconds;
    try {
      out[i] = check_and_time(libs[i], ks[i].entry, time);
    } catch (const std::exception& e) {
      out[i].compiled = true;
      out[i].error = "load or run failed: " + first_line(e.what());
    }
    out[i].compile_seconds = cs;
  }
}

std::vector<Measurement> Measurer::measure(const std::vector<codegen::KernelSource>& ks) const {
  std::vector<Measurement> out(ks.size());
  check_each(ks, compile_all(ks, out), true, out);
  return out;
}

std::vector<Measurement> Measurer::measure(const std::vector<codegen::KernelSource>& ks,
                                           const codegen::KernelSource& anchor, Timing* anchor_timing) const {
  std::vector<Measurement> out(ks.size());
  // Check every candidate first; then time the ones that passed beside the anchor.
  check_each(ks, compile_all(ks, out), false, out);
  std::vector<codegen::KernelSource> timed{anchor};
  std::vector<size_t> timed_of;
  for (size_t i = 0; i < ks.size(); ++i)
    if (out[i].verified) {
      timed.push_back(ks[i]);
      timed_of.push_back(i);
    }
  if (anchor_timing) *anchor_timing = Timing{};
  if (timed_of.empty()) return out;
  std::vector<Timing> tm = time_side_by_side(timed, kAnchorRounds, opts_.min_seconds);
  if (anchor_timing) *anchor_timing = tm[0];
  for (size_t n = 0; n < timed_of.size(); ++n) {
    Measurement& m = out[timed_of[n]];
    const Timing& t = tm[n + 1];
    if (t.reps == 0) {  // passed its check, then failed to load again: not timed, never a winner
      m.verified = false;
      m.error = "load failed when timed beside the anchor";
      continue;
    }
    m.ms = t.median_ms, m.min_ms = t.min_ms, m.max_ms = t.max_ms, m.reps = t.reps;
    m.copies = timing_copies();
  }
  return out;
}

Measurement Measurer::check_only(const codegen::KernelSource& k) const {
  CompileOptions co;
  if (!opts_.flags.empty()) co.flags = opts_.flags;
  Measurement m;
  std::string so;
  try {
    so = compile_shared(k, co);
  } catch (const std::exception& e) {
    m.error = "compile failed: " + first_line(e.what());
    return m;
  }
  return check_and_time(so, k.entry, false);
}

}  // namespace axon::runtime
