#include "tile/passes/loop_access.h"

namespace axon::tile {

std::vector<Access> accesses(const Stmt& s) {
  std::vector<Access> out;
  visit(s, [&](const Stmt& x) {
    auto loads = [&](const Value& v) {
      if (v.defined()) v.visit_loads([&](const Value& l) { out.push_back({l.buffer(), l.idx(), false, false}); });
    };
    loads(x->value);
    loads(x->alpha);
    switch (x.kind()) {
      case StmtKind::Store:
      case StmtKind::Accumulate:
      case StmtKind::Rescale: out.push_back({x->buffer, x->idx, true, false}); break;
      case StmtKind::Prefetch: out.push_back({x->buffer, x->idx, false, false}); break;
      case StmtKind::Matmul:
        out.push_back({x->a.buffer, {}, false, true});
        out.push_back({x->b.buffer, {}, false, true});
        out.push_back({x->c.buffer, {}, true, true});
        break;
      case StmtKind::Copy:
        out.push_back({x->a.buffer, {}, false, true});
        out.push_back({x->c.buffer, {}, true, true});
        break;
      default: break;
    }
  });
  return out;
}

Stmt reindex(const Stmt& s, int b, const std::function<std::vector<Index>(const std::vector<Index>&)>& f) {
  auto value = [&](const Value& v) {
    if (!v.defined()) return v;
    return v.replace_loads([&](const Value& l) -> std::optional<Value> {
      if (l.buffer() != b) return std::nullopt;
      return Value::load(b, f(l.idx()), l.dtype());
    });
  };
  return rewrite(s, [&](const Stmt& x) {
    switch (x.kind()) {
      case StmtKind::Store:
      case StmtKind::Accumulate:
      case StmtKind::Rescale:
      case StmtKind::Prefetch:
        return x.with([&](StmtNode& n) {
          n.value = value(n.value);
          n.alpha = value(n.alpha);
          if (n.buffer == b) n.idx = f(n.idx);
        });
      default: return x;
    }
  });
}

Stmt rename_var(const Stmt& s, const std::string& from, const std::string& to) {
  auto f = [&](const std::string& v) -> std::optional<Index> {
    if (v == from) return Index::var(to);
    return std::nullopt;
  };
  auto value = [&](const Value& v) { return v.defined() ? v.substitute(f) : v; };
  auto idx = [&](std::vector<Index> ix) {
    for (Index& i : ix) i = i.substitute(f);
    return ix;
  };
  return rewrite(s, [&](const Stmt& x) {
    return x.with([&](StmtNode& n) {
      n.value = value(n.value);
      n.alpha = value(n.alpha);
      n.idx = idx(n.idx);
      n.extent = n.extent.substitute(f);
      n.c.offset = n.c.offset.substitute(f);
      n.a.offset = n.a.offset.substitute(f);
      n.b.offset = n.b.offset.substitute(f);
      n.next.offset = n.next.offset.substitute(f);
      n.m = n.m.substitute(f), n.n = n.n.substitute(f), n.k = n.k.substitute(f), n.keep = n.keep.substitute(f);
      if (n.kind == StmtKind::For && n.var == from) n.var = to;
    });
  });
}

Stmt substitute_var(const Stmt& s, const std::string& v, const Index& by) {
  auto f = [&](const std::string& x) -> std::optional<Index> {
    if (x == v) return by;
    return std::nullopt;
  };
  auto value = [&](const Value& x) { return x.defined() ? x.substitute(f) : x; };
  return rewrite(s, [&](const Stmt& x) {
    return x.with([&](StmtNode& n) {
      n.value = value(n.value);
      n.alpha = value(n.alpha);
      for (Index& i : n.idx) i = i.substitute(f);
      n.extent = n.extent.substitute(f);
      for (View* w : {&n.c, &n.a, &n.b, &n.next}) w->offset = w->offset.substitute(f);
      n.m = n.m.substitute(f), n.n = n.n.substitute(f), n.k = n.k.substitute(f), n.keep = n.keep.substitute(f);
    });
  });
}

std::vector<Stmt> statements(const Stmt& s) {
  std::vector<Stmt> out;
  if (s.kind() != StmtKind::Seq) return {s};
  for (const Stmt& x : s->body)
    if (x.kind() != StmtKind::Comment) out.push_back(x);
  return out;
}

bool serial_const_loop(const Stmt& s) {
  return s.kind() == StmtKind::For && s->loop == LoopKind::Serial && s->extent.is_const() && s->body.size() == 1;
}

Stmt map_top_level(const Stmt& body, const std::function<Stmt(const Stmt&)>& f) {
  if (body.kind() != StmtKind::Seq) return f(body);
  std::vector<Stmt> items;
  for (const Stmt& s : body->body) items.push_back(f(s));
  return body.with([&](StmtNode& n) { n.body = std::move(items); });
}

}  // namespace axon::tile
