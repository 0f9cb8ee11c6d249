#include "tile/passes/collapse_loops.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

// The one loop a statement is, or holds as its only item.
std::optional<Stmt> only_loop(const Stmt& s) {
  if (s.kind() == StmtKind::For) return s;
  if (s.kind() == StmtKind::Seq && s->body.size() == 1) return only_loop(s->body[0]);
  return std::nullopt;
}

// Whether `v` occurs in `s` other than in the indices of element accesses:
// in a loop extent, a view's offset, a matmul's sizes, a prefetch's reach or
// an index value (Value::index_of).
bool used_beyond_accesses(const Stmt& s, const std::string& v) {
  bool used = false;
  auto in_value = [&](const Value& x) {
    if (!x.defined()) return;
    // Loads replaced by a constant: what still uses v is an index value.
    const Value rest = x.replace_loads([](const Value& l) { return Value::constant(0, l.dtype()); });
    used = used || rest.uses(v);
  };
  visit(s, [&](const Stmt& x) {
    const StmtNode& n = x.node();
    in_value(n.value);
    in_value(n.alpha);
    if (x.kind() == StmtKind::For) used = used || n.extent.uses(v);
    if (x.kind() == StmtKind::Matmul || x.kind() == StmtKind::Copy)
      for (const View* w : {&n.c, &n.a, &n.b, &n.next}) used = used || w->offset.uses(v);
    if (x.kind() == StmtKind::Matmul)
      used = used || n.m.uses(v) || n.n.uses(v) || n.k.uses(v) || n.keep.uses(v);
  });
  return used;
}

class Collapser {
 public:
  explicit Collapser(const Kernel& k) : k_(k) {
    visit(k.body, [&](const Stmt& s) {
      if (s.kind() == StmtKind::For) names_.insert(s->var);
    });
  }

  Stmt run(const Stmt& s, bool inside_loop) {
    if (s.kind() == StmtKind::Seq) {
      std::vector<Stmt> items;
      for (const Stmt& c : s->body) items.push_back(run(c, inside_loop));
      return s.with([&](StmtNode& n) { n.body = std::move(items); });
    }
    if (s.kind() != StmtKind::For) return s;
    const Stmt inner = run(s->body.at(0), true);
    const Stmt a = s.with([&](StmtNode& n) { n.body = {inner}; });
    if (!inside_loop) return a;
    std::optional<Stmt> collapsed = collapse(a);
    return collapsed ? *collapsed : a;
  }

 private:
  std::optional<Stmt> collapse(const Stmt& a) {
    std::optional<Stmt> b = only_loop(a->body.at(0));
    if (!b || a->loop != LoopKind::Serial || (*b)->loop != LoopKind::Serial) return std::nullopt;
    if (!a->extent.is_const() || !(*b)->extent.is_const()) return std::nullopt;
    const int64_t A = a->extent.value(), B = (*b)->extent.value();
    if (B >= kCollapseBelow || A < 2 || B < 2) return std::nullopt;
    const std::string& av = a->var;
    const std::string& bv = (*b)->var;
    const Stmt body = (*b)->body.at(0);
    // b innermost: a nest around a loop of its own (a sum over a strided
    // axis, per kept element) is interchange_sums' to reorder.
    bool inner_loop = false;
    visit(body, [&](const Stmt& x) { inner_loop = inner_loop || x.kind() == StmtKind::For; });
    if (inner_loop) return std::nullopt;
    if (used_beyond_accesses(body, av) || used_beyond_accesses(body, bv)) return std::nullopt;
    const std::string f = fresh(av + bv);
    const Index q = Index::var(f) / Index(B), r = Index::var(f) % Index(B);
    const Stmt next = substitute_var(substitute_var(body, bv, r), av, q);
    for (const Access& x : accesses(next)) {
      if (x.view) continue;
      bool uses = false;
      for (const Index& i : x.idx) uses = uses || i.uses(f);
      if (uses && !as_affine(flat_index(k_.buffers.at(static_cast<size_t>(x.buffer)).shape, x.idx)))
        return std::nullopt;
    }
    names_.insert(f);
    return Stmt::loop(f, Index(A * B), LoopKind::Serial, next);
  }

  std::string fresh(const std::string& base) const {
    std::string name = base;
    for (int i = 1; names_.count(name); ++i) name = base + "_" + std::to_string(i);
    return name;
  }

  const Kernel& k_;
  std::set<std::string> names_;
};

}  // namespace

Kernel collapse_loops(const Kernel& k) {
  Kernel out = k;
  out.body = Collapser(k).run(k.body, false);
  return out;
}

}  // namespace axon::tile
