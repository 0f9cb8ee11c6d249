#include "tile/passes/vectorize.h"

#include "tile/passes/mark_loops.h"

namespace axon::tile {

namespace {

bool has_loop(const Stmt& s) {
  bool found = false;
  for (const Stmt& c : s->body) visit(c, [&](const Stmt& x) { found |= x.kind() == StmtKind::For; });
  return found;
}

bool narrowing_cast(const Value& v) {
  if (!v.defined()) return false;
  if (v.kind() == ValueKind::Apply) {
    const ir::Node& n = v.op();
    if (n.op == ir::Op::Cast && ir::is_float(n.type.dtype) && n.type.dtype != ir::DType::F64) return true;
    for (const Value& a : v.args())
      if (narrowing_cast(a)) return true;
  }
  return false;
}

// Whether every lane of `f` computes exactly what its serial iteration does.
bool exact_lanes(const Kernel& k, const Stmt& f) {
  bool exact = true;
  visit(f, [&](const Stmt& s) {
    if (s.kind() == StmtKind::Accumulate && k.buffers[s->buffer].scope == Scope::Register) exact = false;
    if (narrowing_cast(s->value) || narrowing_cast(s->alpha)) exact = false;
    if (s.kind() != StmtKind::For && s.kind() != StmtKind::Seq && s.kind() != StmtKind::Store &&
        s.kind() != StmtKind::Accumulate && s.kind() != StmtKind::Comment)
      exact = false;
  });
  return exact;
}

}  // namespace

Kernel vectorize_exact(const Kernel& k) {
  return mark_loops(k, LoopKind::Vectorized, 0, [&k](const Stmt& f, int) {
    return f->loop == LoopKind::Serial && f->extent.is_const() && f->extent.value() >= 4 && !has_loop(f) &&
           exact_lanes(k, f);
  });
}

Kernel vectorize(const Kernel& k) {
  return mark_loops(k, LoopKind::Vectorized, 0, [](const Stmt& f, int) {
    return f->loop == LoopKind::Serial && f->extent.is_const() && f->extent.value() >= 4 && !has_loop(f);
  });
}

}  // namespace axon::tile
