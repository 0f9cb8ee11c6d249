#include "tile/lower_gemm.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "support/diagnostic.h"
#include "tile/passes/fold_indices.h"

namespace axon::tile {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Rows of B packed together across every panel (pack_b).
constexpr int64_t kPackGroup = 8;

Index v(const std::string& name) { return Index::var(name); }
Index c(int64_t x) { return Index(x); }

Stmt loop(const std::string& var, const Index& extent, Stmt body, LoopKind kind = LoopKind::Serial, int threads = 0) {
  return Stmt::loop(var, extent, kind, std::move(body), threads);
}

class GemmLowering {
 public:
  GemmLowering(const GemmShape& g, const GemmSchedule& s, const GemmEpilogue* e, const GemmPrologue* p)
      : g_(g), s_(s), e_(e), p_(p) {}

  Kernel run(const std::string& name) {
    k_.name = name;
    A_ = k_.add_buffer({"A", ir::DType::F32, {strided_length({{g_.batch, g_.a_batch}, {g_.M, g_.a_m}, {g_.K, g_.a_k}})}, Scope::Input, 0});
    B_ = k_.add_buffer({"B", ir::DType::F32, {strided_length({{g_.batch, g_.b_batch}, {g_.K, g_.b_k}, {g_.N, g_.b_n}})}, Scope::Input, 1});
    Buffer cb{"C", ir::DType::F32, {strided_length({{g_.batch, g_.c_batch}, {g_.M, g_.c_m}, {g_.N, g_.c_n}})}, Scope::Output};
    cb.output = 0;
    C_ = k_.add_buffer(cb);
    const bool paired = e_ && e_->paired;
    if (paired) {
      Buffer b2 = k_.buffers[static_cast<size_t>(B_)];
      b2.name = "B2", b2.param = 2;
      B2_ = k_.add_buffer(b2);
    }
    if (e_) {
      for (size_t i = 0; i < e_->extra.size(); ++i) {
        Buffer x = e_->extra[i];
        x.scope = Scope::Input;
        x.param = static_cast<int>((paired ? 3 : 2) + i);
        extra_.push_back(k_.add_buffer(x));
      }
    }
    if (p_) {
      if (paired && (p_->a || p_->b)) throw InternalError("lower_gemm: an operand prologue with a paired epilogue");
      const int first = 2 + (paired ? 1 : 0) + static_cast<int>(e_ ? e_->extra.size() : 0);
      for (size_t i = 0; i < p_->extra.size(); ++i) {
        Buffer x = p_->extra[i];
        x.scope = Scope::Input;
        x.param = first + static_cast<int>(i);
        pro_extra_.push_back(k_.add_buffer(x));
      }
    }
    a_src_ = A_, b_src_ = B_;
    if (g_.K == 0) {
      k_.body = empty_sum();
      return k_;
    }
    const bool pa = p_ && p_->a, pb = p_ && p_->b;
    if ((pa && s_.prologue == 1 && !s_.pack_a) || (pb && s_.prologue == 1 && !s_.pack_b))
      throw InternalError("lower_gemm: an operand computed as it is packed must be packed");
    // Computed whole first: a memory buffer of the input's layout.
    auto computed_copy = [&](int input, const char* name) {
      Buffer v = k_.buffers[static_cast<size_t>(input)];
      v.name = name, v.scope = Scope::Memory, v.param = -1;
      return k_.add_buffer(v);
    };
    if (pa && s_.prologue == 0) a_src_ = computed_copy(A_, "Aval");
    if (pb && s_.prologue == 0) b_src_ = computed_copy(B_, "Bval");
    fused_ = paired && s_.pair == 1;
    w_ = fused_ ? s_.nr / 2 : s_.nr;
    ncr_ = fused_ ? s_.nc / 2 : s_.nc;
    kc_ = std::min<int64_t>(s_.kc, g_.K);
    nc_ = std::min<int64_t>(s_.nc, ceil_div(g_.N, w_) * s_.nr);
    mc_ = std::min<int64_t>(s_.mc, ceil_div(g_.M, s_.mr) * s_.mr);
    const bool omp = s_.threads > 1;
    par_batch_ = omp && g_.batch >= s_.threads && (g_.batch % s_.threads == 0 || g_.batch >= 4 * s_.threads);
    // Threads own ranges of rows of C; with C strided along n (written
    // transposed) such ranges interleave in memory, which the verifier
    // cannot show disjoint: then one thread.
    // Column blocks on threads where the verifier's mixed-radix rule shows
    // them disjoint: whole blocks (N a multiple of the block) along C's
    // contiguous rows; otherwise ranges of rows.
    par_cols_ = omp && !par_batch_ && s_.split_n == 1 && g_.c_n == 1 && g_.N % ncr_ == 0;
    par_rows_ = omp && !par_batch_ && !par_cols_ && g_.c_n == 1;
    a_edge_ = !s_.pack_a && g_.M % s_.mr != 0;
    if (s_.pack_b) Bpack_ = k_.add_buffer({"Bpack", ir::DType::F32, {kc_ * nc_}, per_thread() ? Scope::Scratch : Scope::Memory});
    if (s_.pack_a || a_edge_)
      Apack_ = k_.add_buffer({"Apack", ir::DType::F32, {kc_ * (s_.pack_a ? mc_ : s_.mr)}, Scope::Scratch});
    if (p_ && p_->a && s_.prologue == 1) Arow_ = k_.add_buffer({"Arow", ir::DType::F32, {kc_}, Scope::Scratch});
    if (fused_) {
      // Each thread's row range (all of M on one thread) gets a slab of
      // Cpair rows, whole mc blocks (what the verifier's intervals give an
      // ib x ir nest), and the panel an edge of M cuts (A in place) its own
      // rows after them.
      const Ranges r = ranges();
      slab_ = ceil_div(par_rows_ ? r.R : g_.M, mc_) * mc_;
      const int64_t rows = (par_rows_ ? r.count : 1) * slab_ + (a_edge_ ? s_.mr : 0);
      Cpair_ = k_.add_buffer({"Cpair", ir::DType::F32, {rows * nc_}, per_thread() ? Scope::Scratch : Scope::Memory});
    }
    if (paired && !fused_) {
      Buffer t = k_.buffers[static_cast<size_t>(C_)];
      t.name = "T", t.scope = Scope::Memory, t.output = -1;
      T_ = k_.add_buffer(t);
    }

    std::vector<Stmt> top;
    top.push_back(Stmt::comment(summary()));
    // Operands computed whole first (prologue 0).
    if (a_src_ != A_) {
      top.push_back(Stmt::alloc(a_src_));
      top.push_back(operand_pass(0));
    }
    if (b_src_ != B_) {
      top.push_back(Stmt::alloc(b_src_));
      top.push_back(operand_pass(1));
    }
    if (!per_thread() && Bpack_ >= 0) top.push_back(Stmt::alloc(Bpack_));
    if (!per_thread() && Cpair_ >= 0) top.push_back(Stmt::alloc(Cpair_));
    if (T_ >= 0) {
      // The products apart: A . B2 into T first, plain.
      top.push_back(Stmt::alloc(T_));
      top.push_back(Stmt::comment("A . B2 into T"));
      b_in_ = B2_, c_out_ = T_, epi_ = false;
      top.push_back(product());
      top.push_back(Stmt::comment("A . B, the epilogue reading T"));
    }
    b_in_ = b_src_, c_out_ = fused_ ? Cpair_ : C_, epi_ = e_ != nullptr;
    top.push_back(product());
    if (!per_thread() && Cpair_ >= 0) top.push_back(Stmt::free(Cpair_));
    if (!per_thread() && Bpack_ >= 0) top.push_back(Stmt::free(Bpack_));
    if (e_ && !tile_epilogue()) top.push_back(epilogue_pass());
    if (T_ >= 0) top.push_back(Stmt::free(T_));
    if (b_src_ != B_) top.push_back(Stmt::free(b_src_));
    if (a_src_ != A_) top.push_back(Stmt::free(a_src_));
    k_.body = Stmt::seq(std::move(top));
    // The general edge expressions folded for this shape (a block loop
    // that runs once goes, min(nc, N - jc) is nc or N - jc, ...).
    return fold_indices(k_);
  }

 private:
  // The threads' row ranges: `rows` dealt (whole panels with A in place),
  // R per thread, `count` ranges.
  struct Ranges {
    int64_t rows = 0, R = 0, count = 0;
  };
  Ranges ranges() const {
    Ranges r;
    r.rows = a_edge_ ? g_.M / s_.mr * s_.mr : g_.M;
    if (r.rows > 0) {
      r.R = ceil_div(ceil_div(r.rows, s_.mr), s_.threads) * s_.mr;
      r.count = ceil_div(r.rows, r.R);
    }
    return r;
  }

  // Bpack and Cpair in each thread's scratch: batches or column blocks on threads.
  bool per_thread() const { return par_batch_ || par_cols_; }

  // The epilogue follows each register tile's last slice (always when
  // paired on one panel: Cpair holds one column block only).
  bool tile_epilogue() const { return e_ && (s_.epilogue || fused_); }

  // One product (b_in_ into c_out_, with the epilogue when epi_), from the
  // batch loop down: every K slice of each column block; with the epilogue
  // on register tiles the last slice is peeled off so that it can follow
  // each Matmul.
  Stmt product() {
    pb_ = v("pb");
    last_ = false;
    const int64_t P = ceil_div(g_.K, s_.kc);
    Stmt slices;
    if (epi_ && tile_epilogue()) {
      std::vector<Stmt> peeled;
      if (P > 1) peeled.push_back(loop("pb", c(P - 1), slice()));
      pb_ = c(P - 1);
      last_ = true;
      peeled.push_back(slice());
      slices = Stmt::seq(std::move(peeled));
    } else {
      slices = loop("pb", c(P), slice());
    }
    // Scratch is allocated at the top of the loop on threads (each thread
    // allocates it once): the batch's, or the column block's.
    auto scratch = [&](std::vector<Stmt>& body) {
      if (Bpack_ >= 0) body.push_back(Stmt::alloc(Bpack_));
      if (Cpair_ >= 0) body.push_back(Stmt::alloc(Cpair_));
      if (Apack_ >= 0) body.push_back(Stmt::alloc(Apack_));
    };
    Stmt blocks;
    if (par_cols_) {
      std::vector<Stmt> per_block;
      scratch(per_block);
      per_block.push_back(slices);
      blocks = loop("jb", c(ceil_div(g_.N, ncr_)), Stmt::seq(std::move(per_block)), LoopKind::Parallel, s_.threads);
    } else {
      blocks = loop("jb", c(ceil_div(g_.N, ncr_)), slices);
    }

    std::vector<Stmt> per_batch;
    if (par_batch_) scratch(per_batch);
    else if (!par_rows_ && !par_cols_ && Apack_ >= 0) per_batch.push_back(Stmt::alloc(Apack_));
    per_batch.push_back(blocks);
    return loop("b", c(g_.batch), Stmt::seq(std::move(per_batch)), par_batch_ ? LoopKind::Parallel : LoopKind::Serial,
                s_.threads);
  }

  // One K slice (at pb_) of one column block: pack B, then the row blocks.
  Stmt slice() const {
    std::vector<Stmt> slice;
    if (s_.pack_b) slice.push_back(pack_b());
    if (par_rows_) {
      // Each thread owns a contiguous range of R rows, the same number of
      // mr-row panels each (the last range fewer); only as many threads as
      // ranges are started. With A read in place the panel an edge of M
      // cuts is not in any range (edge_panel, below), so the whole panels
      // are what is dealt: M = 256 at mr = 6 is 21 and 21 panels, not 22
      // and 20 (ranges rounded from M / threads).
      const Ranges r = ranges();
      if (r.rows > 0) {
        const int64_t R = r.R;
        std::vector<Stmt> body;
        if (s_.pack_a) body.push_back(Stmt::alloc(Apack_));
        body.push_back(row_blocks(v("t") * c(R), min(c(R), c(r.rows) - v("t") * c(R)), v("t") * c(slab_)));
        slice.push_back(loop("t", c(r.count), Stmt::seq(std::move(body)), LoopKind::Parallel, s_.threads));
      }
      // The panel an edge of M cuts (A in place): after the threads join,
      // on one thread (fewer than mr rows of M).
      if (a_edge_) slice.push_back(Stmt::seq({Stmt::alloc(Apack_), edge_panel(c(r.count * slab_))}));
    } else {
      slice.push_back(row_blocks(c(0), c(g_.M), c(0)));
      if (a_edge_) slice.push_back(edge_panel(c(slab_)));
    }
    return Stmt::seq(std::move(slice));
  }

  // C's flat offset of element (b, m, n).
  Index c_at(const Index& b, const Index& m, const Index& n) const {
    return b * c(g_.c_batch) + m * c(g_.c_m) + n * c(g_.c_n);
  }
  // A function's value put at (b, i, j): built at the plain variables
  // p.b, p.i, p.j over [0, batch) x [0, I) x [0, J), the indices of its
  // loads (but those of `kept`) simplified as far as those ranges allow,
  // then the variables replaced by (b, i, j).
  Value placed(const std::function<Value(const Index&, const Index&, const Index&)>& f, int64_t I, int64_t J,
               const Index& b, const Index& i, const Index& j, const std::vector<int>& kept = {}) const {
    const std::map<std::string, Interval> ranges = {{"p.b", {0, g_.batch - 1}}, {"p.i", {0, I - 1}}, {"p.j", {0, J - 1}}};
    Value e = f(v("p.b"), v("p.i"), v("p.j"));
    e = e.replace_loads([&](const Value& l) -> std::optional<Value> {
      if (std::count(kept.begin(), kept.end(), l.buffer())) return l;
      std::vector<Index> idx;
      for (const Index& x : l.idx()) idx.push_back(simplify(x, ranges));
      return Value::load(l.buffer(), idx, l.dtype());
    });
    return e.substitute([&](const std::string& name) -> std::optional<Index> {
      if (name == "p.b") return b;
      if (name == "p.i") return i;
      if (name == "p.j") return j;
      return std::nullopt;
    });
  }
  // C[b, m, n] = E(b, m, n, C[b, m, n]), placed over C's ranges, so that
  // the indices it reads its inputs at simplify (a bias reshaped to [1, N]
  // is read at n, not n % N, whatever the tile's edge expressions).
  //
  // The products are read from `c` (and `c2`, paired) as given: loads of
  // the kernel's own buffers, at the tile's indices.
  Stmt epilogue_store(const Index& b, const Index& m, const Index& n, const Value& c, const Value& c2) const {
    Value e = placed(
        [&](const Index& pb, const Index& pm, const Index& pn) {
          return e_->paired ? e_->f2(pb, pm, pn, c, c2, extra_) : e_->f(pb, pm, pn, c, extra_);
        },
        g_.M, g_.N, b, m, n, {C_, T_, Cpair_});
    return Stmt::store(C_, {c_at(b, m, n)}, e);
  }
  // Operand `which` (0 A, 1 B) at (b, i, j): the prologue's value, placed
  // over the operand's ranges (a gain reshaped to [1, K] read at k); or the
  // buffer's element (`src`, with the operand's strides).
  Value operand_at(int which, int src, const Index& b, const Index& i, const Index& j) const {
    const OperandFn* f = !p_ ? nullptr : which == 0 ? (p_->a ? &p_->a : nullptr) : (p_->b ? &p_->b : nullptr);
    if (!f || src != (which == 0 ? A_ : B_)) {
      const Index at = which == 0 ? b * c(g_.a_batch) + i * c(g_.a_m) + j * c(g_.a_k)
                                  : b * c(g_.b_batch) + i * c(g_.b_k) + j * c(g_.b_n);
      return Value::load(src, {at}, ir::DType::F32);
    }
    return placed([&](const Index& pb, const Index& pi, const Index& pj) { return (*f)(pb, pi, pj, src, pro_extra_); },
                  which == 0 ? g_.M : g_.K, which == 0 ? g_.K : g_.N, b, i, j);
  }
  // Operand `which` computed whole into its buffer (prologue 0), in
  // parallel over its rows.
  Stmt operand_pass(int which) const {
    const int src = which == 0 ? A_ : B_, dst = which == 0 ? a_src_ : b_src_;
    const int64_t I = which == 0 ? g_.M : g_.K, J = which == 0 ? g_.K : g_.N;
    const int64_t bs = which == 0 ? g_.a_batch : g_.b_batch, is = which == 0 ? g_.a_m : g_.b_k,
                  js = which == 0 ? g_.a_k : g_.b_n;
    const int64_t batches = bs == 0 ? 1 : g_.batch;
    Stmt st = Stmt::store(dst, {v("ob") * c(bs) + v("oi") * c(is) + v("oj") * c(js)},
                          operand_at(which, src, v("ob"), v("oi"), v("oj")));
    const bool par = s_.threads > 1 && I > 1;
    Stmt rows = loop("oi", c(I), loop("oj", c(J), st, js == 1 ? LoopKind::Vectorized : LoopKind::Serial),
                     par ? LoopKind::Parallel : LoopKind::Serial, s_.threads);
    return Stmt::seq({Stmt::comment(std::string(which == 0 ? "A" : "B") + " computed whole by its prologue"),
                      loop("ob", c(batches), rows)});
  }
  Value load_c(int buffer, const Index& b, const Index& m, const Index& n) const {
    return Value::load(buffer, {c_at(b, m, n)}, ir::DType::F32);
  }
  // The epilogue at C's element (b, m, n), both products stored in C's layout (C, T).
  Stmt epilogue_at(const Index& b, const Index& m, const Index& n) const {
    return epilogue_store(b, m, n, load_c(C_, b, m, n), T_ >= 0 ? load_c(T_, b, m, n) : Value());
  }
  // Lanes along n when C's rows are contiguous.
  LoopKind along_n() const { return g_.c_n == 1 ? LoopKind::Vectorized : LoopKind::Serial; }
  // The epilogue on the register tile at rows [row, row + m), the columns of jr.
  Stmt epilogue_tile(const Index& row, const Index& m, const Index& crow) const {
    const Index col = jc() + v("jr") * c(w_);
    Stmt at;
    if (fused_) {
      // Cpair's tile: the nr/2 columns of A . B2, then those of A . B.
      const Index p = (crow + v("ei")) * c(nc_) + v("jr") * c(s_.nr) + v("ej");
      at = epilogue_store(v("b"), row + v("ei"), col + v("ej"), Value::load(Cpair_, {p + c(w_)}, ir::DType::F32),
                          Value::load(Cpair_, {p}, ir::DType::F32));
    } else {
      at = epilogue_at(v("b"), row + v("ei"), col + v("ej"));
    }
    return loop("ei", m, loop("ej", real_cols(), at, along_n()));
  }
  // The epilogue in one pass over C, after the product.
  Stmt epilogue_pass() const {
    const bool par = s_.threads > 1 && g_.c_n == 1 && g_.M > 1;
    Stmt rows = loop("em", c(g_.M), loop("en", c(g_.N), epilogue_at(v("eb"), v("em"), v("en")), along_n()),
                     par ? LoopKind::Parallel : LoopKind::Serial, s_.threads);
    return Stmt::seq({Stmt::comment("the epilogue, one pass over C"), loop("eb", c(g_.batch), rows)});
  }
  std::string summary() const {
    return "C[" + std::to_string(g_.batch) + "][" + std::to_string(g_.M) + "][" + std::to_string(g_.N) + "] " +
           "= A . B, K = " + std::to_string(g_.K) + "; tile " + std::to_string(s_.mr) +
           "x" + std::to_string(s_.nr) + ", kc " + std::to_string(s_.kc) + ", mc " + std::to_string(s_.mc) + ", nc " +
           std::to_string(s_.nc) + ", " + std::to_string(s_.threads) + " thread(s)" +
           (par_cols_ ? " on column blocks" : par_rows_ ? " on ranges of rows" : "") + "; A " +
           (s_.pack_a ? "packed" : "read in place") + ", B " + (s_.pack_b ? "packed" : "read in place") +
           (!e_ || !e_->paired ? ""
            : fused_           ? "; A . B2 beside it on each A panel (nr/2 columns of each per panel)"
                               : "; A . B2 first, into T");
  }

  // K = 0: the empty sum (and the epilogue of it).
  Stmt empty_sum() const {
    Index at = c_at(v("b"), v("m"), v("n"));
    Value zero_value = Value::constant(0, ir::DType::F32);
    if (e_) {
      zero_value = e_->paired ? e_->f2(v("b"), v("m"), v("n"), zero_value, zero_value, extra_)
                              : e_->f(v("b"), v("m"), v("n"), zero_value, extra_);
    }
    Stmt zero = Stmt::store(C_, {at}, zero_value);
    return loop("b", c(g_.batch), loop("m", c(g_.M), loop("n", c(g_.N), zero)));
  }

  // Columns of C: a block of ncr_ from jc, panels of w_ (both nr unpaired).
  Index jc() const { return v("jb") * c(ncr_); }
  Index nb() const { return min(c(ncr_), c(g_.N) - jc()); }
  Index pc() const { return pb_ * c(s_.kc); }
  Index kb() const { return min(c(s_.kc), c(g_.K) - pc()); }
  Index keep() const { return min(pb_, c(1)); }

  // B[pc.., jc + jp nr..] into Bpack panel jp: kb rows of nr, zero padded.
  // Paired on one panel, a row of the panel is w_ = nr/2 columns of B2 from
  // jc + jp w_, then the same columns of B, each half zero padded.
  //
  // Packed by one thread (not shared by ranges of rows) and unpaired, the
  // rows go in groups of kPackGroup across every panel, so that each source
  // row's run of the block is read in one pass, not a line per panel
  // (bench/gemm/pack_order.cpp: 0.64-0.65 of the time for s1's blocks of
  // 256 columns read from memory, 0.67-0.84 for m3's down projection; for
  // the paired halves of m3's first product 0.89-0.98 at nc 256 and
  // 1.10-1.24 at nc 512, so those stay panel by panel). Shared, each thread
  // packs whole panels (the parallel jp loop).
  Stmt pack_b() const {
    const int64_t NR = s_.nr, W = w_;
    const bool grouped = !par_rows_ && !fused_ && kc_ % kPackGroup == 0 && kc_ > kPackGroup;
    const Index k = grouped ? v("kg") * c(kPackGroup) + v("k") : v("k");
    Index j0 = jc() + v("jp") * c(W);
    Index cols = min(c(W), c(g_.N) - j0);
    Index row = v("jp") * c(kc_ * NR) + k * c(NR);
    auto src = [&](int buffer) { return operand_at(1, buffer, v("b"), pc() + k, j0 + v("j")); };
    // The padding is written from the half's end down, so that its offsets
    // stay affine (parallel panels are shown disjoint); its extent is
    // capped at a panel for the verifier's intervals, which cannot see
    // that cols > 0.
    auto half = [&](int buffer, int64_t at) {
      Stmt copy = loop("j", cols, Stmt::store(Bpack_, {row + c(at) + v("j")}, src(buffer)));
      Stmt pad = loop("z", min(c(W), c(W) - cols),
                      Stmt::store(Bpack_, {row + c(at + W - 1) - v("z")}, Value::constant(0, ir::DType::F32)));
      return Stmt::seq({copy, pad});
    };
    Stmt body = fused_ ? Stmt::seq({half(B2_, 0), half(B_, W)}) : half(b_in_, 0);
    const Index panels = (nb() + c(W - 1)) / c(W);
    if (grouped) {
      Stmt rows = loop("k", min(c(kPackGroup), kb() - v("kg") * c(kPackGroup)), body);
      return loop("kg", (kb() + c(kPackGroup - 1)) / c(kPackGroup), loop("jp", panels, rows));
    }
    return loop("jp", panels, loop("k", kb(), body), par_rows_ ? LoopKind::Parallel : LoopKind::Serial, s_.threads);
  }

  // A rows [i0, i0 + rows) x [pc, pc + kb) into the panel of Apack at `at`,
  // element (r, k) at at + k mr + r, rows below `rows` zero.
  Stmt pack_a_panel(const Index& i0, const Index& rows, const Index& at) const {
    const int64_t MR = s_.mr;
    const Value src = operand_at(0, a_src_, v("b"), i0 + v("r"), pc() + v("k"));
    const Index to = at + v("k") * c(MR) + v("r");
    Stmt copy;
    if (Arow_ >= 0) {
      // Computed as packed: each row's slice computed in vectors into Arow,
      // then copied into the panel's column.
      Stmt row = loop("k", kb(), Stmt::store(Arow_, {v("k")}, src), LoopKind::Vectorized);
      Stmt put = loop("k", kb(), Stmt::store(Apack_, {to}, Value::load(Arow_, {v("k")}, ir::DType::F32)));
      copy = loop("r", rows, Stmt::seq({Stmt::alloc(Arow_), row, put}));
    } else {
      copy = loop("r", rows, loop("k", kb(), Stmt::store(Apack_, {to}, src)));
    }
    Stmt pad = loop("z", min(c(MR), c(MR) - rows),
                    loop("k", kb(), Stmt::store(Apack_, {at + v("k") * c(MR) + c(MR - 1) - v("z")},
                                                Value::constant(0, ir::DType::F32))));
    return Stmt::seq({copy, pad});
  }

  // The tile at C's row `row`, Cpair's row `crow` (paired on one panel).
  View c_view(const Index& row, const Index& crow) const {
    if (fused_) return View{Cpair_, crow * c(nc_) + v("jr") * c(s_.nr), {nc_, 1}};
    return View{c_out_, v("b") * c(g_.c_batch) + row * c(g_.c_m) + (jc() + v("jr") * c(s_.nr)) * c(g_.c_n),
                {g_.c_m, g_.c_n}};
  }
  View b_view() const {
    if (s_.pack_b) return View{Bpack_, v("jr") * c(kc_ * s_.nr), {s_.nr, 1}};
    return View{b_in_, v("b") * c(g_.b_batch) + pc() * c(g_.b_k) + (jc() + v("jr") * c(s_.nr)) * c(g_.b_n),
                {g_.b_k, g_.b_n}};
  }
  // The columns of C a tile covers; its Matmul's (paired on one panel: the
  // whole panel, both halves, zero padded).
  Index real_cols() const { return min(c(w_), nb() - v("jr") * c(w_)); }
  Index cols() const { return fused_ ? c(s_.nr) : real_cols(); }

  // The tiles of one A panel (rows from `row`, m of them) over every B panel
  // of the block.
  Stmt tiles(const View& a, const Index& row, const Index& m, const View& next, const Index& crow) const {
    Stmt mm = Stmt::matmul(c_view(row, crow), a, b_view(), m, cols(), kb(), keep());
    if (s_.prefetch) mm = mm.with([&](StmtNode& n) { n.next = next; });
    if (last_ && epi_) mm = Stmt::seq({mm, epilogue_tile(row, m, crow)});
    return loop("jr", (nb() + c(w_ - 1)) / c(w_), mm);
  }

  // A read in place: the panel the edge of M cuts (its last M % mr rows),
  // packed and zero padded.
  Stmt edge_panel(const Index& crow) const {
    const int64_t MR = s_.mr, first = g_.M / MR * MR;
    View ap{Apack_, c(0), {1, MR}};
    return Stmt::seq({pack_a_panel(c(first), c(g_.M - first), c(0)), tiles(ap, c(first), c(g_.M - first), ap, crow)});
  }

  // Row blocks of mc over rows [row0, row0 + rows), from Cpair's row crow0
  // (paired on one panel); with A read in place, whole panels only.
  Stmt row_blocks(const Index& row0, const Index& rows, const Index& crow0) const {
    const int64_t MR = s_.mr;
    Index ic = row0 + v("ib") * c(mc_);
    Index cic = crow0 + v("ib") * c(mc_) + v("ir") * c(MR);
    Index mb = min(c(mc_), rows - v("ib") * c(mc_));
    Index panels = (mb + c(MR - 1)) / c(MR);
    std::vector<Stmt> block;
    if (s_.pack_a) {
      Index i0 = ic + v("ip") * c(MR);
      block.push_back(loop("ip", panels, pack_a_panel(i0, min(c(MR), mb - v("ip") * c(MR)), v("ip") * c(kc_ * MR))));
      View a{Apack_, v("ir") * c(kc_ * MR), {1, MR}};
      View next{Apack_, min(v("ir") + c(1), panels - c(1)) * c(kc_ * MR), {1, MR}};
      block.push_back(loop("ir", panels, tiles(a, ic + v("ir") * c(MR), min(c(MR), mb - v("ir") * c(MR)), next, cic)));
    } else {
      // A in place: whole panels read through A's strides.
      Index first = ic + v("ir") * c(MR);
      View a{a_src_, v("b") * c(g_.a_batch) + first * c(g_.a_m) + pc() * c(g_.a_k), {g_.a_m, g_.a_k}};
      View next{a_src_, v("b") * c(g_.a_batch) + min(first + c(MR), c(g_.M - MR)) * c(g_.a_m) + pc() * c(g_.a_k),
                {g_.a_m, g_.a_k}};
      block.push_back(loop("ir", mb / c(MR), tiles(a, first, c(MR), next, cic)));
    }
    return loop("ib", (rows + c(mc_ - 1)) / c(mc_), Stmt::seq(std::move(block)));
  }

  const GemmShape& g_;
  const GemmSchedule& s_;
  const GemmEpilogue* e_;
  const GemmPrologue* p_;
  std::vector<int> extra_;      // the epilogue's input buffers
  std::vector<int> pro_extra_;  // the prologue's
  int a_src_ = -1, b_src_ = -1; // what the product reads as A and B: the inputs, or Aval / Bval (prologue 0)
  int Arow_ = -1;               // A computed as packed: one row's slice, computed in vectors
  Index pb_ = Index::var("pb");  // the K slice being built: the pb loop's, or the peeled last one
  bool last_ = false;            // building the last slice, which the epilogue follows
  Kernel k_;
  int A_ = -1, B_ = -1, C_ = -1, Apack_ = -1, Bpack_ = -1;
  int B2_ = -1, T_ = -1, Cpair_ = -1;  // paired: B2, and T (apart) or Cpair (one panel)
  int b_in_ = -1, c_out_ = -1;         // the product being built: its B, and where its Matmuls write
  bool epi_ = false;                   // whether it takes the epilogue
  bool fused_ = false;                 // paired on one A panel
  int64_t w_ = 0, ncr_ = 0;            // columns of C per panel and per block (nr and nc unless fused_)
  int64_t slab_ = 0;                   // Cpair rows per thread's range (fused_ on threads)
  int64_t kc_ = 0, nc_ = 0, mc_ = 0;
  bool par_batch_ = false, par_rows_ = false, par_cols_ = false, a_edge_ = false;
};

}  // namespace

Kernel lower_gemm(const GemmShape& g, const GemmSchedule& s, const std::string& name, const GemmEpilogue* e,
                  const GemmPrologue* p) {
  return GemmLowering(g, s, e, p).run(name);
}

}  // namespace axon::tile
