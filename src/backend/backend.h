// Backend: everything the rest of axon asks of a target's code generator,
// in one interface. optimize, bench, the proposer loop and the CLI reach
// code generation only through it, so that a second target (a GPU printer
// of the tile IR, docs/tile_ir.md) is a second Backend, not a second
// pipeline.
//
///   space / why_illegal / predicted_seconds   the schedule space of a graph,
///                                             legality of a point, the cost model
///   emit(g, s)                                the kernel for a legal point
///   emit_naive(g)                             the baseline kernel
///   compile_flags(shared)                     how every kernel of emit and
///                                             emit_naive is compiled
///   version()                                 the code generator's version;
///                                             the tuning database keys rows by it
/// Requires for emit: why_illegal(g, s) == "". Each kernel has the C ABI of
/// codegen/c_like/kernel_abi.h and computes what the graph means within its
/// error budget (docs/error_budget.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_info.h"
#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "schedule/schedule.h"
#include "target/target.h"

namespace axon::backend {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual int version() const = 0;
  virtual const target::Target& target() const = 0;

  virtual schedule::Space space(const ir::Graph& g) const = 0;
  virtual std::string why_illegal(const ir::Graph& g, const schedule::Schedule& s) const = 0;
  virtual double predicted_seconds(const ir::Graph& g, const schedule::Schedule& s) const = 0;

  virtual codegen::KernelSource emit(const ir::Graph& g, const schedule::Schedule& s) const = 0;
  virtual codegen::KernelSource emit_naive(const ir::Graph& g) const = 0;
  /// What emit prints, as the tile programs it prints them from: one
  /// (title, program text) per kernel piece (`axon lower --pipeline stages`).
  virtual std::vector<std::pair<std::string, std::string>> programs(const ir::Graph& g,
                                                                    const schedule::Schedule& s) const = 0;
  /// What emit(g, s) is made of: stages, their temporaries, the values
  /// between them and the identities the lowerings apply (the report's
  /// "kernel" section).
  virtual codegen::KernelInfo kernel_info(const ir::Graph& g, const schedule::Schedule& s) const = 0;
  virtual std::vector<std::string> compile_flags(bool shared) const = 0;
};

/// The CPU backend for `t`: AVX-512, AVX2 or scalar C++ with OpenMP
/// (codegen/cpu/emit_cpu.h; the tile IR's loops kernels for graphs no
/// specialised generator takes).
std::unique_ptr<Backend> cpu_backend(const target::Target& t);

}  // namespace axon::backend
