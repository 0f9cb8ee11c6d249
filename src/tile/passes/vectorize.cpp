#include "tile/passes/vectorize.h"

#include "tile/passes/mark_loops.h"

namespace axon::tile {

namespace {

bool has_loop(const Stmt& s) {
  bool found = false;
  for (const Stmt& c : s->body) visit(c, [&](const Stmt& x) { found |= x.kind() == StmtKind::For; });
  return found;
}

}  // namespace

Kernel vectorize(const Kernel& k) {
  return mark_loops(k, LoopKind::Vectorized, 0, [](const Stmt& f, int) {
    return f->loop == LoopKind::Serial && f->extent.is_const() && f->extent.value() >= 4 && !has_loop(f);
  });
}

}  // namespace axon::tile
