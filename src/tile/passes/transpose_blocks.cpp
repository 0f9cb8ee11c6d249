#include "tile/passes/transpose_blocks.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

Stmt loop(const std::string& var, int64_t extent, Stmt body) {
  return Stmt::loop(var, Index(extent), LoopKind::Serial, std::move(body));
}

// A transposed read: a Load (buffer and indices) and the coefficient of its
// flat index along v.
struct Tile {
  int buffer = -1;
  std::vector<Index> idx;
  Index flat;
  int64_t cv = 0;
  int scratch = -1;
};

class Blocks {
 public:
  Blocks(Kernel* k, int w) : k_(*k), names_(*k), w_(w) {}

  Stmt walk(const Stmt& s) {
    if (s.kind() == StmtKind::For)
      if (std::optional<Stmt> done = block(s)) return *done;
    if (s->body.empty()) return s;
    return s.with([&](StmtNode& n) {
      for (Stmt& c : n.body) c = walk(c);
    });
  }

 private:
  std::optional<Affine> flat_affine(int buffer, const std::vector<Index>& idx) const {
    const Buffer& b = k_.buffers[static_cast<size_t>(buffer)];
    if (idx.size() != b.shape.size()) return std::nullopt;
    return as_affine(flat_index(b.shape, idx));
  }

  static int64_t coef(const Affine& a, const std::string& v) {
    auto it = a.coef.find(v);
    return it == a.coef.end() ? 0 : it->second;
  }

  // The blocked form of the nest rooted at `top`, or nullopt.
  std::optional<Stmt> block(const Stmt& top) {
    std::vector<Stmt> chain;
    std::vector<Stmt> body;
    Stmt cur = top;
    while (true) {
      if (!serial_const_loop(cur)) return std::nullopt;
      chain.push_back(cur);
      body = statements(cur->body[0]);
      if (body.size() == 1 && body[0].kind() == StmtKind::For) {
        cur = body[0];
        continue;
      }
      break;
    }
    if (chain.size() < 2) return std::nullopt;
    const std::string v = chain.back()->var;
    std::set<std::string> vars;
    for (const Stmt& l : chain) vars.insert(l->var);
    // Stores only, each point writing its own elements, contiguous along v.
    std::set<int> written;
    for (const Stmt& s : body) {
      if (s.kind() != StmtKind::Store) return std::nullopt;
      std::set<std::string> seen;
      for (const Index& x : s->idx) {
        if (x.is_const()) continue;
        if (x.kind() != IndexKind::Var || !vars.count(x.name()) || !seen.insert(x.name()).second) return std::nullopt;
      }
      if (seen.size() != vars.size()) return std::nullopt;
      std::optional<Affine> a = flat_affine(s->buffer, s->idx);
      if (!a || coef(*a, v) != 1) return std::nullopt;
      written.insert(s->buffer);
    }
    // The transposed reads, and u.
    std::string u;
    std::vector<Tile> tiles;
    bool reads_written = false;
    for (const Stmt& s : body) {
      s->value.visit_loads([&](const Value& l) {
        if (written.count(l.buffer())) reads_written = true;
        std::optional<Affine> a = flat_affine(l.buffer(), l.idx());
        if (!a || std::abs(coef(*a, v)) <= 1) return;
        if (u.empty())
          for (const Stmt& c : chain)
            if (c->var != v && coef(*a, c->var) == 1) u = c->var;
        if (u.empty() || coef(*a, u) != 1) return;
        for (const Tile& t : tiles)
          if (t.buffer == l.buffer() && same_indices(t.idx, l.idx())) return;
        tiles.push_back({l.buffer(), l.idx(), flat_index(k_.buffers[static_cast<size_t>(l.buffer())].shape, l.idx()),
                         coef(*a, v), -1});
      });
    }
    if (reads_written || tiles.empty()) return std::nullopt;
    int64_t eu = 0, ev = chain.back()->extent.value();
    std::vector<Stmt> others;
    for (const Stmt& c : chain) {
      if (c->var == u) eu = c->extent.value();
      else if (c->var != v) others.push_back(c);
    }
    if (eu < w_ || ev < w_) return std::nullopt;
    const int64_t qu = eu / w_, ru = eu % w_, qv = ev / w_, rv = ev % w_;
    for (Tile& t : tiles) {
      Buffer b = k_.buffers[static_cast<size_t>(t.buffer)];
      b.name = names_.take("t", "_tile");
      b.scope = Scope::Scratch;
      b.shape = {w_, w_};
      b.param = b.output = -1;
      t.scratch = k_.add_buffer(b);
    }
    const std::string ub = names_.take("i"), vb = names_.take("i"), uu = names_.take("i"), vv = names_.take("i");
    const Stmt nest = Stmt::seq(body);
    const Index W(w_), Ub = Index::var(ub), Vb = Index::var(vb), Uu = Index::var(uu), Vv = Index::var(vv);
    auto at = [&](const Stmt& s, const Index& ui, const Index& vi) {
      return substitute_var(substitute_var(s, u, ui), v, vi);
    };
    // Whole blocks: each transposed read from its block in scratch.
    const Stmt read_tiles = rewrite(nest, [&](const Stmt& s) {
      if (s.kind() != StmtKind::Store) return s;
      return s.with([&](StmtNode& n) {
        n.value = n.value.replace_loads([&](const Value& l) -> std::optional<Value> {
          for (const Tile& t : tiles)
            if (t.buffer == l.buffer() && same_indices(t.idx, l.idx())) return Value::load(t.scratch, {Uu, Vv}, l.dtype());
          return std::nullopt;
        });
      });
    });
    std::vector<Stmt> blk;
    for (const Tile& t : tiles) blk.push_back(Stmt::alloc(t.scratch));
    for (const Tile& t : tiles) {
      const Index origin = t.flat.substitute([&](const std::string& n) -> std::optional<Index> {
        if (n == u) return Ub * W;
        if (n == v) return Vb * W;
        return std::nullopt;
      });
      blk.push_back(Stmt::copy(View{t.scratch, Index(0), {w_, 1}}, View{t.buffer, origin, {1, t.cv}}, {w_, w_}));
    }
    blk.push_back(loop(uu, w_, loop(vv, w_, at(read_tiles, Ub * W + Uu, Vb * W + Vv))));
    std::vector<Stmt> per_ub = {loop(vb, qv, Stmt::seq(blk))};
    if (rv > 0) {
      const std::string ui = names_.take("i"), vr = names_.take("i");
      per_ub.push_back(loop(ui, w_, loop(vr, rv, at(nest, Ub * W + Index::var(ui), Index(qv * w_) + Index::var(vr)))));
    }
    std::vector<Stmt> inner = {loop(ub, qu, Stmt::seq(per_ub))};
    if (ru > 0) {
      const std::string ur = names_.take("i");
      inner.push_back(loop(ur, ru, loop(v, ev, substitute_var(nest, u, Index(qu * w_) + Index::var(ur)))));
    }
    Stmt out = Stmt::seq(inner);
    for (auto it = others.rbegin(); it != others.rend(); ++it) out = loop((*it)->var, (*it)->extent.value(), out);
    return out;
  }

  static bool same_indices(const std::vector<Index>& a, const std::vector<Index>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!a[i].same_as(b[i])) return false;
    return true;
  }

  Kernel& k_;
  NameSource names_;
  const int64_t w_;
};

}  // namespace

Kernel transpose_blocks(const Kernel& k, int width) {
  if (width < 2) return k;
  Kernel out = k;
  Blocks b(&out, width);
  out.body = b.walk(k.body);
  return out;
}

}  // namespace axon::tile
