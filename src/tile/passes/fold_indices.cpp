#include "tile/passes/fold_indices.h"

#include <map>
#include <set>

namespace axon::tile {

namespace {

class Folder {
 public:
  Stmt run(const Stmt& s) {
    const StmtNode& n = s.node();
    switch (n.kind) {
      case StmtKind::Seq: {
        std::vector<Stmt> body;
        for (const Stmt& c : n.body) body.push_back(run(c));
        return s.with([&](StmtNode& m) { m.body = std::move(body); });
      }
      case StmtKind::For: {
        const Index extent = fold(n.extent);
        if (extent.is_const() && extent.value() <= 0) return Stmt::seq({});
        // Only a loop that runs exactly once gives its variable a value: a
        // loop that runs at most once keeps it, since its extent (0 at some
        // edge) is what bounds the indices that use it.
        const bool once = extent.is_const() && extent.value() == 1;
        std::optional<Interval> e = bounds(extent, ranges_);
        ranges_[n.var] = Interval{0, e ? std::max<int64_t>(e->hi - 1, 0) : 0};
        if (once) points_.insert(n.var);
        Stmt body = run(n.body.at(0));
        ranges_.erase(n.var);
        points_.erase(n.var);
        if (once) return body;
        return s.with([&](StmtNode& m) {
          m.extent = extent;
          m.body = {body};
        });
      }
      case StmtKind::Store:
      case StmtKind::Accumulate:
      case StmtKind::Rescale:
      case StmtKind::Prefetch:
        return s.with([&](StmtNode& m) {
          for (Index& i : m.idx) i = fold(i);
          if (m.value.defined()) m.value = value(m.value);
          if (m.alpha.defined()) m.alpha = value(m.alpha);
        });
      case StmtKind::Matmul:
      case StmtKind::Copy:
        return s.with([&](StmtNode& m) {
          for (View* v : {&m.c, &m.a, &m.b, &m.next})
            if (v->buffer >= 0) v->offset = fold(v->offset);
          m.m = fold(m.m), m.n = fold(m.n), m.k = fold(m.k), m.keep = fold(m.keep);
        });
      default: return s;
    }
  }

 private:
  Index fold(const Index& e) const {
    switch (e.kind()) {
      case IndexKind::Const: return e;
      case IndexKind::Var: return points_.count(e.name()) ? Index(int64_t{0}) : e;
      default: break;
    }
    const Index a = fold(e.a()), b = fold(e.b());
    switch (e.kind()) {
      case IndexKind::Add: return a + b;
      case IndexKind::Mul: return a * b;
      case IndexKind::Div: return simplify(a / b, ranges_);
      case IndexKind::Mod: return simplify(a % b, ranges_);
      case IndexKind::Min: {
        std::optional<Interval> ra = bounds(a, ranges_), rb = bounds(b, ranges_);
        if (ra && rb && ra->hi <= rb->lo) return a;
        if (ra && rb && rb->hi <= ra->lo) return b;
        return min(a, b);
      }
      default: return e;
    }
  }

  Value value(const Value& v) const {
    const Value w = v.substitute([&](const std::string& name) -> std::optional<Index> {
      if (points_.count(name)) return Index(int64_t{0});
      return std::nullopt;
    });
    return w.map_indices([&](const Index& i) { return fold(i); });
  }

  std::map<std::string, Interval> ranges_;
  std::set<std::string> points_;  // variables of loops that ran once (removed): 0
};

}  // namespace

Kernel fold_indices(const Kernel& k) {
  Kernel out = k;
  out.body = Folder().run(k.body);
  return out;
}

}  // namespace axon::tile
