#include "tile/passes/prefetch_rows.h"

#include <set>

#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

class Prefetcher {
 public:
  Prefetcher(const Kernel& k, int64_t ahead) : k_(k), ahead_(ahead) {}
  // The variable of the top-level loop being rewritten (the rows).
  std::string row;

  // The first vector loop in `s` reading an Input at unit stride, with its
  // prefetches; `done` once one is found.
  Stmt first_memory_loop(const Stmt& s, bool* done) {
    if (*done) return s;
    if (s.kind() == StmtKind::Seq) {
      std::vector<Stmt> body;
      for (const Stmt& c : s->body) body.push_back(first_memory_loop(c, done));
      return s.with([&](StmtNode& n) { n.body = std::move(body); });
    }
    if (s.kind() != StmtKind::For) return s;
    if (s->loop != LoopKind::Vectorized) {
      Stmt body = first_memory_loop(s->body.at(0), done);
      return s.with([&](StmtNode& n) { n.body = {body}; });
    }
    std::vector<Stmt> fetches;
    std::set<int> seen;
    visit(s->body.at(0), [&](const Stmt& x) {
      for (const Value* v : {&x->value, &x->alpha}) {
        if (!v->defined()) continue;
        v->visit_loads([&](const Value& l) {
          const Buffer& b = k_.buffers[l.buffer()];
          if (b.scope != Scope::Input || seen.count(l.buffer()) || !unit_stride(b, l.idx(), s->var) ||
              !flat_index(b.shape, l.idx()).uses(row))
            return;
          seen.insert(l.buffer());
          fetches.push_back(Stmt::prefetch(l.buffer(), l.idx(), ahead_));
        });
      }
    });
    if (fetches.empty()) return s;
    *done = true;
    std::vector<Stmt> body = {s->body.at(0)};
    if (body[0].kind() == StmtKind::Seq) body = body[0]->body;
    body.insert(body.end(), fetches.begin(), fetches.end());
    return s.with([&](StmtNode& n) { n.body = {Stmt::seq(std::move(body))}; });
  }

 private:
  static bool unit_stride(const Buffer& b, const std::vector<Index>& idx, const std::string& var) {
    std::optional<Affine> a = as_affine(flat_index(b.shape, idx));
    if (!a) return false;
    auto it = a->coef.find(var);
    return it != a->coef.end() && it->second == 1;
  }

  const Kernel& k_;
  int64_t ahead_;
};

}  // namespace

Kernel prefetch_rows(const Kernel& k, int64_t ahead) {
  if (ahead <= 0) return k;
  Kernel out = k;
  Prefetcher p(k, ahead);
  auto top = [&](const Stmt& s) {
    if (s.kind() != StmtKind::For) return s;
    bool done = false;
    p.row = s->var;
    Stmt body = p.first_memory_loop(s->body.at(0), &done);
    return s.with([&](StmtNode& n) { n.body = {body}; });
  };
  out.body = map_top_level(k.body, top);
  return out;
}

}  // namespace axon::tile
