#include "tile/passes/parallelize.h"

#include "tile/passes/mark_loops.h"

namespace axon::tile {

Kernel parallelize(const Kernel& k, int threads) {
  if (threads <= 1) return k;
  return mark_loops(k, LoopKind::Parallel, threads, [](const Stmt& f, int depth) {
    if (depth != 0 || f->loop != LoopKind::Serial) return false;
    std::optional<Interval> e = bounds(f->extent, {});
    return e && e->hi >= 2 && points(f) >= kParallelMinPoints;
  });
}

}  // namespace axon::tile
