#include "tile/passes/matmul_nests.h"

#include <algorithm>
#include <optional>

namespace axon::tile {

namespace {

using ir::DType;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Loop {
  std::string var;
  int64_t extent = 1;
};

// The serial constant loops around `s` (outermost first) and what they hold.
Stmt peel(Stmt s, std::vector<Loop>* loops) {
  for (;;) {
    if (s.kind() == StmtKind::Seq && s->body.size() == 1) {
      s = s->body[0];
    } else if (s.kind() == StmtKind::For && s->loop == LoopKind::Serial && s->extent.is_const() && s->body.size() == 1) {
      loops->push_back({s->var, s->extent.value()});
      s = s->body[0];
    } else {
      return s;
    }
  }
}

bool is_f64(const Kernel& k, int b) { return b >= 0 && b < static_cast<int>(k.buffers.size()) && k.buffers[b].dtype == DType::F64; }

// The two Loads of a float64 sum-einsum's product term.
std::optional<std::pair<Value, Value>> product(const Kernel& k, const Value& v) {
  if (!v.defined() || v.kind() != ValueKind::Apply || v.op().op != ir::Op::Einsum || v.op().type.dtype != DType::F64 ||
      v.args().size() != 2)
    return std::nullopt;
  for (const Value& a : v.args())
    if (a.kind() != ValueKind::Load || !is_f64(k, a.buffer())) return std::nullopt;
  return std::make_pair(v.args()[0], v.args()[1]);
}

bool is_zero(const Value& v) {
  return v.defined() && v.kind() == ValueKind::Apply && v.op().op == ir::Op::Constant && v.op().attrs.value == 0.0;
}

// One product C[o] (+)= A . B found in a top-level statement.
struct Found {
  std::vector<Loop> loops;  // every loop of the nest, the reduction's included
  std::string k;            // the reduction loop
  int c = -1;
  std::vector<Index> o;
  Value a, b;
  bool ikj = false;
};

std::optional<Found> find(const Kernel& k, const Stmt& top) {
  Found f;
  Stmt s = peel(top, &f.loops);
  if (s.kind() == StmtKind::Accumulate) {
    // i-k-j: the reduction loop sits among the others.
    if (s->combine != ir::Combine::Sum || k.buffers[s->buffer].scope == Scope::Register) return std::nullopt;
    auto p = product(k, s->value);
    if (!p) return std::nullopt;
    f.ikj = true;
    f.c = s->buffer;
    f.o = s->idx;
    f.a = p->first;
    f.b = p->second;
  } else if (s.kind() == StmtKind::Seq && s->body.size() == 4) {
    // acc = 0; for k { acc += a * b }; C[o] = acc
    const std::vector<Stmt>& q = s->body;
    if (q[0].kind() != StmtKind::Alloc || q[1].kind() != StmtKind::Store || q[3].kind() != StmtKind::Store) return std::nullopt;
    const int acc = q[0]->buffer;
    if (k.buffers[acc].scope != Scope::Register || q[1]->buffer != acc || !q[1]->idx.empty() || !is_zero(q[1]->value))
      return std::nullopt;
    std::vector<Loop> inner;
    Stmt x = peel(q[2], &inner);
    if (inner.size() != 1 || x.kind() != StmtKind::Accumulate || x->buffer != acc || x->combine != ir::Combine::Sum)
      return std::nullopt;
    auto p = product(k, x->value);
    if (!p) return std::nullopt;
    const Value& r = q[3]->value;
    if (r.kind() != ValueKind::Load || r.buffer() != acc || q[3]->buffer == acc) return std::nullopt;
    f.loops.push_back(inner[0]);
    f.c = q[3]->buffer;
    f.o = q[3]->idx;
    f.a = p->first;
    f.b = p->second;
  } else {
    return std::nullopt;
  }
  if (!is_f64(k, f.c) || k.buffers[f.c].scope == Scope::Register) return std::nullopt;
  int reductions = 0;
  for (const Loop& l : f.loops) {
    bool used = false;
    for (const Index& i : f.o) used = used || i.uses(l.var);
    if (!used) {
      f.k = l.var;
      ++reductions;
    }
  }
  if (reductions != 1) return std::nullopt;
  return f;
}

std::optional<Affine> offset(const Kernel& k, int b, const std::vector<Index>& idx) {
  std::optional<Affine> a = as_affine(flat_index(k.buffers[b].shape, idx));
  if (!a) return std::nullopt;
  for (const auto& [v, c] : a->coef)
    if (c < 0) return std::nullopt;
  return a;
}

int64_t coef(const Affine& a, const std::string& v) {
  auto it = a.coef.find(v);
  return it == a.coef.end() ? 0 : it->second;
}

std::optional<Stmt> rewrite_nest(Kernel* out, const Found& f, int threads, NameSource* names) {
  const Kernel& k = *out;
  std::optional<Affine> oc = offset(k, f.c, f.o), oa = offset(k, f.a.buffer(), f.a.idx()),
                        ob = offset(k, f.b.buffer(), f.b.idx());
  if (!oc || !oa || !ob) return std::nullopt;
  // Only the loops' variables may occur.
  for (const Affine* x : {&*oc, &*oa, &*ob})
    for (const auto& [v, c] : x->coef) {
      bool ours = false;
      for (const Loop& l : f.loops) ours = ours || l.var == v;
      if (!ours) return std::nullopt;
    }
  int j = -1, i = -1;
  for (int l = 0; l < static_cast<int>(f.loops.size()); ++l) {
    const std::string& v = f.loops[l].var;
    if (v == f.k) continue;
    if (coef(*oc, v) <= 0) return std::nullopt;  // every kept loop moves C: no two iterations write one element
    if (coef(*oc, v) == 1 && coef(*oa, v) == 0) j = l;
  }
  if (j < 0) return std::nullopt;
  for (int l = 0; l < static_cast<int>(f.loops.size()); ++l) {
    const std::string& v = f.loops[l].var;
    if (v == f.k || l == j) continue;
    if (coef(*oa, v) > 0 && coef(*ob, v) == 0) i = l;
  }
  if (i < 0) return std::nullopt;
  const std::string& iv = f.loops[i].var;
  const std::string& jv = f.loops[j].var;
  int64_t K = 1;
  for (const Loop& l : f.loops)
    if (l.var == f.k) K = l.extent;
  const int64_t M = f.loops[i].extent, N = f.loops[j].extent;
  std::vector<Loop> batches;
  int64_t batch_iterations = 1;
  for (int l = 0; l < static_cast<int>(f.loops.size()); ++l)
    if (l != i && l != j && f.loops[l].var != f.k) {
      batches.push_back(f.loops[l]);
      batch_iterations *= f.loops[l].extent;
    }
  const int64_t NC = kMatmulNC;

  const std::string jb = names->take("t", "_jb"), pb = names->take("t", "_pb"), ib = names->take("i", "_ib"),
                    jr = names->take("i", "_jr");
  auto c = [](int64_t x) { return Index(x); };
  auto v = [](const std::string& n) { return Index::var(n); };
  const int64_t nblocks = ceil_div(N, NC), pblocks = ceil_div(K, kMatmulKC), iblocks = ceil_div(M, kMatmulMR);
  // Rows on the threads, a slab of R rows each, when the batches cannot
  // feed them all (parallelize cannot split the column blocks: they write
  // interleaved rows): one parallel loop outermost, each thread walking
  // every block of B over its own rows. Otherwise parallelize gives the
  // threads the batches.
  const bool slabs = threads > 1 && batch_iterations < threads && iblocks >= 2;
  const int64_t R = slabs ? ceil_div(iblocks, threads) * kMatmulMR : iblocks * kMatmulMR;
  const int64_t tslabs = ceil_div(M, R);
  const std::string ts = names->take("t", "_rows");
  // A loop of one iteration is its index 0.
  auto at = [&](const std::string& n, int64_t extent) { return extent == 1 ? c(0) : v(n); };
  const Index t0 = at(ts, tslabs) * c(R);
  const Index ib_extent = (min(c(R), c(M) - t0) + c(kMatmulMR - 1)) / c(kMatmulMR);
  const Index ib0 = (ib_extent.is_const() && ib_extent.value() == 1 ? c(0) : v(ib)) * c(kMatmulMR);
  const Index jc = at(jb, nblocks) * c(NC), pc = at(pb, pblocks) * c(kMatmulKC), i0 = t0 + ib0;
  const Index nb = min(c(NC), c(N) - jc);
  const Index jr_extent = (nb + c(kMatmulNR - 1)) / c(kMatmulNR);
  const Index jr0 = (jr_extent.is_const() && jr_extent.value() == 1 ? c(0) : v(jr)) * c(kMatmulNR);
  const Index j0 = jc + jr0;
  auto base = [&](const Affine& x) {
    Index e = c(x.constant);
    for (const Loop& l : batches) e = e + c(coef(x, l.var)) * v(l.var);
    return e;
  };
  View cv{f.c, base(*oc) + c(coef(*oc, iv)) * i0 + j0, {coef(*oc, iv), 1}};
  // The packed operands: the block of B (kb rows of nb columns) as panels
  // of NR columns, element (k, c) of panel jr at jr KC NR + k NR + c; the
  // tile's rows of A, element (r, k) at k MR + r. Both are each thread's
  // scratch, written before the tiles read them; the copies move values
  // and change no rounding.
  // KC and NC cut down to a product smaller than a block.
  const int64_t KCe = std::min(kMatmulKC, K), NCe = ceil_div(std::min(NC, N), kMatmulNR) * kMatmulNR;
  const int bpack = out->add_buffer({names->take("t", "_bpack"), DType::F64, {KCe * NCe}, Scope::Scratch});
  const int apack = out->add_buffer({names->take("t", "_apack"), DType::F64, {KCe * kMatmulMR}, Scope::Scratch});
  const std::string pk = names->take("i", "_pk"), pj = names->take("i", "_pj"), pc_ = names->take("i", "_pc"),
                    pr = names->take("i", "_pr");
  const Index kb = min(c(kMatmulKC), c(K) - pc);
  auto loop = [&](const std::string& n, const Index& extent, Stmt body, LoopKind kind = LoopKind::Serial) {
    if (extent.is_const() && extent.value() == 1) return body;
    return Stmt::loop(n, extent, kind, std::move(body), kind == LoopKind::Parallel ? threads : 0);
  };
  // B[pc + k, jc + jr NR + c], row by row of the block (B's rows are read
  // along their length where its columns are contiguous).
  const Index pcols = min(c(kMatmulNR), nb - v(pj) * c(kMatmulNR));
  Stmt pack_b = loop(
      pk, kb,
      loop(pj, jr_extent,
           loop(pc_, pcols,
                Stmt::store(bpack, {v(pj) * c(KCe * kMatmulNR) + v(pk) * c(kMatmulNR) + v(pc_)},
                            f.b.substitute([&](const std::string& n) -> std::optional<Index> {
                              if (n == f.k) return pc + v(pk);
                              if (n == jv) return jc + v(pj) * c(kMatmulNR) + v(pc_);
                              return std::nullopt;
                            })))));
  const Index rows = min(c(kMatmulMR), c(M) - i0);
  Stmt pack_a = loop(pk, kb,
                     loop(pr, rows,
                          Stmt::store(apack, {v(pk) * c(kMatmulMR) + v(pr)},
                                      f.a.substitute([&](const std::string& n) -> std::optional<Index> {
                                        if (n == f.k) return pc + v(pk);
                                        if (n == iv) return i0 + v(pr);
                                        return std::nullopt;
                                      }))));
  View av{apack, c(0), {1, kMatmulMR}};
  View bv{bpack, jr0 * c(KCe), {kMatmulNR, 1}};
  const Index keep = f.ikj ? c(1) : pblocks == 1 ? c(0) : min(v(pb), c(1));
  Stmt mm = Stmt::matmul(cv, av, bv, rows, min(c(kMatmulNR), nb - jr0), kb, keep);
  Stmt s = loop(jr, jr_extent, mm);
  s = loop(ib, ib_extent, Stmt::seq({pack_a, s}));
  s = loop(pb, c(pblocks), Stmt::seq({pack_b, s}));
  s = loop(jb, c(nblocks), s);
  s = Stmt::seq({Stmt::alloc(bpack), Stmt::alloc(apack), s});
  s = loop(ts, c(tslabs), s, slabs ? LoopKind::Parallel : LoopKind::Serial);
  for (auto l = batches.rbegin(); l != batches.rend(); ++l) s = loop(l->var, c(l->extent), s);
  return s;
}

}  // namespace

Kernel matmul_nests(const Kernel& k, int threads) {
  if (k.body.kind() != StmtKind::Seq) return k;
  NameSource names(k);
  Kernel out = k;
  std::vector<Stmt> top;
  bool changed = false;
  for (const Stmt& s : k.body->body) {
    std::optional<Found> f = find(k, s);
    std::optional<Stmt> r = f ? rewrite_nest(&out, *f, threads, &names) : std::nullopt;
    top.push_back(r ? *r : s);
    changed = changed || r.has_value();
  }
  if (!changed) return k;
  out.body = Stmt::seq(std::move(top));
  return out;
}

}  // namespace axon::tile
