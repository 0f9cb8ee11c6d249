#include "tile/pipeline.h"

#include <algorithm>

#include "support/diagnostic.h"
#include "tile/lower_graph.h"
#include "tile/passes/cascade_sums.h"
#include "tile/passes/collapse_loops.h"
#include "tile/passes/exp2_scaled.h"
#include "tile/passes/fuse_loops.h"
#include "tile/passes/inline_maps.h"
#include "tile/passes/interchange_sums.h"
#include "tile/passes/matmul_nests.h"
#include "tile/passes/parallel_chunks.h"
#include "tile/passes/parallel_sums.h"
#include "tile/passes/parallelize.h"
#include "tile/passes/prefetch_next_rows.h"
#include "tile/passes/prefetch_rows.h"
#include "tile/passes/reciprocal_divisors.h"
#include "tile/passes/shrink_buffers.h"
#include "tile/passes/split_concat_reads.h"
#include "tile/passes/stream_stores.h"
#include "tile/passes/transpose_blocks.h"
#include "tile/passes/vectorize.h"
#include "tile/verify.h"

namespace axon::tile {

namespace {

Pass cascade_pass(int64_t leaf_block = kCascadeBlock) {
  if (leaf_block == kCascadeBlock)
    return {"cascade_sums", "long sums become trees of blocks of at most 64 terms",
            [](const Kernel& k) { return cascade_sums(k); }};
  return {"cascade_sums",
          "long sums become trees of blocks of at most 64 terms per partial (innermost blocks of " +
              std::to_string(leaf_block) + " in vector lanes)",
          [leaf_block](const Kernel& k) { return cascade_sums(k, leaf_block); }};
}

void check(const Kernel& k, const std::string& after) {
  std::vector<std::string> problems = verify(k);
  if (problems.empty()) return;
  std::string msg = "the tile program after " + after + " is ill-formed:";
  for (size_t i = 0; i < problems.size() && i < 5; ++i) msg += "\n  " + problems[i];
  throw InternalError(msg);
}

}  // namespace

std::vector<Pass> naive_pipeline() { return {cascade_pass()}; }

std::vector<Pass> loops_pipeline(const LoopsOptions& o) {
  std::vector<Pass> p;
  if (o.matmul_nests) {
    const int threads = o.threads;
    p.push_back({"matmul_nests", "float64 matrix products become blocked register-tiled Matmuls, each sum still serial over k",
                 [threads](const Kernel& k) { return matmul_nests(k, threads); }});
  }
  if (o.inline_maps)
    p.push_back({"inline_maps", "elementwise values are recomputed where they are read, not stored",
                 [reused = o.inline_reused](const Kernel& k) { return inline_maps(k, reused); }});
  p.push_back({"split_concat_reads", "a concatenation is read from its pieces by loops split at their boundaries, not copied",
               split_concat_reads});
  if (o.fuse) {
    p.push_back({"fuse_loops", "adjacent loops over the same rows become one loop", fuse_loops});
    p.push_back({"shrink_buffers", "a buffer used within one row becomes a per-row scratch", shrink_buffers});
  }
  // Before collapse_loops: the blocks need the nest's own loops (a
  // collapsed pair indexes the output as f / B, f % B).
  if (o.transpose_block >= 2) {
    const int w = o.transpose_block;
    p.push_back({"transpose_blocks", "an elementwise nest reading an operand across its rows reads it in register-transposed blocks",
                 [w](const Kernel& k) { return transpose_blocks(k, w); }});
  }
  p.push_back({"collapse_loops", "a short loop and the loop around it that walk memory as one axis become one loop",
               collapse_loops});
  p.push_back(cascade_pass(o.vectorize ? kCascadeBlock * std::max(1, o.sum_partials) : kCascadeBlock));
  const Pass interchange = {"interchange_sums",
                            "a sum over a strided axis accumulates in place, its loops outside the kept ones",
                            interchange_sums};
  const int threads = o.threads;
  const Pass parallel = {"parallelize", "the outermost loop of each large nest runs on threads",
                         [threads](const Kernel& k) { return parallelize(k, threads); }};
  if (threads > 1 && o.split_reductions) {
    // Per-lane sums first, so that a reduction over a strided axis is one
    // loop over rows of lanes that parallel_sums can cut into chunks.
    p.push_back(interchange);
    p.push_back(parallel);
    p.push_back({"parallel_sums", "a long reduction outside every parallel loop is split across threads",
                 [threads](const Kernel& k) { return parallel_sums(k, threads); }});
  } else if (threads > 1) {
    p.push_back(parallel);
    p.push_back(interchange);
  } else {
    p.push_back(interchange);
  }
  if (o.vectorize) {
    p.push_back({"vectorize", "innermost unit-stride loops become vector lanes", vectorize});
    p.push_back({"exp2_scaled", "the exp of a scaled value in a vector loop is a power of two, the scale times log2(e) hoisted",
                 exp2_scaled});
    p.push_back({"reciprocal_divisors", "a division by a value a vector loop does not vary becomes a product with its reciprocal",
                 reciprocal_divisors});
    if (o.prefetch_bytes > 0) {
      const int64_t ahead = o.prefetch_bytes;
      p.push_back({"prefetch_rows", "the first vector loop reading a row from memory prefetches ahead, non-temporal",
                   [ahead](const Kernel& k) { return prefetch_rows(k, ahead); }});
    }
    if (o.prefetch_pass > 0) {
      const int pass = o.prefetch_pass;
      p.push_back({"prefetch_next_rows", "a later vector loop of each row fetches the next row's inputs",
                   [pass](const Kernel& k) { return prefetch_next_rows(k, pass); }});
    }
    if (o.stream_stores)
      p.push_back({"stream_stores", "outputs written lane by lane in vector loops are stored past the caches", stream_stores});
  } else if (o.exact_lanes) {
    p.push_back({"vectorize_exact", "innermost loops whose lanes compute the serial values become vector lanes",
                 vectorize_exact});
  }
  if (o.threads > 1 && o.chunk > 0) {
    const int64_t chunk = o.chunk;
    p.push_back({"parallel_chunks", "each outermost parallel loop deals its iterations to the threads " + std::to_string(chunk) + " at a time",
                 [chunk](const Kernel& k) { return parallel_chunks(k, chunk); }});
  }
  return p;
}

std::vector<Pass> pipeline_named(const std::string& name) {
  if (name == "naive") return naive_pipeline();
  if (name == "loops") return loops_pipeline(LoopsOptions{});
  throw Diagnostic(SourceLoc{}, "unknown pipeline '" + name + "' (naive, loops)");
}

std::vector<Stage> run_pipeline(const ir::Graph& g, const std::vector<Pass>& passes, const std::string& name) {
  std::vector<Stage> out;
  out.push_back({"lower", lower_graph(g, name)});
  check(out.back().kernel, "lower");
  for (const Pass& p : passes) {
    Kernel next = p.run(out.back().kernel);
    check(next, p.name);
    out.push_back({p.name, std::move(next)});
  }
  return out;
}

Kernel lower_with(const ir::Graph& g, const std::vector<Pass>& passes, const std::string& name) {
  return std::move(run_pipeline(g, passes, name).back().kernel);
}

}  // namespace axon::tile
