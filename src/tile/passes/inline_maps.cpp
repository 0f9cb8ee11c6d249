#include "tile/passes/inline_maps.h"

#include <map>
#include <set>

#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

// A producer: the top-level statement at `pos` computes T[v...] = expr.
struct Producer {
  size_t pos = 0;
  std::vector<std::string> vars;  // per dimension of T; "" for a unit dimension
  Value expr;
};

std::optional<Producer> producer_of(const Kernel& k, int t, const std::vector<Stmt>& top) {
  std::optional<Producer> found;
  int writers = 0;
  for (size_t i = 0; i < top.size(); ++i) {
    for (int w : written_buffers(top[i]))
      if (w == t) ++writers;
    if (writers > 1) return std::nullopt;
    if (found || top[i].kind() != StmtKind::For) continue;
    // A perfect nest of serial loops ending in a Store to t.
    std::vector<std::pair<std::string, int64_t>> loops;
    Stmt cur = top[i];
    while (cur.kind() == StmtKind::For && cur->loop == LoopKind::Serial && cur->extent.is_const()) {
      loops.push_back({cur->var, cur->extent.value()});
      cur = cur->body.at(0);
    }
    if (cur.kind() != StmtKind::Store || cur->buffer != t || cur->streaming) continue;
    const ir::Shape& shape = k.buffers[t].shape;
    if (cur->idx.size() != shape.size()) continue;
    Producer p;
    p.pos = i;
    std::set<std::string> seen;
    bool exact = true;
    for (size_t d = 0; d < shape.size(); ++d) {
      const Index& ix = cur->idx[d];
      if (ix.is_const() && ix.value() == 0 && shape[d] == 1) {
        p.vars.push_back("");
        continue;
      }
      bool ok = ix.kind() == IndexKind::Var && !seen.count(ix.name());
      if (ok) {
        ok = false;
        for (auto& [v, e] : loops) ok |= v == ix.name() && e == shape[d];
      }
      if (!ok) {
        exact = false;
        break;
      }
      seen.insert(ix.name());
      p.vars.push_back(ix.name());
    }
    if (!exact || seen.size() != loops.size() || cur->value.uses_buffer(t)) continue;
    p.expr = cur->value;
    found = p;
  }
  if (writers != 1) return std::nullopt;
  return found;
}

// How t is read: by Loads only? how many Load sites, and the most
// iterations one reading statement runs.
struct Reads {
  bool only_loads = true;
  int sites = 0;
  int statements = 0;
  int64_t most_points = 0;
};

void count_reads(const Stmt& s, int t, int64_t outer, Reads* r) {
  switch (s.kind()) {
    case StmtKind::Seq:
      for (const Stmt& c : s->body) count_reads(c, t, outer, r);
      return;
    case StmtKind::For: {
      std::optional<Interval> e = bounds(s->extent, {});
      count_reads(s->body.at(0), t, outer * (e ? e->hi : 1), r);
      return;
    }
    case StmtKind::Matmul:
    case StmtKind::Copy:
      if (s->a.buffer == t || s->b.buffer == t) r->only_loads = false;
      return;
    default: break;
  }
  int here = 0;
  auto count = [&](const Value& v) {
    if (v.defined()) v.visit_loads([&](const Value& l) { here += l.buffer() == t; });
  };
  count(s->value);
  count(s->alpha);
  if (here > 0) {
    r->sites += here;
    ++r->statements;
    r->most_points = std::max(r->most_points, outer);
  }
}

Value substitute_loads(const Value& v, int t, const Producer& p) {
  return v.replace_loads([&](const Value& l) -> std::optional<Value> {
    if (l.buffer() != t) return std::nullopt;
    std::map<std::string, Index> at;
    for (size_t d = 0; d < p.vars.size(); ++d)
      if (!p.vars[d].empty()) at[p.vars[d]] = l.idx()[d];
    return p.expr.substitute([&](const std::string& name) -> std::optional<Index> {
      auto it = at.find(name);
      return it == at.end() ? std::nullopt : std::optional<Index>(it->second);
    });
  });
}

Stmt replace_in(const Stmt& s, int t, const Producer& p) {
  return rewrite(s, [&](const Stmt& x) {
    switch (x.kind()) {
      case StmtKind::Store:
      case StmtKind::Accumulate:
        return x.with([&](StmtNode& n) { n.value = substitute_loads(n.value, t, p); });
      case StmtKind::Rescale:
        return x.with([&](StmtNode& n) {
          n.value = substitute_loads(n.value, t, p);
          n.alpha = substitute_loads(n.alpha, t, p);
        });
      default: return x;
    }
  });
}

// Drops the top-level Frees and puts each after its buffer's last use.
std::vector<Stmt> place_frees(const Kernel& k, std::vector<Stmt> top) {
  std::vector<Stmt> body;
  for (Stmt& s : top)
    if (s.kind() != StmtKind::Free) body.push_back(std::move(s));
  std::map<int, size_t> last;
  for (size_t i = 0; i < body.size(); ++i)
    for (const Access& a : accesses(body[i])) last[a.buffer] = i;
  std::vector<Stmt> out;
  std::set<int> allocated;
  for (size_t i = 0; i < body.size(); ++i) {
    out.push_back(body[i]);
    if (body[i].kind() == StmtKind::Alloc && k.buffers[body[i]->buffer].scope == Scope::Memory)
      allocated.insert(body[i]->buffer);
    for (auto it = allocated.begin(); it != allocated.end();) {
      auto l = last.find(*it);
      if ((l == last.end() && body[i].kind() == StmtKind::Alloc && body[i]->buffer == *it) ||
          (l != last.end() && l->second == i)) {
        out.push_back(Stmt::free(*it));
        it = allocated.erase(it);
      } else {
        ++it;
      }
    }
  }
  return out;
}

bool inline_one(Kernel& k, bool reused) {
  std::vector<Stmt> top = k.body.kind() == StmtKind::Seq ? k.body->body : std::vector<Stmt>{k.body};
  for (size_t t = 0; t < k.buffers.size(); ++t) {
    const int tb = static_cast<int>(t);
    if (k.buffers[t].scope != Scope::Memory) continue;
    std::optional<Producer> p = producer_of(k, tb, top);
    if (!p) continue;
    Reads r;
    for (size_t i = 0; i < top.size(); ++i)
      if (i != p->pos) count_reads(top[i], tb, 1, &r);
    if (!r.only_loads || r.sites == 0) continue;
    const bool cheap = p->expr.expensive_ops() == 0;
    const bool once = r.sites == 1 && r.statements == 1 && r.most_points <= k.buffers[t].numel();
    if (!cheap && !once) continue;
    if (!reused && r.most_points > k.buffers[t].numel()) continue;
    std::vector<Stmt> next;
    for (size_t i = 0; i < top.size(); ++i) {
      if (i == p->pos) continue;
      const Stmt& s = top[i];
      if ((s.kind() == StmtKind::Alloc || s.kind() == StmtKind::Free) && s->buffer == tb) continue;
      // The producer's comment line stays: it says what the inlined value is.
      next.push_back(replace_in(s, tb, *p));
    }
    k.body = Stmt::seq(place_frees(k, std::move(next)));
    return true;
  }
  return false;
}

}  // namespace

Kernel inline_maps(const Kernel& k, bool reused) {
  Kernel out = k;
  while (inline_one(out, reused)) {
  }
  return out;
}

}  // namespace axon::tile
