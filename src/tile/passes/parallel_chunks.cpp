#include "tile/passes/parallel_chunks.h"

namespace axon::tile {

namespace {

Stmt deal(const Stmt& s, int64_t chunk) {
  switch (s.kind()) {
    case StmtKind::Seq: {
      std::vector<Stmt> body;
      for (const Stmt& c : s->body) body.push_back(deal(c, chunk));
      return s.with([&](StmtNode& n) { n.body = std::move(body); });
    }
    case StmtKind::For:
      if (s->loop == LoopKind::Parallel) return s.with([&](StmtNode& n) { n.chunk = chunk; });
      return s.with([&](StmtNode& n) { n.body = {deal(n.body.at(0), chunk)}; });
    default: return s;
  }
}

}  // namespace

Kernel parallel_chunks(const Kernel& k, int64_t chunk) {
  if (chunk <= 0) return k;
  Kernel out = k;
  out.body = deal(k.body, chunk);
  return out;
}

}  // namespace axon::tile
