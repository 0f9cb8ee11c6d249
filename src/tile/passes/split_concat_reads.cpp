#include "tile/passes/split_concat_reads.h"

#include <algorithm>
#include <map>
#include <optional>

#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

// One copy nest of a concatenation: T[o] = concat(v) inside loops over `vars`.
struct Piece {
  size_t top = 0;            // its position among the top-level statements
  std::vector<std::string> dim_var;  // per dimension of T: the loop variable, or "" for a unit axis
  int64_t offset = 0, extent = 0;    // along the concatenated axis
  Value value;                       // concat(v), in the nest's variables
};

// The piece a top-level statement is, when it is a concat copy nest of `t`
// along `ax`.
std::optional<Piece> as_piece(const Stmt& s, int t, const Buffer& buf, int ax) {
  std::map<std::string, int64_t> extents;
  Stmt x = s;
  while (x.kind() == StmtKind::For) {
    if (x->loop != LoopKind::Serial || !x->extent.is_const() || extents.count(x->var)) return std::nullopt;
    extents[x->var] = x->extent.value();
    x = x->body.at(0);
  }
  if (x.kind() != StmtKind::Store || x->buffer != t || x->streaming) return std::nullopt;
  const Value& v = x->value;
  if (v.kind() != ValueKind::Apply || v.op().op != ir::Op::Concat || v.args().size() != 1 ||
      v.op().attrs.ints.empty() || v.op().attrs.ints[0] != ax)
    return std::nullopt;
  Piece p;
  p.value = v;
  const std::vector<Index>& o = x->idx;
  if (o.size() != buf.shape.size()) return std::nullopt;
  for (size_t d = 0; d < o.size(); ++d) {
    Index i = o[d];
    int64_t off = 0;
    if (static_cast<int>(d) == ax && i.kind() == IndexKind::Add) {
      if (i.a().kind() == IndexKind::Var && i.b().is_const()) off = i.b().value(), i = i.a();
      else if (i.b().kind() == IndexKind::Var && i.a().is_const()) off = i.a().value(), i = i.b();
      else return std::nullopt;
    }
    if (i.is_const() && i.value() == 0 && buf.shape[d] == 1) {
      p.dim_var.push_back("");
      if (static_cast<int>(d) == ax) p.extent = 1;
      continue;
    }
    if (i.kind() != IndexKind::Var || !extents.count(i.name())) return std::nullopt;
    p.dim_var.push_back(i.name());
    if (static_cast<int>(d) == ax) p.extent = extents[i.name()], p.offset = off;
    else if (extents[i.name()] != buf.shape[d]) return std::nullopt;
  }
  // Every loop of the nest is one dimension's variable.
  for (const auto& [var, e] : extents)
    if (std::count(p.dim_var.begin(), p.dim_var.end(), var) != 1) return std::nullopt;
  return p;
}

// `s` with every Load of buffer `t` replaced by f(load).
Stmt replace_loads_of(const Stmt& s, int t, const std::function<Value(const Value&)>& f) {
  auto swap = [&](const Value& v) {
    return v.replace_loads([&](const Value& l) -> std::optional<Value> {
      if (l.buffer() != t) return std::nullopt;
      return f(l);
    });
  };
  return rewrite(s, [&](const Stmt& x) {
    if (x.kind() != StmtKind::Store && x.kind() != StmtKind::Accumulate && x.kind() != StmtKind::Rescale) return x;
    return x.with([&](StmtNode& n) {
      if (n.value.defined()) n.value = swap(n.value);
      if (n.alpha.defined()) n.alpha = swap(n.alpha);
    });
  });
}

// Whether `s` reads `t` and every read has the variable `var` along `ax`.
bool reads_along(const Stmt& s, int t, int ax, const std::string& var) {
  bool any = false, all = true;
  for (const Access& a : accesses(s)) {
    if (a.buffer != t) continue;
    any = true;
    all = all && !a.write && !a.view && static_cast<int>(a.idx.size()) > ax &&
          a.idx[static_cast<size_t>(ax)].kind() == IndexKind::Var && a.idx[static_cast<size_t>(ax)].name() == var;
  }
  return any && all;
}

bool split_one(Kernel& k) {
  if (k.body.kind() != StmtKind::Seq) return false;
  const std::vector<Stmt>& top = k.body->body;
  for (size_t tb = 0; tb < k.buffers.size(); ++tb) {
    const int t = static_cast<int>(tb);
    const Buffer& buf = k.buffers[tb];
    if (buf.scope != Scope::Memory || buf.shape.empty()) continue;
    // The copy nests: every top-level statement that writes T must be one.
    std::vector<Piece> pieces;
    int ax = -1;
    bool ok = true;
    for (size_t i = 0; i < top.size() && ok; ++i) {
      const std::vector<int> w = written_buffers(top[i]);
      if (std::find(w.begin(), w.end(), t) == w.end()) continue;
      if (ax < 0) {
        // The concatenated axis is the copy's own attribute.
        Stmt x = top[i];
        while (x.kind() == StmtKind::For) x = x->body.at(0);
        if (x.kind() != StmtKind::Store || x->value.kind() != ValueKind::Apply ||
            x->value.op().op != ir::Op::Concat || x->value.op().attrs.ints.empty()) {
          ok = false;
          break;
        }
        ax = static_cast<int>(x->value.op().attrs.ints[0]);
        if (ax < 0 || ax >= static_cast<int>(buf.shape.size())) ok = false;
      }
      std::optional<Piece> p = ok ? as_piece(top[i], t, buf, ax) : std::nullopt;
      if (!p) ok = false;
      else {
        p->top = i;
        pieces.push_back(*p);
      }
    }
    if (!ok || pieces.empty()) continue;
    std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
    int64_t covered = 0;
    for (const Piece& p : pieces) {
      if (p.offset != covered) ok = false;
      covered += p.extent;
    }
    const int64_t total = buf.shape[static_cast<size_t>(ax)];
    if (!ok || covered != total) continue;
    // The readers: each loop over the whole axis whose reads of T all take
    // its variable along it becomes one loop per piece (inner loops first).
    auto is_piece = [&](size_t i) {
      return std::any_of(pieces.begin(), pieces.end(), [&](const Piece& p) { return p.top == i; });
    };
    std::vector<Stmt> next;
    for (size_t i = 0; i < top.size(); ++i) {
      if (is_piece(i) || ((top[i].kind() == StmtKind::Alloc || top[i].kind() == StmtKind::Free) && top[i]->buffer == t)) {
        next.push_back(top[i]);
        continue;
      }
      next.push_back(rewrite(top[i], [&](const Stmt& x) {
        if (x.kind() != StmtKind::For || x->loop != LoopKind::Serial || !x->extent.is_const() ||
            x->extent.value() != total || !reads_along(x->body.at(0), t, ax, x->var))
          return x;
        std::vector<Stmt> parts;
        for (const Piece& p : pieces) {
          Stmt body = substitute_var(x->body.at(0), x->var, Index::var(x->var) + Index(p.offset));
          body = replace_loads_of(body, t, [&](const Value& load) {
            return p.value.substitute([&](const std::string& name) -> std::optional<Index> {
              for (size_t d = 0; d < p.dim_var.size(); ++d) {
                if (p.dim_var[d] != name) continue;
                if (static_cast<int>(d) == ax) return Index::var(x->var);
                return load.idx()[d];
              }
              return std::nullopt;
            });
          });
          parts.push_back(x.with([&](StmtNode& n) {
            n.extent = Index(p.extent);
            n.body = {body};
          }));
        }
        return Stmt::seq(std::move(parts));
      }));
    }
    // Only the copy nests may touch T now; then they go, with its lifetime.
    for (size_t i = 0; i < next.size() && ok; ++i) {
      if (is_piece(i)) continue;
      for (const Access& a : accesses(next[i])) ok = ok && a.buffer != t;
    }
    if (!ok) continue;
    std::vector<Stmt> kept;
    for (size_t i = 0; i < next.size(); ++i) {
      if (is_piece(i)) continue;
      if ((next[i].kind() == StmtKind::Alloc || next[i].kind() == StmtKind::Free) && next[i]->buffer == t) continue;
      kept.push_back(next[i]);
    }
    // What the pieces read is now read by the loops after them: a buffer
    // freed in between is freed after the last statement that reads it.
    for (const Piece& p : pieces)
      p.value.visit_loads([&](const Value& l) {
        const int b = l.buffer();
        auto is_free = [&](const Stmt& s) { return s.kind() == StmtKind::Free && s->buffer == b; };
        auto f = std::find_if(kept.begin(), kept.end(), is_free);
        if (f == kept.end()) return;
        size_t last = static_cast<size_t>(f - kept.begin());
        kept.erase(f);
        for (size_t i = 0; i < kept.size(); ++i)
          for (const Access& a : accesses(kept[i])) last = a.buffer == b ? std::max(last, i + 1) : last;
        kept.insert(kept.begin() + static_cast<long>(last), Stmt::free(b));
      });
    k.body = Stmt::seq(std::move(kept));
    return true;
  }
  return false;
}

}  // namespace

Kernel split_concat_reads(const Kernel& k) {
  Kernel out = k;
  while (split_one(out)) {
  }
  return out;
}

}  // namespace axon::tile
