#include "tile/passes/stream_stores.h"

#include <string>

namespace axon::tile {

namespace {

// Whether buffer b's flat offset at idx moves by exactly 1 with `var`.
bool unit_stride(const Buffer& b, const std::vector<Index>& idx, const std::string& var) {
  std::optional<Affine> a = as_affine(flat_index(b.shape, idx));
  if (!a) return false;
  auto it = a->coef.find(var);
  return it != a->coef.end() && it->second == 1;
}

// `s` with its qualifying Stores streaming; `lane` is the variable of the
// innermost Vectorized loop around it ("" outside one).
Stmt mark(const Kernel& k, const Stmt& s, const std::string& lane) {
  switch (s.kind()) {
    case StmtKind::Seq: {
      std::vector<Stmt> body;
      for (const Stmt& c : s->body) body.push_back(mark(k, c, lane));
      return s.with([&](StmtNode& n) { n.body = std::move(body); });
    }
    case StmtKind::For: {
      Stmt body = mark(k, s->body.at(0), s->loop == LoopKind::Vectorized ? s->var : lane);
      return s.with([&](StmtNode& n) { n.body = {body}; });
    }
    case StmtKind::Store: {
      const Buffer& b = k.buffers[static_cast<size_t>(s->buffer)];
      if (lane.empty() || s->streaming || b.scope != Scope::Output || b.dtype != ir::DType::F32 ||
          !unit_stride(b, s->idx, lane))
        return s;
      return s.with([](StmtNode& n) { n.streaming = true; });
    }
    default: return s;
  }
}

}  // namespace

Kernel stream_stores(const Kernel& k) {
  Kernel out = k;
  out.body = mark(k, k.body, "");
  return out;
}

}  // namespace axon::tile
