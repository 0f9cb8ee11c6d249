#include "tile/lower_attention.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "support/diagnostic.h"
#include "tile/masked_blocks.h"
#include "tile/passes/fold_indices.h"
#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

Index v(const std::string& name) { return Index::var(name); }
Index c(int64_t x) { return Index(x); }

ir::Node op(ir::Op o) {
  ir::Node n{};
  n.op = o;
  n.type = ir::Type{ir::DType::F32, {}};
  return n;
}
Value f32(double x) { return Value::constant(x, ir::DType::F32); }
Value apply(ir::Op o, std::vector<Value> args) { return Value::apply(op(o), std::move(args)); }

Stmt loop(const std::string& var, const Index& extent, Stmt body, LoopKind kind = LoopKind::Serial) {
  return Stmt::loop(var, extent, kind, std::move(body));
}

}  // namespace

int64_t key_ranges(int64_t key_blocks, int64_t splits, int64_t* per) {
  splits = std::max<int64_t>(1, std::min(splits, key_blocks));
  *per = (key_blocks + splits - 1) / splits;
  return (key_blocks + *per - 1) / *per;
}

Kernel lower_attention(const AttentionShape& a, const AttentionSchedule& s, const std::vector<Buffer>& extra,
                       const ScoreFn& score, const std::string& name, const AttentionPrologue& pro) {
  if (a.D2 > 0) throw InternalError("lower_attention: a second score product needs a ScoreFn2");
  return lower_attention(a, s, extra, ScoreFn2([&](const std::vector<Index>& bij, const Value& sv, const Value&,
                                                   const std::vector<int>& ex) { return score(bij, sv, ex); }),
                         name, pro);
}

Kernel lower_attention(const AttentionShape& a, const AttentionSchedule& s, const std::vector<Buffer>& extra,
                       const ScoreFn2& score, const std::string& name, const AttentionPrologue& pro) {
  if (a.D2 > 0 && (pro.q || pro.k)) throw InternalError("lower_attention: a row prologue with a second score product");
  Kernel k;
  k.name = name;
  const ir::DType F = ir::DType::F32;
  const int Q = k.add_buffer({"Q", F, {strided_length({{a.batch, a.q_batch}, {a.M, a.q_m}, {a.D, a.q_k}})}, Scope::Input, 0});
  const int K = k.add_buffer({"K", F, {strided_length({{a.batch, a.k_batch}, {a.N, a.k_n}, {a.D, a.k_k}})}, Scope::Input, 1});
  const int V = k.add_buffer({"V", F, {strided_length({{a.batch, a.v_batch}, {a.N, a.v_k}, {a.Dv, a.v_n}})}, Scope::Input, 2});
  const bool two = a.D2 > 0;
  int Q2 = -1, K2 = -1;
  if (two) {
    Q2 = k.add_buffer({"Q2", F, {strided_length({{a.batch, a.q2_batch}, {a.M, a.q2_m}, {a.D2, a.q2_k}})}, Scope::Input, 3});
    K2 = k.add_buffer({"K2", F, {strided_length({{a.batch, a.k2_batch}, {a.N, a.k2_n}, {a.D2, a.k2_k}})}, Scope::Input, 4});
  }
  std::vector<int> extras;
  for (const Buffer& b : extra) extras.push_back(k.add_buffer(b));
  Buffer ob{"O", F, {strided_length({{a.batch, a.o_batch}, {a.M, a.o_m}, {a.Dv, a.o_n}})}, Scope::Output};
  ob.output = 0;
  const int OUT = k.add_buffer(ob);
  const int64_t bq = s.bq, bk = s.bk, MR = s.mr, NR = s.nr;
  const int S = k.add_buffer({"S", F, {bq, bk}, Scope::Scratch});
  const int S2 = two ? k.add_buffer({"S2", F, {bq, bk}, Scope::Scratch}) : -1;
  const int Oacc = k.add_buffer({"Oacc", F, {bq, a.Dv}, Scope::Scratch});
  // The rows after their prologue: a query block's, a key block's.
  const int Qn = pro.q ? k.add_buffer({"Qn", F, {bq * a.D}, Scope::Scratch}) : -1;
  const int Kn = pro.k ? k.add_buffer({"Kn", F, {bk * a.D}, Scope::Scratch}) : -1;
  const int mrow = k.add_buffer({"mrow", F, {bq}, Scope::Scratch});
  const int lrow = k.add_buffer({"lrow", F, {bq}, Scope::Scratch});
  const int mx = k.add_buffer({"mx", F, {}, Scope::Register});
  const int alpha = k.add_buffer({"alpha", F, {}, Scope::Register});
  const int sum = k.add_buffer({"sum", F, {}, Scope::Register});
  const int ms = k.add_buffer({"ms", F, {}, Scope::Register});  // mx, or 0 while it is -inf
  const Value minus_inf = f32(-std::numeric_limits<double>::infinity());
  ir::Node compare_eq = op(ir::Op::Eq);
  compare_eq.type.dtype = ir::DType::Bool;
  auto load = [&](int b, std::vector<Index> idx) { return Value::load(b, std::move(idx), F); };

  const Index row0 = v("qb") * c(bq);  // first query row of the block
  // Key blocks: range p holds blocks p per .. p per + min(per, nb - p per) - 1;
  // kb counts the range's blocks, kg = p per + kb is the block of the batch.
  const int64_t nb = a.N / bk;
  int64_t per = nb;
  const int64_t ranges = key_ranges(nb, s.splits, &per);
  const bool split = ranges > 1;
  const Index first = split ? v("p") * c(per) : c(0);
  const Index kg = first + v("kb");
  const Index range_blocks = split ? min(c(per), c(nb) - first) : c(nb);
  Stmt init = loop("i", c(bq), Stmt::seq({Stmt::store(mrow, {v("i")}, minus_inf),
                                          Stmt::store(lrow, {v("i")}, f32(0)),
                                          loop("e", c(a.Dv), Stmt::store(Oacc, {v("i"), v("e")}, f32(0)), LoopKind::Vectorized)}));

  // The scores of a block, S = Q[b, row0.., :] . K[b, kb bk.., :]^T, and
  // what the batch does first.
  int Kt = -1, Kt2 = -1;
  Stmt transpose, scores;
  // One product's scores of the block: into Sb, from Qb (Dq deep) and Kb.
  // q_first, k_first: the row of Qb (Kb) that holds the block's first row.
  struct Product { int Qb, Kb, Sb; int64_t Dq, qb_batch, qb_m, qb_k, kb_batch, kb_n, kb_k; Index q_first, k_first; };
  std::vector<Product> products = {{pro.q ? Qn : Q, pro.k ? Kn : K, S, a.D,
                                    pro.q ? 0 : a.q_batch, pro.q ? a.D : a.q_m, pro.q ? 1 : a.q_k,
                                    pro.k ? 0 : a.k_batch, pro.k ? a.D : a.k_n, pro.k ? 1 : a.k_k,
                                    pro.q ? c(0) : row0, pro.k ? c(0) : kg * c(bk)}};
  if (two) products.push_back({Q2, K2, S2, a.D2, a.q2_batch, a.q2_m, a.q2_k, a.k2_batch, a.k2_n, a.k2_k, row0, kg * c(bk)});
  // The key block's rows through K's prologue into Kn.
  Stmt k_rows;
  if (pro.k) k_rows = loop("j", c(bk), pro.k(&k, v("b"), kg * c(bk) + v("j"), Kn, v("j") * c(a.D), extras));
  std::vector<Stmt> packs, products_of_block;
  // With one query block (all of a batch's rows, as MLA's heads), each key
  // block is packed just before its products, so that the block of K read
  // for the pack is still in cache when it is read again as V (MLA's c_kv
  // is both): K comes from memory once. With several query blocks the
  // batch's keys are packed once, up front.
  const bool pack_per_block = s.transpose_k && a.M == bq;
  for (const Product& pr : products) {
    if (s.transpose_k) {
      // K^T by key blocks: block kb is a D x bk panel, its rows bk apart
      // (rows N apart would be 4 KiB apart for N = 1024 and share L1 sets),
      // so that the score product's B panels have a unit stride.
      const int T = k.add_buffer({pr.Sb == S ? "Kt" : "K2t", F, {pack_per_block ? 1 : per, pr.Dq, bk}, Scope::Scratch});
      (pr.Sb == S ? Kt : Kt2) = T;
      const Index slot = pack_per_block ? c(0) : v("kb");
      const int64_t W = s.pack_tile;
      Stmt pack = W > 0 && bk % W == 0 && pr.Dq % W == 0
          ? loop("jt", c(bk / W), loop("dt", c(pr.Dq / W), Stmt::copy(
                View{T, slot * c(pr.Dq * bk) + v("dt") * c(W * bk) + v("jt") * c(W), {bk, 1}},
                View{pr.Kb, v("b") * c(pr.kb_batch) + (pr.k_first + v("jt") * c(W)) * c(pr.kb_n) + v("dt") * c(W * pr.kb_k),
                     {pr.kb_k, pr.kb_n}},
                {W, W})))
          : loop("j", c(bk), loop("d", c(pr.Dq), Stmt::store(T, {slot, v("d"), v("j")},
                load(pr.Kb, {v("b") * c(pr.kb_batch) + (pr.k_first + v("j")) * c(pr.kb_n) + v("d") * c(pr.kb_k)}))));
      if (pr.Kb == Kn) pack = Stmt::seq({k_rows, pack});
      if (pack_per_block)
        products_of_block.push_back(pack);
      else
        packs.push_back(loop("kb", range_blocks, pack));
      products_of_block.push_back(loop("ir", c(bq / MR), loop("jr", c(bk / NR), Stmt::matmul(
          View{pr.Sb, v("ir") * c(MR * bk) + v("jr") * c(NR), {bk, 1}},
          View{pr.Qb, v("b") * c(pr.qb_batch) + (pr.q_first + v("ir") * c(MR)) * c(pr.qb_m), {pr.qb_m, pr.qb_k}},
          View{T, slot * c(pr.Dq * bk) + v("jr") * c(NR), {bk, 1}}, c(MR), c(NR), c(pr.Dq), c(0)))));
    } else {
      // S[i, j] = Q[b, row0 + i, :] . K[b, kb bk + j, :], vector dot
      // products, keys outermost and G rows of the block at a time in one
      // loop over d: each vector of a K row is loaded once for the G rows
      // (a GQA group's heads), G sums carried side by side. (Rows
      // outermost, one sum per loop, reloaded each K row per row: m7, one
      // thread, 0.91 of its time.)
      int64_t G = 1;
      for (int64_t g : {4, 3, 2})
        if (bq % g == 0) { G = g; break; }
      Value kd = load(pr.Kb, {v("b") * c(pr.kb_batch) + (pr.k_first + v("j")) * c(pr.kb_n) + v("d") * c(pr.kb_k)});
      if (pr.Kb == Kn) products_of_block.push_back(k_rows);
      std::vector<Stmt> open, sums, close;
      for (int64_t g = 0; g < G; ++g) {
        const int dot = k.add_buffer({std::string(pr.Sb == S ? "dot" : "dot2") + (g ? "_" + std::to_string(g) : ""), F, {}, Scope::Register});
        const Index row = v("ig") * c(G) + c(g);
        Value qd = load(pr.Qb, {v("b") * c(pr.qb_batch) + (pr.q_first + row) * c(pr.qb_m) + v("d") * c(pr.qb_k)});
        open.push_back(Stmt::alloc(dot));
        open.push_back(Stmt::store(dot, {}, f32(0)));
        sums.push_back(Stmt::accumulate(dot, {}, ir::Combine::Sum, apply(ir::Op::Mul, {qd, kd})));
        close.push_back(Stmt::store(pr.Sb, {row, v("j")}, load(dot, {})));
      }
      open.push_back(loop("d", c(pr.Dq), Stmt::seq(std::move(sums)), LoopKind::Vectorized));
      for (Stmt& x : close) open.push_back(std::move(x));
      std::vector<Stmt> per_key;
      // The next key block's row j of K (and, once, of V) asked for now,
      // whole lines, into every cache level: a decode step streams K and V
      // from memory with little work per byte, and the hardware prefetcher
      // alone leaves the core waiting (m7, one thread: 0.74 of its time with
      // the loads above).
      auto prefetch_row = [&](int buf, const Index& first, int64_t row_stride, int64_t width) {
        for (int64_t e = 0; e < width; e += 16)
          per_key.push_back(Stmt::prefetch(buf, {first + c(e)}, bk * row_stride * 4, true));
      };
      if (pr.Kb != Kn && pr.kb_k == 1)
        prefetch_row(pr.Kb, v("b") * c(pr.kb_batch) + (pr.k_first + v("j")) * c(pr.kb_n), pr.kb_n, pr.Dq);
      if (pr.Sb == S && a.v_n == 1)
        prefetch_row(V, v("b") * c(a.v_batch) + (kg * c(bk) + v("j")) * c(a.v_k), a.v_k, a.Dv);
      per_key.push_back(loop("ig", c(bq / G), Stmt::seq(std::move(open))));
      products_of_block.push_back(loop("j", c(bk), Stmt::seq(std::move(per_key))));
    }
  }
  if (!packs.empty()) transpose = Stmt::seq(std::move(packs));
  scores = Stmt::seq(std::move(products_of_block));

  // The score the softmax takes at row i, column j of the block.
  const Value X = score({v("b"), row0 + v("i"), kg * c(bk) + v("j")}, load(S, {v("i"), v("j")}),
                        two ? load(S2, {v("i"), v("j")}) : f32(0), extras);
  // The online softmax's step over the block's rows, for score x. With
  // `keys`, row i's scores are x for its first keys(i) keys and masked
  // (-inf) after them: the max and the sum run over those keys alone, and
  // the masked probabilities are stored as the 0 = exp(-inf - ms) they are.
  auto softmax_of = [&](const Value& x, const std::optional<Index>& keys = std::nullopt) {
  const Index kept = keys ? *keys : c(bk);
  Stmt row_max = loop("j", kept, Stmt::accumulate(mx, {}, ir::Combine::Max, x), LoopKind::Vectorized);
  Stmt probs = loop("j", kept, Stmt::seq({Stmt::store(S, {v("i"), v("j")}, apply(ir::Op::Exp, {apply(ir::Op::Sub, {x, load(ms, {})})})),
                                          Stmt::accumulate(sum, {}, ir::Combine::Sum, load(S, {v("i"), v("j")}))}),
                    LoopKind::Vectorized);
  // The masked keys from the block's last one down (j = bk - 1 - jz, so
  // that the index is bounded by bk - 1 whatever keys(i) is).
  if (keys) probs = Stmt::seq({probs, loop("jz", c(bk) - kept, Stmt::store(S, {v("i"), c(bk - 1) - v("jz")}, f32(0)))});
  Stmt rescale_o = loop("e", c(a.Dv), Stmt::store(Oacc, {v("i"), v("e")}, apply(ir::Op::Mul, {load(Oacc, {v("i"), v("e")}), load(alpha, {})})),
                        LoopKind::Vectorized);
  return loop("i", c(bq), Stmt::seq({
      Stmt::alloc(mx), Stmt::store(mx, {}, load(mrow, {v("i")})), row_max,
      // While every score of the row so far is masked (mx = -inf), exp
      // takes its differences from 0 instead: alpha and the block's
      // probabilities are then exp(-inf) = 0, not exp(-inf + inf) = NaN.
      Stmt::alloc(ms), Stmt::store(ms, {}, apply(ir::Op::Select, {Value::apply(compare_eq, {load(mx, {}), minus_inf}), f32(0), load(mx, {})})),
      Stmt::alloc(alpha), Stmt::store(alpha, {}, apply(ir::Op::Exp, {apply(ir::Op::Sub, {load(mrow, {v("i")}), load(ms, {})})})),
      Stmt::alloc(sum), Stmt::store(sum, {}, f32(0)), probs,
      Stmt::rescale(lrow, {v("i")}, load(alpha, {}), load(sum, {})),
      rescale_o,
      Stmt::store(mrow, {v("i")}, load(mx, {}))}));
  };

  // O += S . V[b, kb bk.., :]
  Stmt values = loop("ir", c(bq / MR), loop("jr", c(a.Dv / NR), Stmt::matmul(
      View{Oacc, v("ir") * c(MR * a.Dv) + v("jr") * c(NR), {a.Dv, 1}},
      View{S, v("ir") * c(MR * bk), {bk, 1}},
      View{V, v("b") * c(a.v_batch) + kg * c(bk * a.v_k) + v("jr") * c(NR * a.v_n), {a.v_k, a.v_n}},
      c(MR), c(NR), c(bk), c(1))));

  // The block's rows done: the output, or this range's partials.
  int Pm = -1, Pl = -1, PO = -1;
  Stmt finish;
  if (!split) {
    finish = loop("i", c(bq), loop("e", c(a.Dv), Stmt::store(OUT,
        {v("b") * c(a.o_batch) + (row0 + v("i")) * c(a.o_m) + v("e") * c(a.o_n)},
        apply(ir::Op::Div, {load(Oacc, {v("i"), v("e")}), load(lrow, {v("i")})})), LoopKind::Vectorized));
  } else {
    Pm = k.add_buffer({"Pm", F, {a.batch, ranges, a.M}, Scope::Memory});
    Pl = k.add_buffer({"Pl", F, {a.batch, ranges, a.M}, Scope::Memory});
    PO = k.add_buffer({"PO", F, {a.batch, ranges, a.M, a.Dv}, Scope::Memory});
    finish = loop("i", c(bq), Stmt::seq({
        Stmt::store(Pm, {v("b"), v("p"), row0 + v("i")}, load(mrow, {v("i")})),
        Stmt::store(Pl, {v("b"), v("p"), row0 + v("i")}, load(lrow, {v("i")})),
        loop("e", c(a.Dv), Stmt::store(PO, {v("b"), v("p"), row0 + v("i"), v("e")}, load(Oacc, {v("i"), v("e")})),
             LoopKind::Vectorized)}));
  }

  // Key blocks that the score masks wholly (those above the diagonal of a
  // causal mask) add exp(-inf) = 0 to every sum: they are left out.
  Index key_blocks = range_blocks;
  std::string skipping;
  Stmt key_loops = loop("kb", key_blocks, Stmt::seq({scores, softmax_of(X), values}));
  const std::map<std::string, Interval> ranges_of = {{"b", {0, a.batch - 1}}, {"q_row", {0, a.M - 1}}, {"k_col", {0, a.N - 1}}};
  if (std::optional<AffineMask> m = affine_mask(score({v("b"), v("q_row"), v("k_col")}, load(S, {c(0), c(0)}),
                                                      two ? load(S2, {c(0), c(0)}) : f32(0), extras),
                                                "q_row", "k_col", ranges_of))
    if (std::optional<Index> n = key_blocks_needed(*m, v("qb"), bq, bk, nb)) {
      key_blocks = split ? min(c(per), *n - first) : *n;
      skipping = "; key blocks the mask covers wholly are skipped";
      key_loops = loop("kb", key_blocks, Stmt::seq({scores, softmax_of(X), values}));
      // The leading blocks where it hides nothing take the score without
      // its comparison (a vector loop); loop km the rest, the blocks it
      // cuts, with it: kb = unmasked + km there (never past the last block;
      // the min tells the verifier so).
      std::optional<Index> u = key_blocks_unmasked(*m, v("qb"), bq, bk, nb);
      std::optional<Value> plain = unmasked_score(X);
      if (!split && u && plain && !(u->is_const() && u->value() == 0)) {
        // In the blocks it cuts, each row's keys before its cut take the
        // score without the comparison too, and the rest are skipped.
        const std::optional<Index> keys = keys_unmasked(*m, row0 + v("i"), kg * c(bk), bk);
        const Stmt cut = keys ? softmax_of(*plain, keys) : softmax_of(X);
        key_loops = Stmt::seq({loop("kb", *u, Stmt::seq({scores, softmax_of(*plain), values})),
                               loop("km", key_blocks - *u,
                                    substitute_var(Stmt::seq({scores, cut, values}), "kb",
                                                     min(v("km") + *u, c(nb - 1))))});
        skipping += keys ? ", those it hides nothing in computed without it, and in those it cuts each row's kept keys"
                         : ", those it hides nothing in computed without it";
      }
    }
  std::vector<Stmt> query_block = {init};
  if (pro.q) query_block.push_back(loop("i", c(bq), pro.q(&k, v("b"), row0 + v("i"), Qn, v("i") * c(a.D), extras)));
  query_block.push_back(key_loops);
  query_block.push_back(finish);
  Stmt block = loop("qb", c(a.M / bq), Stmt::seq(std::move(query_block)));
  std::vector<Stmt> per_batch;
  for (int b : {Kt, Kt2, S, S2, Oacc, Qn, Kn, mrow, lrow})
    if (b >= 0) per_batch.push_back(Stmt::alloc(b));
  if (transpose.defined()) per_batch.push_back(transpose);
  per_batch.push_back(block);
  const LoopKind outer = s.threads > 1 ? LoopKind::Parallel : LoopKind::Serial;
  Stmt work = Stmt::seq(std::move(per_batch));
  if (split) work = Stmt::loop("p", c(ranges), outer, std::move(work), s.threads);
  Stmt batch = Stmt::loop("b", c(a.batch), outer, std::move(work), s.threads);
  std::string what = "softmax(score(Q . K^T)) . V, online over key blocks of " + std::to_string(bk) +
                     ", query blocks of " + std::to_string(bq) + skipping +
                     (pro.q || pro.k ? std::string("; ") + (pro.q ? "Q" : "") + (pro.q && pro.k ? " and " : "") +
                                           (pro.k ? "K" : "") + " rows through their prologue as they are read"
                                     : "");
  if (!split) {
    k.body = Stmt::seq({Stmt::comment(what), batch});
    return fold_indices(k);
  }

  // The combine: per row, the ranges' partials merged in order with the
  // online softmax's rescale, then divided by the row's sum.
  const int Oc = k.add_buffer({"Oc", F, {a.Dv}, Scope::Scratch});
  const int gm = k.add_buffer({"gm", F, {}, Scope::Register});
  const int gl = k.add_buffer({"gl", F, {}, Scope::Register});
  const int beta = k.add_buffer({"beta", F, {}, Scope::Register});
  Value part_m = load(Pm, {v("b"), v("p"), v("i")});
  Stmt step = loop("p", c(ranges), Stmt::seq({
      Stmt::alloc(mx), Stmt::store(mx, {}, apply(ir::Op::Maximum, {load(gm, {}), part_m})),
      Stmt::alloc(ms), Stmt::store(ms, {}, apply(ir::Op::Select, {Value::apply(compare_eq, {load(mx, {}), minus_inf}), f32(0), load(mx, {})})),
      Stmt::alloc(alpha), Stmt::store(alpha, {}, apply(ir::Op::Exp, {apply(ir::Op::Sub, {load(gm, {}), load(ms, {})})})),
      Stmt::alloc(beta), Stmt::store(beta, {}, apply(ir::Op::Exp, {apply(ir::Op::Sub, {part_m, load(ms, {})})})),
      Stmt::rescale(gl, {}, load(alpha, {}), apply(ir::Op::Mul, {load(Pl, {v("b"), v("p"), v("i")}), load(beta, {})})),
      loop("e", c(a.Dv), Stmt::rescale(Oc, {v("e")}, load(alpha, {}),
           apply(ir::Op::Mul, {load(PO, {v("b"), v("p"), v("i"), v("e")}), load(beta, {})})), LoopKind::Vectorized),
      Stmt::store(gm, {}, load(mx, {}))}));
  Stmt row = loop("i", c(a.M), Stmt::seq({
      Stmt::alloc(gm), Stmt::store(gm, {}, minus_inf), Stmt::alloc(gl), Stmt::store(gl, {}, f32(0)),
      loop("e", c(a.Dv), Stmt::store(Oc, {v("e")}, f32(0)), LoopKind::Vectorized),
      step,
      loop("e", c(a.Dv), Stmt::store(OUT, {v("b") * c(a.o_batch) + v("i") * c(a.o_m) + v("e") * c(a.o_n)},
           apply(ir::Op::Div, {load(Oc, {v("e")}), load(gl, {})})), LoopKind::Vectorized)}));
  Stmt combine = Stmt::loop("b", c(a.batch), outer, Stmt::seq({Stmt::alloc(Oc), row}), s.threads);
  k.body = Stmt::seq({Stmt::comment(what + "; split-KV: " + std::to_string(ranges) + " ranges of " + std::to_string(per) +
                                    " key blocks, then their partials combined"),
                      Stmt::alloc(Pm), Stmt::alloc(Pl), Stmt::alloc(PO), batch, Stmt::comment("combine the ranges"),
                      combine, Stmt::free(PO), Stmt::free(Pl), Stmt::free(Pm)});
  return fold_indices(k);
}

}  // namespace axon::tile
