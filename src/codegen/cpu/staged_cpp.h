// Emits a partitioned graph (loop/partition.h) as one kernel.cpp: each
// stage's code from its own generator (the contraction generator, the fused
// row kernel or the naive kernel) inside its own namespace, and an entry
// function with the ABI of kernel.h that allocates the materialised values
// between stages (64-byte aligned, freed before it returns) and calls the
// stages in order.
//
/// Requires: p == partition_graph(g) and `s` legal for `t` (why_illegal).
/// Ensures: what emit_cpu ensures (same ABI, only standard headers,
/// <immintrin.h> and <omp.h>); outputs are written in place by the stage
/// that computes them, so none is copied unless it is a parameter or
/// appears twice among the outputs.
#pragma once

#include <set>
#include <string>

#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "loop/partition.h"
#include "schedule/schedule.h"
#include "target/target.h"

namespace axon::codegen {

/// Whether emit_cpu stages `p` at all: some stage is not naive (a partition
/// of naive stages alone is one kernel of the whole graph instead).
bool worth_staging(const loop::Partition& p);

KernelSource emit_staged_cpp(const ir::Graph& g, const loop::Partition& p, const schedule::Schedule& s,
                             const target::Target& t);

/// A generated translation unit made into the body of `namespace ns`: its
/// #include lines are moved into `includes` (kernel.h dropped), include
/// guards of axon's helpers are made per namespace, and the definition
/// `extern "C" void <entry>(` becomes `void run(`.
std::string as_stage_namespace(const std::string& source, const std::string& entry, const std::string& ns,
                               std::set<std::string>* includes);

}  // namespace axon::codegen
