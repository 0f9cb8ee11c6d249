#include "tile/passes/mark_loops.h"

#include "tile/verify.h"

namespace axon::tile {

int64_t points(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::Seq: {
      int64_t n = 0;
      for (const Stmt& c : s->body) n += points(c);
      return n;
    }
    case StmtKind::For: {
      std::optional<Interval> e = bounds(s->extent, {});
      int64_t ext = e ? e->hi : 1;
      return ext * points(s->body.at(0));
    }
    case StmtKind::Comment:
    case StmtKind::Alloc:
    case StmtKind::Free: return 0;
    default: return 1;
  }
}

namespace {

// The path of child positions from the body to each chosen loop.
void find(const Stmt& s, int depth, std::vector<int>& path, std::vector<std::vector<int>>& out,
          const std::function<bool(const Stmt&, int)>& choose) {
  if (s.kind() == StmtKind::For && choose(s, depth)) out.push_back(path);
  if (s.kind() != StmtKind::Seq && s.kind() != StmtKind::For) return;
  for (size_t i = 0; i < s->body.size(); ++i) {
    path.push_back(static_cast<int>(i));
    find(s->body[i], s.kind() == StmtKind::For ? depth + 1 : depth, path, out, choose);
    path.pop_back();
  }
}

Stmt set_kind(const Stmt& s, const std::vector<int>& path, size_t at, LoopKind kind, int threads) {
  if (at == path.size())
    return s.with([&](StmtNode& n) {
      n.loop = kind;
      n.threads = threads;
    });
  return s.with([&](StmtNode& n) { n.body[path[at]] = set_kind(n.body[path[at]], path, at + 1, kind, threads); });
}

}  // namespace

Kernel mark_loops(const Kernel& k, LoopKind kind, int threads, const std::function<bool(const Stmt&, int)>& choose) {
  std::vector<std::vector<int>> paths;
  std::vector<int> path;
  find(k.body, 0, path, paths, choose);
  Kernel out = k;
  size_t problems = verify(out).size();
  for (const std::vector<int>& p : paths) {
    Kernel trial = out;
    trial.body = set_kind(out.body, p, 0, kind, threads);
    if (verify(trial).size() <= problems) out = std::move(trial);
  }
  return out;
}

}  // namespace axon::tile
