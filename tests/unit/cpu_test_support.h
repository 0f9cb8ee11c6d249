// Shared by the CPU code generator tests: workloads and inline specs through
// the frontend and the pipeline, the host target (and its AVX2 restriction),
// and "compile emit_cpu(g, s, t), run it once, every output within budget".
#pragma once

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/cpu_stages.h"
#include "codegen/cpu/emit_cpu.h"
#include "frontend/spec.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "transforms/pipeline.h"
#include "runtime/run_check.h"

namespace axon::test {

inline ir::Graph load_workload(const std::string& name) {
  frontend::SpecOptions o;
  auto spec = frontend::load_spec(std::string(AXON_SOURCE_DIR) + "/bench/workloads/" + name + ".py", o);
  return transforms::run_pipeline(std::move(spec.graph));
}

inline ir::Graph parse(const std::string& src) {
  frontend::SpecOptions o;
  auto spec = frontend::parse_spec("inline.py", src, o);
  return transforms::run_pipeline(std::move(spec.graph));
}

// OpenMP kernels pull in libgomp; when the last kernel is dlclosed its idle
// worker threads would outlive the library. Pin it for the process.
inline const bool kGompPinned = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NODELETE) != nullptr;

inline const target::Target& host() {
  static target::Target t = target::detect_host(false);
  return t;
}

/// The host, and the host restricted to AVX2 when it has AVX-512.
inline std::vector<target::Target> targets() {
  std::vector<target::Target> ts = {host()};
  if (host().isa.vector_bits() == 512) ts.push_back(target::restrict_to_avx2(host()));
  return ts;
}

/// Compiles emit_cpu(g, s, t), runs it once on the inputs of `seed` and
/// expects every output within its error budget. AXON_CPU_TEST_DUMP=1
/// prints the kernel.
inline void expect_correct(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t,
                           const std::string& what, uint64_t seed) {
  ASSERT_TRUE(kGompPinned);
  ASSERT_EQ(schedule::why_illegal(g, s, t), "") << what;
  codegen::KernelSource k = backend::emit_cpu(g, s, t);
  if (std::getenv("AXON_CPU_TEST_DUMP")) std::fprintf(stderr, "%s\n", k.source.c_str());
  runtime::CompileOptions co;
  co.flags = codegen::cpu_compile_flags(t, true);
  std::string so = runtime::compile_shared(k, co);
  runtime::LoadedKernel kernel(so, k.entry);
  runtime::RunCheck r = runtime::run_and_check(g, kernel, seed);
  for (size_t i = 0; i < r.outputs.size(); ++i)
    EXPECT_TRUE(r.outputs[i].cmp.ok()) << what << " output " << i << ": max error/budget "
                                       << r.outputs[i].cmp.max_error_over_budget << " worst got "
                                       << r.outputs[i].cmp.worst_got << " ref " << r.outputs[i].cmp.worst_ref;
}

}  // namespace axon::test
