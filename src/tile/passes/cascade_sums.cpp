#include "tile/passes/cascade_sums.h"

#include <functional>
#include <map>
#include <set>

#include "support/diagnostic.h"

namespace axon::tile {

namespace {

struct Nest {
  std::vector<std::pair<std::string, int64_t>> loops;  // outermost first, constant extents
  Stmt leaf;                                           // the Sum Accumulate
};

// The perfect nest below `s` (a For), when it has the cascadable form.
std::optional<Nest> match(const Stmt& s) {
  Nest n;
  Stmt cur = s;
  while (cur.kind() == StmtKind::For) {
    if (!cur->extent.is_const() || cur->loop != LoopKind::Serial) return std::nullopt;
    n.loops.push_back({cur->var, cur->extent.value()});
    cur = cur->body.at(0);
    if (cur.kind() == StmtKind::Seq && cur->body.size() == 1) cur = cur->body[0];
  }
  if (cur.kind() != StmtKind::Accumulate || cur->combine != ir::Combine::Sum) return std::nullopt;
  for (const auto& [v, e] : n.loops)
    for (const Index& i : cur->idx)
      if (i.uses(v)) return std::nullopt;
  n.leaf = cur;
  return n;
}

class Cascader {
 public:
  Cascader(Kernel* k, int64_t leaf_block) : k_(*k), names_(*k), leaf_block_(leaf_block) {}
  int64_t leaf_block() const { return leaf_block_; }

  // Sum over the nest's points into (buffer, idx), every accumulator
  // receiving at most kCascadeBlock terms. `subst` maps the nest's
  // variables to the index expressions that replace them.
  using Subst = std::map<std::string, Index>;

  Stmt sum_into(int buffer, const std::vector<Index>& idx, const Nest& nest, size_t level, Subst subst) {
    if (level == nest.loops.size()) {
      Value x = nest.leaf->value.substitute([&](const std::string& v) -> std::optional<Index> {
        auto it = subst.find(v);
        return it == subst.end() ? std::nullopt : std::optional<Index>(it->second);
      });
      return Stmt::accumulate(buffer, idx, ir::Combine::Sum, x);
    }
    const std::string var = nest.loops[level].first;
    // One iteration of this level: its inner levels (if any) sum into a
    // partial of their own, added to the target once.
    auto iteration = [&](int tb, const std::vector<Index>& tidx, const Index& at) -> Stmt {
      Subst s = subst;
      s[var] = at;
      if (level + 1 == nest.loops.size()) return sum_into(tb, tidx, nest, level + 1, s);
      int p = partial(tb);
      return Stmt::seq({Stmt::alloc(p), Stmt::store(p, {}, zero(tb)), sum_into(p, {}, nest, level + 1, s),
                        Stmt::accumulate(tb, tidx, ir::Combine::Sum, Value::load(p, {}, k_.buffers[p].dtype))});
    };
    const bool leaf = level + 1 == nest.loops.size();
    const int64_t block = leaf && lane_friendly(nest.leaf->value, var) ? leaf_block_ : kCascadeBlock;
    return blocked(buffer, idx, nest.loops[level].second, iteration, block);
  }

  // Every Load of `v` is float32 or bool, unit-stride or invariant along `var`.
  bool lane_friendly(const Value& v, const std::string& var) const {
    bool ok = v.dtype() == ir::DType::F32;
    v.visit_loads([&](const Value& l) {
      const Buffer& b = k_.buffers[l.buffer()];
      if (b.dtype != ir::DType::F32 && b.dtype != ir::DType::Bool) ok = false;
      const Index off = flat_index(b.shape, l.idx());
      if (!off.uses(var)) return;
      std::optional<Affine> a = as_affine(off);
      if (!a) {
        ok = false;
        return;
      }
      auto it = a->coef.find(var);
      if (it != a->coef.end() && it->second != 1) ok = false;
    });
    return ok;
  }

 private:
  using Iteration = std::function<Stmt(int, const std::vector<Index>&, const Index&)>;

  // for v in [0, n): iteration(target, v), with blocks of `block` summed
  // into partials when n is longer than a block (the loop over blocks in
  // blocks of kCascadeBlock).
  Stmt blocked(int tb, const std::vector<Index>& tidx, int64_t n, const Iteration& iteration, int64_t block_len) {
    const std::string v = names_.take("r");
    if (n <= block_len) return Stmt::loop(v, Index(n), LoopKind::Serial, iteration(tb, tidx, Index::var(v)));
    const int64_t q = n / block_len, t = n % block_len;
    auto block = [&](int b, const std::vector<Index>& bidx, const Index& base, int64_t len) {
      int p = partial(b);
      const std::string vi = names_.take("r");
      return Stmt::seq({Stmt::alloc(p), Stmt::store(p, {}, zero(b)),
                        Stmt::loop(vi, Index(len), LoopKind::Serial, iteration(p, {}, base + Index::var(vi))),
                        Stmt::accumulate(b, bidx, ir::Combine::Sum, Value::load(p, {}, k_.buffers[p].dtype))});
    };
    auto blocks = [&](int b, const std::vector<Index>& bidx) {
      return blocked(b, bidx, q, [&](int bb, const std::vector<Index>& bbidx, const Index& vo) {
        return block(bb, bbidx, vo * Index(block_len), block_len);
      }, kCascadeBlock);
    };
    if (t == 0) return blocks(tb, tidx);
    Stmt tail = block(tb, tidx, Index(q * block_len), t);
    // q blocks and the tail add q + 1 terms to the target: past a block,
    // the q blocks first sum into a partial of their own.
    if (q < kCascadeBlock) return Stmt::seq({blocks(tb, tidx), tail});
    int p = partial(tb);
    return Stmt::seq({Stmt::seq({Stmt::alloc(p), Stmt::store(p, {}, zero(tb)), blocks(p, {}),
                                 Stmt::accumulate(tb, tidx, ir::Combine::Sum, Value::load(p, {}, k_.buffers[p].dtype))}),
                      tail});
  }

  int partial(int like) {
    Buffer b;
    b.name = names_.take("acc", "_0");
    b.dtype = k_.buffers[like].dtype;
    b.scope = Scope::Register;
    return k_.add_buffer(b);
  }
  Value zero(int like) const { return Value::constant(0.0, k_.buffers[like].dtype); }
  Kernel& k_;
  NameSource names_;
  int64_t leaf_block_;
};

Stmt cascade(const Stmt& s, Cascader& c) {
  if (s.kind() == StmtKind::For) {
    if (std::optional<Nest> n = match(s)) {
      int64_t terms = 1;
      for (const auto& [v, e] : n->loops) terms *= e;
      if (terms <= kCascadeBlock) return s;
      if (n->loops.size() == 1 && terms <= c.leaf_block() && c.lane_friendly(n->leaf->value, n->loops[0].first)) return s;
      return c.sum_into(n->leaf->buffer, n->leaf->idx, *n, 0, {});
    }
  }
  if (s.kind() != StmtKind::Seq && s.kind() != StmtKind::For) return s;
  std::vector<Stmt> body;
  for (const Stmt& b : s->body) body.push_back(cascade(b, c));
  if (s.kind() == StmtKind::Seq) return Stmt::seq(std::move(body));
  return s.with([&](StmtNode& n) { n.body = std::move(body); });
}

}  // namespace

Kernel cascade_sums(const Kernel& k, int64_t leaf_block) {
  if (leaf_block < kCascadeBlock || leaf_block % kCascadeBlock != 0)
    throw InternalError("cascade_sums: a leaf block of " + std::to_string(leaf_block) + " terms is no multiple of " +
                        std::to_string(kCascadeBlock));
  Kernel out = k;
  Cascader c(&out, leaf_block);
  out.body = cascade(k.body, c);
  return out;
}

}  // namespace axon::tile
