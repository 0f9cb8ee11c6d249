#include "tile/verify.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "support/diagnostic.h"
#include "tile/print.h"

namespace axon::tile {

namespace {

struct LoopFrame {
  std::string var;
  LoopKind kind;
  Index extent;
  std::set<int> allocated_inside;  // buffers Alloc'ed within this loop's body
  std::map<int, std::vector<Index>> writes;  // Parallel, Vectorized: writes to outer buffers
};

class Verifier {
 public:
  explicit Verifier(const Kernel& k) : k_(k) {}

  std::vector<std::string> run() {
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      Scope s = k_.buffers[b].scope;
      if (s == Scope::Input) written_.insert(static_cast<int>(b));
      if (s == Scope::Input || s == Scope::Output) live_.insert(static_cast<int>(b));
    }
    stmt(k_.body);
    return problems_;
  }

 private:
  std::string where(const Stmt& s) const {
    std::string t = print(k_, s);
    size_t nl = t.find('\n');
    if (nl != std::string::npos) t = t.substr(0, nl);
    size_t first = t.find_first_not_of(' ');
    return "`" + (first == std::string::npos ? t : t.substr(first)) + "`";
  }
  void fail(const Stmt& s, const std::string& why) { problems_.push_back(where(s) + ": " + why); }

  bool valid(int b) const { return b >= 0 && b < static_cast<int>(k_.buffers.size()); }

  void check_use(const Stmt& s, int b, bool write) {
    if (!valid(b)) return fail(s, "buffer #" + std::to_string(b) + " does not exist");
    const Buffer& buf = k_.buffers[b];
    if (!live_.count(b)) fail(s, buf.name + " is used outside its allocation");
    if (write && buf.scope == Scope::Input) fail(s, "writes the input " + buf.name);
    if (!write && !written_.count(b)) fail(s, "reads " + buf.name + " before anything writes it");
  }

  // The largest value of `e` over the loops around it. A loop whose extent
  // depends on outer variables (a tile cut by an edge: min(T, N - x)) is
  // first replaced by its last iteration where `e` grows with it, so that
  // upper_bound sees how the extent and the outer variables relate.
  std::optional<int64_t> hi_of(const Index& e) const {
    Index x = e;
    for (size_t i = loops_.size(); i-- > 0;) {
      const LoopFrame& f = loops_[i];
      if (f.extent.is_const() || !x.uses(f.var) || !non_decreasing_in(x, f.var)) continue;
      const Index last = f.extent - Index(1);
      x = x.substitute([&](const std::string& v) -> std::optional<Index> {
        if (v == f.var) return last;
        return std::nullopt;
      });
    }
    std::optional<int64_t> a = upper_bound(x, ranges_), b = upper_bound(e, ranges_);
    if (a && b) return std::min(*a, *b);
    return a ? a : b;
  }

  void check_index(const Stmt& s, int b, const std::vector<Index>& idx) {
    if (!valid(b)) return;
    const Buffer& buf = k_.buffers[b];
    if (idx.size() != buf.shape.size()) {
      fail(s, buf.name + " has rank " + std::to_string(buf.shape.size()) + " but " + std::to_string(idx.size()) +
                  " indices");
      return;
    }
    for (size_t d = 0; d < idx.size(); ++d) {
      std::optional<Interval> r = bounds(idx[d], ranges_);
      if (r) r->hi = hi_of(idx[d]).value_or(r->hi);
      if (!r) fail(s, "cannot bound index " + idx[d].str() + " of " + buf.name);
      else if (r->lo < 0 || r->hi >= buf.shape[d])
        fail(s, "index " + idx[d].str() + " of " + buf.name + " spans [" + std::to_string(r->lo) + ", " +
                    std::to_string(r->hi) + "], outside [0, " + std::to_string(buf.shape[d]) + ")");
    }
  }

  void check_value(const Stmt& s, const Value& v) {
    v.visit_loads([&](const Value& l) {
      check_use(s, l.buffer(), false);
      check_index(s, l.buffer(), l.idx());
      if (valid(l.buffer()) && l.idx().size() == k_.buffers[l.buffer()].shape.size()) check_carried_read(s, l);
    });
  }

  Index flat(int b, const std::vector<Index>& idx) const { return flat_index(k_.buffers[b].shape, idx); }

  // One term of a write's offset: |coefficient| times a value in [0, range].
  struct Term {
    int64_t coef, range;
  };

  // The mixed-radix rule: iterations of loop li write disjoint elements when
  // its own coefficient c exceeds what every smaller term (inner loops and
  // the view's axes) can add, and each term at least as large as c exceeds
  // the sum of all smaller ones, c's included. Then the largest term in
  // which two points differ outweighs everything below it, so two points
  // with the same offset agree on every term from c up, li's variable among
  // them. It takes loops nested in any order of stride (a collapsed nest of
  // tiles and other axes); the nested-reach rule is its case with no larger
  // term.
  bool disjoint_by_radix(const Affine& a, size_t li, const std::vector<Term>& tile) const {
    const LoopFrame& f = loops_[li];
    const int64_t c = std::abs(a.coef.at(f.var));
    const Interval& fr = ranges_.at(f.var);
    std::vector<Term> terms;
    for (size_t lj = li + 1; lj < loops_.size(); ++lj) {
      auto it = a.coef.find(loops_[lj].var);
      const Interval& r = ranges_.at(loops_[lj].var);
      if (it != a.coef.end() && it->second != 0 && r.hi > r.lo) terms.push_back({std::abs(it->second), r.hi - r.lo});
    }
    for (const Term& t : tile)
      if (t.coef != 0 && t.range > 0) terms.push_back(t);
    std::sort(terms.begin(), terms.end(), [](const Term& x, const Term& y) { return x.coef < y.coef; });
    int64_t below = 0;
    for (const Term& t : terms)
      if (t.coef < c) below += t.coef * t.range;
    if (below >= c) return false;
    int64_t sum = below + c * (fr.hi - fr.lo);
    for (const Term& t : terms) {
      if (t.coef < c) continue;
      if (t.coef <= sum) return false;
      sum += t.coef * t.range;
    }
    return true;
  }

  // A write of `b` from flat offset `off` to `end` (the last element of a
  // tile whose axes move it by `tile`'s terms; `off` for one element)
  // inside the loops of loops_.
  void check_write_disjoint(const Stmt& s, int b, const Index& off, const Index& end, const std::vector<Term>& tile,
                            bool scalar_sum) {
    for (size_t li = 0; li < loops_.size(); ++li) {
      const LoopFrame& f = loops_[li];
      if (f.kind != LoopKind::Parallel && f.kind != LoopKind::Vectorized) continue;
      if (f.allocated_inside.count(b)) continue;  // private to each iteration
      std::optional<Affine> a = as_affine(off);
      int64_t c = a ? (a->coef.count(f.var) ? a->coef.at(f.var) : 0) : 0;
      if (f.kind == LoopKind::Vectorized && scalar_sum && c == 0) continue;  // a vector reduction
      const std::string kind = loop_kind_name(f.kind);
      if (!a) {
        fail(s, "cannot show that the " + kind + " loop " + f.var + " writes disjoint elements of " +
                    k_.buffers[b].name + " (offset " + off.str() + " is not affine)");
        continue;
      }
      if (c == 0) {
        fail(s, "every iteration of the " + kind + " loop " + f.var + " writes the same elements of " + k_.buffers[b].name);
        continue;
      }
      // Within one iteration of f, the loops inside it move the offset by
      // at most `reach`; iterations are disjoint when that stays below |c|.
      // Variables of loops around f are the same for all its iterations.
      int64_t reach = 0;
      for (size_t lj = li + 1; lj < loops_.size(); ++lj) {
        auto it = a->coef.find(loops_[lj].var);
        if (it == a->coef.end()) continue;
        const Interval& r = ranges_.at(loops_[lj].var);
        reach += (it->second < 0 ? -it->second : it->second) * (r.hi - r.lo);
      }
      std::optional<Affine> ea = as_affine(end);
      if (ea) {
        for (auto& [v, k] : a->coef) ea->coef[v] -= k;
        ea->constant -= a->constant;
        bool constant_span = true;
        for (auto& [v, k] : ea->coef) constant_span &= k == 0;
        if (constant_span) reach += ea->constant;
        else ea.reset();
      }
      if (!ea) reach = c < 0 ? -c : c;
      if (c > 0 && reach >= c) {
        // Inner loops whose extents depend on outer variables (edge tiles,
        // a thread's range of rows), or an end that is a min: iteration p
        // writes [c p + lo, end] where lo is the smallest the rest of the
        // start reaches inside it; it stays below iteration p + 1's start
        // when end - c p - lo < c.
        Index rest;
        int64_t lo = a->constant;
        for (const auto& [v, k] : a->coef) {
          bool inner = false;
          for (size_t lj = li + 1; lj < loops_.size(); ++lj) inner |= loops_[lj].var == v;
          if (v == f.var || k == 0) continue;
          if (inner) lo += k < 0 ? k * ranges_.at(v).hi : 0;
          else rest = rest + Index(k) * Index::var(v);
        }
        std::optional<int64_t> hi = hi_of(end - Index(c) * Index::var(f.var) - rest);
        if (hi) reach = std::min(reach, *hi - lo);
      }
      if (reach >= (c < 0 ? -c : c) && !disjoint_by_radix(*a, li, tile))
        fail(s, "iterations of the " + kind + " loop " + f.var + " may write overlapping elements of " + k_.buffers[b].name);
    }
  }

  // The writes inside a parallel or vectorised loop to buffers allocated
  // outside it, by buffer: what a read inside it must not cross.
  std::map<int, std::vector<Index>> writes_inside(const Stmt& loop) const {
    std::set<int> inside;
    std::map<int, std::vector<Index>> writes;
    visit(loop, [&](const Stmt& x) {
      if (x.kind() == StmtKind::Alloc) inside.insert(x->buffer);
      if ((x.kind() == StmtKind::Store || x.kind() == StmtKind::Accumulate || x.kind() == StmtKind::Rescale) &&
          valid(x->buffer))
        writes[x->buffer].push_back(flat(x->buffer, x->idx));
      if ((x.kind() == StmtKind::Matmul || x.kind() == StmtKind::Copy) && valid(x->c.buffer))
        writes[x->c.buffer].push_back(x->c.offset);
    });
    for (int b : inside) writes.erase(b);
    return writes;
  }

  // A Load inside a parallel or vectorised loop f of a buffer f writes must
  // read inside its own iteration's slice: the same offset as a write, or
  // an offset with the writes' coefficient c of f's variable whose inner
  // loops move it by less than |c|. Anything else reads another
  // iteration's result, or a value another iteration is about to overwrite.
  void check_carried_read(const Stmt& s, const Value& load) {
    const int b = load.buffer();
    for (size_t li = 0; li < loops_.size(); ++li) {
      const LoopFrame& f = loops_[li];
      auto it = f.writes.find(b);
      if (it == f.writes.end()) continue;
      const Index off = flat(b, load.idx());
      bool same = false;
      for (const Index& w : it->second) same |= w.same_as(off);
      if (same) continue;
      std::optional<Affine> a = as_affine(off);
      bool ok = a.has_value();
      int64_t c = ok && a->coef.count(f.var) ? a->coef.at(f.var) : 0;
      for (const Index& w : it->second) {
        std::optional<Affine> wa = as_affine(w);
        int64_t wc = wa && wa->coef.count(f.var) ? wa->coef.at(f.var) : 0;
        ok = ok && wa && wc != 0 && wc == c;
      }
      if (ok) {
        int64_t reach = 0;
        for (size_t lj = li + 1; lj < loops_.size(); ++lj) {
          auto ci = a->coef.find(loops_[lj].var);
          if (ci == a->coef.end()) continue;
          const Interval& r = ranges_.at(loops_[lj].var);
          reach += (ci->second < 0 ? -ci->second : ci->second) * (r.hi - r.lo);
        }
        ok = reach < (c < 0 ? -c : c);
      }
      if (!ok)
        fail(s, std::string("the ") + loop_kind_name(f.kind) + " loop " + f.var + " reads " + k_.buffers[b].name +
                    " at " + off.str() + ", which another iteration may write");
    }
  }

  // The terms a view's axes add to its offset (extents at their largest).
  std::vector<Term> view_terms(const View& v, const std::vector<Index>& ext) const {
    std::vector<Term> t;
    for (size_t d = 0; d < ext.size() && d < v.strides.size(); ++d) {
      std::optional<Interval> e = bounds(ext[d], ranges_);
      t.push_back({std::abs(v.strides[d]), e ? e->hi - 1 : 0});
    }
    return t;
  }

  // The flat offset of a view's last element along its positive strides
  // (extents as indices: a tile cut by an edge).
  static Index view_end(const View& v, const std::vector<Index>& ext) {
    Index end = v.offset;
    for (size_t d = 0; d < ext.size() && d < v.strides.size(); ++d)
      if (v.strides[d] > 0) end = end + (ext[d] - Index(1)) * Index(v.strides[d]);
    return end;
  }

  void check_view(const Stmt& s, const View& v, const std::vector<Index>& ext, bool write) {
    check_use(s, v.buffer, write);
    if (!valid(v.buffer)) return;
    if (v.strides.size() != ext.size()) return fail(s, "a view needs one stride per extent");
    std::optional<Interval> r = bounds(v.offset, ranges_);
    if (!r) return fail(s, "cannot bound the offset " + v.offset.str());
    int64_t lo = r->lo;
    std::optional<int64_t> top = hi_of(view_end(v, ext));
    if (!top) return fail(s, "cannot bound the view of " + k_.buffers[v.buffer].name);
    int64_t hi = *top;
    for (size_t d = 0; d < ext.size(); ++d) {
      std::optional<Interval> e = bounds(ext[d], ranges_);
      if (!e) return fail(s, "cannot bound the extent " + ext[d].str());
      if (v.strides[d] < 0) lo += (e->hi - 1) * v.strides[d];
    }
    int64_t n = std::max<int64_t>(k_.buffers[v.buffer].numel(), 1);
    if (lo < 0 || hi >= n)
      fail(s, "view of " + k_.buffers[v.buffer].name + " spans [" + std::to_string(lo) + ", " + std::to_string(hi) +
                  "], outside [0, " + std::to_string(n) + ")");
  }

  void stmt(const Stmt& s) {
    const StmtNode& n = s.node();
    switch (n.kind) {
      case StmtKind::Seq: {
        std::vector<int> allocated;
        for (const Stmt& c : n.body) {
          stmt(c);
          if (c.kind() == StmtKind::Alloc) allocated.push_back(c->buffer);
        }
        for (int b : allocated) live_.erase(b);  // a scope's buffers end with it
        return;
      }
      case StmtKind::For: {
        std::optional<Interval> e = bounds(n.extent, ranges_);
        if (!e) return fail(s, "cannot bound the extent " + n.extent.str());
        if (e->hi <= 0) return;  // never runs
        if (ranges_.count(n.var)) fail(s, "the loop variable " + n.var + " shadows another");
        if (n.chunk < 0 || (n.chunk > 0 && n.loop != LoopKind::Parallel))
          fail(s, "a chunk of " + std::to_string(n.chunk) + " iterations on a " + loop_kind_name(n.loop) + " loop");
        ranges_[n.var] = Interval{0, std::max<int64_t>(e->hi - 1, 0)};
        loops_.push_back(LoopFrame{n.var, n.loop, n.extent, {}, {}});
        if (n.loop == LoopKind::Parallel || n.loop == LoopKind::Vectorized) loops_.back().writes = writes_inside(s);
        stmt(n.body.at(0));
        loops_.pop_back();
        ranges_.erase(n.var);
        return;
      }
      case StmtKind::Store:
        check_value(s, n.value);
        check_use(s, n.buffer, true);
        check_index(s, n.buffer, n.idx);
        if (valid(n.buffer)) check_write_disjoint(s, n.buffer, flat(n.buffer, n.idx), flat(n.buffer, n.idx), {}, false);
        written_.insert(n.buffer);
        return;
      case StmtKind::Accumulate:
      case StmtKind::Rescale:
        check_value(s, n.value);
        if (n.kind == StmtKind::Rescale) check_value(s, n.alpha);
        check_use(s, n.buffer, false);
        check_use(s, n.buffer, true);
        check_index(s, n.buffer, n.idx);
        if (valid(n.buffer)) {
          // A reduction into a scalar Register (any combine) may cross
          // vector lanes: the printer keeps one partial per lane.
          bool scalar_sum = n.kind == StmtKind::Accumulate && n.combine != ir::Combine::None &&
                            k_.buffers[n.buffer].scope == Scope::Register && k_.buffers[n.buffer].shape.empty();
          check_write_disjoint(s, n.buffer, flat(n.buffer, n.idx), flat(n.buffer, n.idx), {}, scalar_sum);
        }
        return;
      case StmtKind::Matmul: {
        check_view(s, n.a, {n.m, n.k}, false);
        check_view(s, n.b, {n.k, n.n}, false);
        // C is read unless keep is 0; a keep that varies must be 0 the
        // first time the statement runs (the first slice of a blocked sum
        // overwrites, later ones add).
        bool reads_c = !(n.keep.is_const() && n.keep.value() == 0);
        if (!n.keep.is_const()) {
          std::map<std::string, int64_t> first;
          for (const LoopFrame& f : loops_) first[f.var] = 0;
          bool bound = true;
          try {
            reads_c = n.keep.eval(first) != 0;
          } catch (const std::exception&) {
            bound = false;
          }
          if (!bound) fail(s, "keep " + n.keep.str() + " uses a variable of no enclosing loop");
        }
        if (reads_c) check_use(s, n.c.buffer, false);
        check_view(s, n.c, {n.m, n.n}, true);
        if (n.next.buffer >= 0) check_use(s, n.next.buffer, false);
        if (valid(n.c.buffer)) check_write_disjoint(s, n.c.buffer, n.c.offset, view_end(n.c, {n.m, n.n}), view_terms(n.c, {n.m, n.n}), false);
        written_.insert(n.c.buffer);
        return;
      }
      case StmtKind::Copy: {
        std::vector<Index> ext(n.extents.begin(), n.extents.end());
        check_view(s, n.a, ext, false);
        check_view(s, n.c, ext, true);
        if (valid(n.c.buffer)) check_write_disjoint(s, n.c.buffer, n.c.offset, view_end(n.c, ext), view_terms(n.c, ext), false);
        written_.insert(n.c.buffer);
        return;
      }
      case StmtKind::Prefetch: check_index(s, n.buffer, n.idx); return;
      case StmtKind::Alloc:
        if (!valid(n.buffer)) return fail(s, "buffer #" + std::to_string(n.buffer) + " does not exist");
        if (k_.buffers[n.buffer].scope == Scope::Input || k_.buffers[n.buffer].scope == Scope::Output)
          return fail(s, "allocates the parameter " + k_.buffers[n.buffer].name);
        if (live_.count(n.buffer)) fail(s, k_.buffers[n.buffer].name + " is allocated twice");
        live_.insert(n.buffer);
        written_.erase(n.buffer);
        for (LoopFrame& f : loops_) f.allocated_inside.insert(n.buffer);
        return;
      case StmtKind::Free:
        if (!valid(n.buffer) || !live_.count(n.buffer)) return fail(s, "frees a buffer that is not allocated");
        if (k_.buffers[n.buffer].scope != Scope::Memory) fail(s, "only Memory buffers are freed; others end with their scope");
        live_.erase(n.buffer);
        written_.erase(n.buffer);
        return;
      case StmtKind::Comment: return;
    }
  }

  const Kernel& k_;
  std::vector<std::string> problems_;
  std::set<int> live_, written_;
  std::map<std::string, Interval> ranges_;
  std::vector<LoopFrame> loops_;
};

}  // namespace

std::vector<std::string> verify(const Kernel& k) { return Verifier(k).run(); }

void require_well_formed(const Kernel& k, const std::string& what) {
  std::vector<std::string> problems = verify(k);
  if (!problems.empty()) throw InternalError(what + " is ill-formed: " + problems.front());
}

}  // namespace axon::tile
