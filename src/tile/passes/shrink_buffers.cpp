#include "tile/passes/shrink_buffers.h"

#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

bool shrink_one(Kernel& k) {
  if (k.body.kind() != StmtKind::Seq) return false;
  const std::vector<Stmt>& top = k.body->body;
  for (size_t t = 0; t < k.buffers.size(); ++t) {
    const int tb = static_cast<int>(t);
    const Buffer& buf = k.buffers[t];
    if (buf.scope != Scope::Memory || buf.shape.empty()) continue;
    // A scalar left over lives in a Register, which holds the compute type:
    // an f16 or bf16 value would lose its rounding at the store.
    if (buf.shape.size() == 1 && (buf.dtype == ir::DType::F16 || buf.dtype == ir::DType::BF16)) continue;
    // Exactly one top-level loop touches it; the rest is its Alloc and Free.
    int loop = -1;
    bool ok = true;
    for (size_t i = 0; i < top.size() && ok; ++i) {
      const Stmt& s = top[i];
      if ((s.kind() == StmtKind::Alloc || s.kind() == StmtKind::Free) && s->buffer == tb) continue;
      bool touches = false;
      for (const Access& a : accesses(s)) touches |= a.buffer == tb;
      if (!touches) continue;
      if (loop >= 0 || s.kind() != StmtKind::For || !s->extent.is_const() || s->extent.value() != buf.shape[0]) ok = false;
      loop = static_cast<int>(i);
    }
    if (!ok || loop < 0) continue;
    const Stmt& l = top[static_cast<size_t>(loop)];
    for (const Access& a : accesses(l))
      if (a.buffer == tb && (a.view || a.idx.empty() || a.idx[0].kind() != IndexKind::Var || a.idx[0].name() != l->var))
        ok = false;
    if (!ok) continue;
    // The per-iteration buffer.
    Buffer row = buf;
    row.shape.erase(row.shape.begin());
    row.scope = row.shape.empty() ? Scope::Register : Scope::Scratch;
    k.buffers[t] = row;
    Stmt body = reindex(l->body.at(0), tb, [](const std::vector<Index>& idx) {
      return std::vector<Index>(idx.begin() + 1, idx.end());
    });
    std::vector<Stmt> items = {Stmt::alloc(tb)};
    if (body.kind() == StmtKind::Seq) items.insert(items.end(), body->body.begin(), body->body.end());
    else items.push_back(body);
    Stmt shrunk = l.with([&](StmtNode& n) { n.body = {Stmt::seq(std::move(items))}; });
    std::vector<Stmt> next;
    for (size_t i = 0; i < top.size(); ++i) {
      if ((top[i].kind() == StmtKind::Alloc || top[i].kind() == StmtKind::Free) && top[i]->buffer == tb) continue;
      next.push_back(static_cast<int>(i) == loop ? shrunk : top[i]);
    }
    k.body = Stmt::seq(std::move(next));
    return true;
  }
  return false;
}

}  // namespace

Kernel shrink_buffers(const Kernel& k) {
  Kernel out = k;
  while (shrink_one(out)) {
  }
  return out;
}

}  // namespace axon::tile
