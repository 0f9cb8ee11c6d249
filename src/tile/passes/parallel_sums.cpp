#include "tile/passes/parallel_sums.h"

#include <set>

#include "tile/passes/mark_loops.h"
#include "tile/passes/parallelize.h"

namespace axon::tile {

namespace {

// The scalar Register every write of `loop` outside its own allocations
// sums into, or -1.
int sole_sum_target(const Kernel& k, const Stmt& loop) {
  std::set<int> inside;
  int target = -1;
  bool ok = true;
  visit(loop, [&](const Stmt& s) {
    if (s.kind() == StmtKind::Alloc) inside.insert(s->buffer);
    if (s.kind() == StmtKind::For && s->loop == LoopKind::Parallel) ok = false;
  });
  visit(loop, [&](const Stmt& s) {
    if (s.kind() == StmtKind::Matmul || s.kind() == StmtKind::Copy) {
      if (!inside.count(s->c.buffer)) ok = false;
      return;
    }
    if (s.kind() != StmtKind::Store && s.kind() != StmtKind::Accumulate && s.kind() != StmtKind::Rescale) return;
    if (inside.count(s->buffer)) return;
    const Buffer& b = k.buffers[s->buffer];
    bool sum = s.kind() == StmtKind::Accumulate && s->combine == ir::Combine::Sum && b.scope == Scope::Register &&
               b.shape.empty() && !s->value.uses_buffer(s->buffer);
    if (!sum || (target >= 0 && target != s->buffer)) ok = false;
    target = s->buffer;
  });
  return ok ? target : -1;
}

class Splitter {
 public:
  Splitter(Kernel* k, int threads) : k_(*k), threads_(threads), names_(*k) {}

  Stmt run(const Stmt& s) {
    if (s.kind() == StmtKind::For) {
      if (s->loop != LoopKind::Serial) return s;  // already divided, or lanes
      std::optional<Interval> e = bounds(s->extent, {});
      if (e && s->extent.is_const() && e->hi >= 2 && points(s) >= kParallelMinPoints) {
        int acc = sole_sum_target(k_, s);
        if (acc >= 0) return split(s, acc);
      }
    }
    if (s.kind() != StmtKind::Seq && s.kind() != StmtKind::For) return s;
    std::vector<Stmt> body;
    for (const Stmt& c : s->body) body.push_back(run(c));
    if (s.kind() == StmtKind::Seq) return Stmt::seq(std::move(body));
    return s.with([&](StmtNode& n) { n.body = std::move(body); });
  }

 private:
  Stmt split(const Stmt& loop, int acc) {
    const int64_t n = loop->extent.value();
    const ir::DType d = k_.buffers[acc].dtype;
    Buffer parts;
    parts.name = names_.take("t", "_1");
    parts.dtype = d;
    parts.shape = {n};
    parts.scope = Scope::Memory;
    const int pb = k_.add_buffer(parts);
    Buffer p;
    p.name = names_.take("acc", "_1");
    p.dtype = d;
    p.scope = Scope::Register;
    const int pr = k_.add_buffer(p);
    const Index v = Index::var(loop->var);
    Stmt inner = rewrite(loop->body.at(0), [&](const Stmt& s) {
      if (s.kind() == StmtKind::Accumulate && s->buffer == acc) return s.with([&](StmtNode& x) { x.buffer = pr; });
      return s;
    });
    Stmt body = Stmt::seq({Stmt::alloc(pr), Stmt::store(pr, {}, Value::constant(0.0, d)), inner,
                           Stmt::store(pb, {v}, Value::load(pr, {}, d))});
    Stmt par = Stmt::loop(loop->var, loop->extent, LoopKind::Parallel, body, threads_);
    Stmt fold = Stmt::loop(loop->var, loop->extent, LoopKind::Serial,
                           Stmt::accumulate(acc, {}, ir::Combine::Sum, Value::load(pb, {v}, d)));
    // A scope of its own, so that `parts` ends with it.
    return Stmt::seq({Stmt::alloc(pb), par, fold});
  }

  Kernel& k_;
  int threads_;
  NameSource names_;
};

}  // namespace

Kernel parallel_sums(const Kernel& k, int threads) {
  if (threads <= 1) return k;
  Kernel out = k;
  Splitter s(&out, threads);
  // Only loops outside every parallel nest: top-level statements whose nest
  // parallelize would not take (a top-level loop whose iterations write
  // disjoint slices is left to it).
  std::vector<Stmt> top = out.body.kind() == StmtKind::Seq ? out.body->body : std::vector<Stmt>{out.body};
  std::vector<Stmt> next;
  for (const Stmt& t : top) next.push_back(t.kind() == StmtKind::Seq ? s.run(t) : t);
  out.body = Stmt::seq(std::move(next));
  return out;
}

}  // namespace axon::tile
