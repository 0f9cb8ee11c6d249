// lower_copy: the loop nests and Copies of tile/lower_copy.h.
#include "tile/lower_copy.h"

#include <algorithm>
#include <functional>

namespace axon::tile {

int64_t in_extent(const CopyShape& c) {
  int64_t e = 1;
  for (size_t a = 0; a < c.shape.size(); ++a) e += (c.shape[a] - 1) * c.in_strides[a];
  return e;
}

namespace {

// `count` tiles of `size` elements, the first at `start`.
struct Piece {
  int64_t count, size, start;
};

std::vector<Piece> pieces(int64_t n, int64_t tile) {
  std::vector<Piece> r;
  if (n / tile > 0) r.push_back({n / tile, tile, 0});
  if (n % tile > 0) r.push_back({1, n % tile, n / tile * tile});
  return r;
}

// A loop of the nest over other axes and tiles, before it is built.
struct LoopSpec {
  std::string var;
  int64_t extent;
  int64_t out_coef;  // how far one step moves the output offset
};

class CopyLowering {
 public:
  CopyLowering(const CopyShape& c, const CopySchedule& s, const std::string& name) : c_(c), s_(s) {
    k_.name = name;
    const int r = static_cast<int>(c.shape.size());
    out_strides_ = ir::row_major_strides(c.shape);
    in_ = k_.add_buffer(Buffer{"input", c.dtype, {in_extent(c)}, Scope::Input, 0, -1});
    out_ = k_.add_buffer(Buffer{"output", c.dtype, c.shape, Scope::Output, -1, 0});
    // p: the smallest non-zero input stride among the axes before the last.
    q_ = r - 1;
    int64_t best = -1;
    for (int a = 0; a + 1 < r; ++a)
      if (c.shape[static_cast<size_t>(a)] > 1 && c.in_strides[static_cast<size_t>(a)] != 0 &&
          (best < 0 || c.in_strides[static_cast<size_t>(a)] < best))
        best = c.in_strides[static_cast<size_t>(a)], p_ = a;
    // Rows along q are already the cheaper direction to read.
    if (p_ >= 0 && in_stride(q_) != 0 && in_stride(q_) <= best) p_ = -1;
    for (int a = 0; a + 1 < r; ++a)
      if (a != p_ && c.shape[static_cast<size_t>(a)] > 1) outer_.push_back(a);
    vec_ = s.vector && p_ >= 0 && in_stride(p_) == 1;
    w_ = s.width;
    streaming_ = vec_ && s.nt_store && r > 0 && c.shape.back() % w_ == 0;
  }

  Kernel run() {
    std::vector<Stmt> body = {Stmt::comment(description())};
    if (p_ < 0) {
      // Row by row: one Copy along q per element of the other axes.
      const int64_t nq = c_.shape.empty() ? 1 : extent(q_);
      const Index zero(0);
      Stmt row = Stmt::copy(View{out_, out_offset(zero, zero), c_.shape.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{1}},
                            View{in_, in_offset(zero, zero), c_.shape.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{in_stride(q_)}},
                            c_.shape.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{nq});
      body.push_back(nest(outer_loops(), row));
    } else {
      for (const Piece& pp : pieces(extent(p_), s_.tile))
        for (const Piece& pq : pieces(extent(q_), s_.tile)) {
          std::vector<LoopSpec> loops = outer_loops();
          Index p0(pp.start), q0(pq.start);
          if (pp.count > 1) {
            loops.push_back({"tp", pp.count, pp.size * out_stride(p_)});
            p0 = p0 + Index::var("tp") * Index(pp.size);
          }
          if (pq.count > 1) {
            loops.push_back({"tq", pq.count, pq.size});
            q0 = q0 + Index::var("tq") * Index(pq.size);
          }
          // One thread walks the loops in decreasing output stride, so that
          // the pieces of an output line are written one after the other
          // (a [64, 200, 300] -> [300, 64, 200] copy: 1.42 ms against 2.08 ms
          // with the other axes outermost). Threads split the other axes
          // outermost, each taking whole slabs of the input (the same copy:
          // 1.11 ms against 1.18 ms sorted, two threads).
          if (s_.threads == 1)
            std::stable_sort(loops.begin(), loops.end(),
                             [](const LoopSpec& x, const LoopSpec& y) { return x.out_coef > y.out_coef; });
          body.push_back(nest(loops, tile(p0, pp.size, q0, pq.size)));
        }
    }
    k_.body = Stmt::seq(std::move(body));
    return k_;
  }

 private:
  int64_t extent(int a) const { return c_.shape[static_cast<size_t>(a)]; }
  int64_t in_stride(int a) const { return c_.in_strides[static_cast<size_t>(a)]; }
  int64_t out_stride(int a) const { return out_strides_[static_cast<size_t>(a)]; }

  std::vector<LoopSpec> outer_loops() const {
    std::vector<LoopSpec> l;
    for (int a : outer_) l.push_back({"o" + std::to_string(a), extent(a), out_stride(a)});
    return l;
  }

  // The offsets of element (i along p, j along q) at the current outer indices.
  Index out_offset(const Index& i, const Index& j) const {
    Index o(0);
    for (int a : outer_) o = o + Index::var("o" + std::to_string(a)) * Index(out_stride(a));
    if (p_ >= 0) o = o + i * Index(out_stride(p_));
    return o + j;
  }
  Index in_offset(const Index& i, const Index& j) const {
    Index o(0);
    for (int a : outer_) o = o + Index::var("o" + std::to_string(a)) * Index(in_stride(a));
    if (p_ >= 0) o = o + i * Index(in_stride(p_));
    if (q_ >= 0) o = o + j * Index(in_stride(q_));
    return o;
  }

  // `body` under `loops`, outermost first: all parallel with the schedule's
  // threads (one collapsed loop when printed), or all serial.
  Stmt nest(const std::vector<LoopSpec>& loops, Stmt body) const {
    for (size_t i = loops.size(); i-- > 0;) {
      const bool par = s_.threads > 1;
      body = Stmt::loop(loops[i].var, Index(loops[i].extent), par ? LoopKind::Parallel : LoopKind::Serial, body,
                        s_.threads);
    }
    return body;
  }

  static Stmt loop(const std::string& var, int64_t extent, LoopKind kind, const std::function<Stmt(const Index&)>& body) {
    if (extent == 1) return body(Index(0));
    return Stmt::loop(var, Index(extent), kind, body(Index::var(var)));
  }

  // ep x eq elements from (i, j): p outer, q inner (rows of the output).
  Stmt rows(const Index& i, const Index& j, int64_t ep, int64_t eq) const {
    return Stmt::copy(View{out_, out_offset(i, j), {out_stride(p_), 1}}, View{in_, in_offset(i, j), {in_stride(p_), in_stride(q_)}},
                      {ep, eq});
  }
  // The same with q outer, p inner (columns of the output, rows of the input).
  Stmt columns(const Index& i, const Index& j, int64_t ep, int64_t eq) const {
    return Stmt::copy(View{out_, out_offset(i, j), {1, out_stride(p_)}}, View{in_, in_offset(i, j), {in_stride(q_), in_stride(p_)}},
                      {eq, ep});
  }
  // One W x W register block.
  Stmt block(const Index& i, const Index& j) const {
    return Stmt::copy(View{out_, out_offset(i, j), {out_stride(p_), 1}}, View{in_, in_offset(i, j), {1, in_stride(q_)}},
                      {w_, w_}, streaming_);
  }

  // The np x nq tile at (p0, q0).
  Stmt tile(const Index& p0, int64_t np, const Index& q0, int64_t nq) const {
    if (!vec_) return rows(p0, q0, np, nq);
    const int64_t w = w_;
    std::vector<Stmt> s;
    if (s_.order == 0) {
      // Bands of bj input rows, each walked along p with its blocks side by
      // side; the rows the bands leave go in one band of whole blocks, then
      // column by column.
      const int64_t bj = std::max<int64_t>(w, std::min<int64_t>(16 * s_.band, s_.tile) / w * w);
      auto band = [&](const Index& j, int64_t width) {
        std::vector<Stmt> b;
        if (np / w > 0)
          b.push_back(loop("bp", np / w, LoopKind::Serial, [&](const Index& bp) {
            return loop("bk", width / w, LoopKind::Unrolled,
                        [&](const Index& bk) { return block(p0 + bp * Index(w), j + bk * Index(w)); });
          }));
        if (np % w > 0) b.push_back(rows(p0 + Index(np / w * w), j, np % w, width));
        return Stmt::seq(std::move(b));
      };
      if (nq / bj > 0)
        s.push_back(loop("bq", nq / bj, LoopKind::Serial, [&](const Index& bq) { return band(q0 + bq * Index(bj), bj); }));
      const int64_t rest = nq % bj, whole = rest / w * w, done = nq / bj * bj;
      if (whole > 0) s.push_back(band(q0 + Index(done), whole));
      if (rest % w > 0) s.push_back(columns(p0, q0 + Index(done + whole), np, rest % w));
    } else {
      // Bands of W output rows, each walked along q.
      if (np / w > 0)
        s.push_back(loop("bp", np / w, LoopKind::Serial, [&](const Index& bp) {
          const Index i = p0 + bp * Index(w);
          std::vector<Stmt> b;
          if (nq / w > 0)
            b.push_back(loop("bq", nq / w, LoopKind::Serial, [&](const Index& bq) { return block(i, q0 + bq * Index(w)); }));
          if (nq % w > 0) b.push_back(columns(i, q0 + Index(nq / w * w), w, nq % w));
          return Stmt::seq(std::move(b));
        }));
      if (np % w > 0) s.push_back(rows(p0 + Index(np / w * w), q0, np % w, nq));
    }
    return Stmt::seq(std::move(s));
  }

  std::string description() const {
    std::string t = "layout copy: output [";
    for (size_t a = 0; a < c_.shape.size(); ++a) t += (a ? ", " : "") + std::to_string(c_.shape[a]);
    t += "] from input strides [";
    for (size_t a = 0; a < c_.in_strides.size(); ++a) t += (a ? ", " : "") + std::to_string(c_.in_strides[a]);
    t += "]; ";
    if (p_ < 0) return t + "row by row";
    t += std::to_string(s_.tile) + " x " + std::to_string(s_.tile) + " tiles";
    if (vec_)
      t += ", " + std::to_string(w_) + " x " + std::to_string(w_) + " register blocks, " +
           (s_.order == 0 ? "bands of " + std::to_string(16 * s_.band) + " input rows" : "bands of output rows") +
           (streaming_ ? ", streaming stores" : "");
    return t;
  }

  const CopyShape& c_;
  const CopySchedule& s_;
  Kernel k_;
  std::vector<int64_t> out_strides_;
  int in_ = -1, out_ = -1;
  int p_ = -1, q_ = -1;
  std::vector<int> outer_;
  bool vec_ = false, streaming_ = false;
  int w_ = 8;
};

}  // namespace

Kernel lower_copy(const CopyShape& c, const CopySchedule& s, const std::string& name) {
  return CopyLowering(c, s, name).run();
}

}  // namespace axon::tile
