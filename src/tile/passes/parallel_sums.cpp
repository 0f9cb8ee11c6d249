#include "tile/passes/parallel_sums.h"

#include <map>
#include <set>

#include "ir/element_def.h"
#include "ir/real.h"
#include "ir/type.h"
#include "tile/passes/loop_access.h"
#include "tile/passes/mark_loops.h"
#include "tile/passes/parallelize.h"
#include "tile/verify.h"

namespace axon::tile {

namespace {

constexpr int64_t kMaxPartialBytes = 64 * 1024;  // the printer's stack scratch

// How often each buffer is referenced (loads, writes, views) in `s`,
// Allocs and Frees not counted.
void count_refs(const Stmt& s, std::map<int, int64_t>* refs) {
  visit(s, [&](const Stmt& x) {
    auto value = [&](const Value& v) {
      if (v.defined()) v.visit_loads([&](const Value& l) { ++(*refs)[l.buffer()]; });
    };
    switch (x.kind()) {
      case StmtKind::Store:
      case StmtKind::Accumulate:
      case StmtKind::Rescale:
      case StmtKind::Prefetch: ++(*refs)[x->buffer]; break;
      case StmtKind::Matmul:
      case StmtKind::Copy:
        for (const View* w : {&x->c, &x->a, &x->b})
          if (w->buffer >= 0) ++(*refs)[w->buffer];
        break;
      default: break;
    }
    value(x->value);
    value(x->alpha);
  });
}

// The first statement of `s` in program order that touches buffer `b`, or
// an undefined Stmt.
Stmt first_touch(const Stmt& s, int b) {
  Stmt found;
  visit(s, [&](const Stmt& x) {
    if (found.defined() || x.kind() == StmtKind::Seq || x.kind() == StmtKind::For) return;
    if (x.kind() == StmtKind::Alloc || x.kind() == StmtKind::Free || x.kind() == StmtKind::Comment) return;
    std::map<int, int64_t> r;
    count_refs(x, &r);
    if (r.count(b)) found = x;
  });
  return found;
}

// `s` with every reference of buffer `from` made to `to`.
Stmt rename_buffer(const Stmt& s, int from, int to, ir::DType d) {
  auto value = [&](const Value& v) {
    if (!v.defined()) return v;
    return v.replace_loads([&](const Value& l) -> std::optional<Value> {
      if (l.buffer() != from) return std::nullopt;
      return Value::load(to, l.idx(), d);
    });
  };
  return rewrite(s, [&](const Stmt& x) {
    return x.with([&](StmtNode& n) {
      if (n.kind != StmtKind::Seq && n.kind != StmtKind::For && n.buffer == from) n.buffer = to;
      for (View* w : {&n.c, &n.a, &n.b, &n.next})
        if (w->buffer == from) w->buffer = to;
      n.value = value(n.value);
      n.alpha = value(n.alpha);
    });
  });
}

class Splitter {
 public:
  Splitter(Kernel* k, int threads) : k_(*k), threads_(threads), names_(*k) { count_refs(k->body, &refs_); }

  Stmt run(const Stmt& s) {
    if (s.kind() == StmtKind::For) {
      if (s->loop != LoopKind::Serial) return s;  // already on threads, or lanes
      if (s->extent.is_const() && s->extent.value() >= 2 && points(s) >= kParallelMinPoints)
        if (std::optional<Stmt> done = split(s)) return *done;
    }
    if (s.kind() != StmtKind::Seq && s.kind() != StmtKind::For) return s;
    std::vector<Stmt> body;
    for (const Stmt& c : s->body) body.push_back(run(c));
    if (s.kind() == StmtKind::Seq) return Stmt::seq(std::move(body));
    return s.with([&](StmtNode& n) { n.body = std::move(body); });
  }

  // Buffers whose Allocs moved into a parallel loop: the old Allocs go.
  const std::set<int>& privatized() const { return privatized_; }

 private:
  struct Target {
    ir::Combine combine = ir::Combine::None;
  };

  // The loop's reduction targets and its privatizable buffers, or nullopt.
  std::optional<std::pair<std::map<int, Target>, std::set<int>>> analyse(const Stmt& loop) const {
    std::set<int> inside;
    bool ok = true;
    visit(loop, [&](const Stmt& s) {
      if (s.kind() == StmtKind::Alloc) inside.insert(s->buffer);
      if (s.kind() == StmtKind::For && s.node().var != loop->var && s->loop == LoopKind::Parallel) ok = false;
    });
    if (!ok) return std::nullopt;
    std::map<int, int64_t> here;
    count_refs(loop, &here);
    std::map<int, Target> targets;
    std::set<int> priv;
    visit(loop, [&](const Stmt& s) {
      if (!ok) return;
      std::vector<int> written;
      if (s.kind() == StmtKind::Matmul || s.kind() == StmtKind::Copy) written.push_back(s->c.buffer);
      if (s.kind() == StmtKind::Store || s.kind() == StmtKind::Accumulate || s.kind() == StmtKind::Rescale)
        written.push_back(s->buffer);
      for (int b : written) {
        if (inside.count(b)) continue;
        const Buffer& buf = k_.buffers[b];
        // A buffer only this loop uses, written first: each thread its own.
        const bool local = (buf.scope == Scope::Register || buf.scope == Scope::Scratch) && refs_.at(b) == here.at(b);
        if (local) {
          Stmt first = first_touch(loop, b);
          if (!first.defined() || first.kind() != StmtKind::Store || first->buffer != b || first->value.uses_buffer(b))
            ok = false;
          priv.insert(b);
          continue;
        }
        const bool acc = s.kind() == StmtKind::Accumulate && s->combine != ir::Combine::None &&
                         buf.scope != Scope::Input && !s->value.uses_buffer(b) &&
                         buf.numel() * ir::dtype_bytes(buf.dtype) <= kMaxPartialBytes;
        bool uses_v = false;
        for (const Index& i : s->idx) uses_v |= i.uses(loop->var);
        if (!acc || uses_v || (targets.count(b) && targets[b].combine != s->combine)) {
          ok = false;
          return;
        }
        targets[b].combine = s->combine;
      }
    });
    if (!ok || targets.empty()) return std::nullopt;
    // No target is read inside the loop but by its own Accumulates, and no
    // privatized buffer is a target.
    for (const auto& [b, t] : targets) {
      if (priv.count(b)) return std::nullopt;
      bool read = false;
      visit(loop, [&](const Stmt& s) {
        auto check = [&](const Value& v) { read |= v.defined() && v.uses_buffer(b); };
        check(s->value);
        check(s->alpha);
        if (s.kind() == StmtKind::Matmul || s.kind() == StmtKind::Copy)
          read |= s->a.buffer == b || s->b.buffer == b;
        if (s.kind() == StmtKind::Accumulate && s->buffer == b) return;
        if (s.kind() == StmtKind::Rescale && s->buffer == b) read = true;
      });
      if (read) return std::nullopt;
    }
    return std::make_pair(targets, priv);
  }

  // Loops over every element of `shape`, around f(indices).
  Stmt over(const ir::Shape& shape, const std::function<Stmt(const std::vector<Index>&)>& f) {
    std::vector<std::string> vars;
    std::vector<Index> at;
    for (size_t d = 0; d < shape.size(); ++d) {
      vars.push_back(names_.take("i"));
      at.push_back(Index::var(vars.back()));
    }
    Stmt body = f(at);
    for (size_t d = shape.size(); d-- > 0;) body = Stmt::loop(vars[d], Index(shape[d]), LoopKind::Serial, body);
    return body;
  }

  std::optional<Stmt> split(const Stmt& loop) {
    auto found = analyse(loop);
    if (!found) return std::nullopt;
    const auto& [targets, priv] = *found;
    const int64_t n = loop->extent.value();
    const int64_t chunk = (n + threads_ - 1) / threads_;
    const int64_t parts_n = (n + chunk - 1) / chunk;
    const std::string p = names_.take("r");
    const Index pv = Index::var(p);

    Stmt inner = loop->body.at(0);
    std::vector<Stmt> allocs_outside, head, tail, fold;
    for (int b : priv) {
      Buffer copy = k_.buffers[b];
      copy.name = names_.take("t", "_own");
      const int c = k_.add_buffer(copy);
      inner = rename_buffer(inner, b, c, copy.dtype);
      head.push_back(Stmt::alloc(c));
      privatized_.insert(b);
    }
    for (const auto& [b, t] : targets) {
      const Buffer& acc = k_.buffers[b];
      const ir::DType d = acc.dtype;
      const ir::Shape shape = acc.shape;
      Buffer part = acc;
      part.name = names_.take("acc", "_part");
      part.scope = shape.empty() ? Scope::Register : Scope::Scratch;
      part.param = part.output = -1;
      const int pr = k_.add_buffer(part);
      Buffer slots;
      slots.name = names_.take("t", "_parts");
      slots.dtype = d;
      slots.shape = shape;
      slots.shape.insert(slots.shape.begin(), parts_n);
      slots.scope = Scope::Memory;
      const int pb = k_.add_buffer(slots);
      inner = rename_buffer(inner, b, pr, d);
      const double identity = ir::combine_identity<ir::Real>(t.combine, ir::Real{}).v;
      allocs_outside.push_back(Stmt::alloc(pb));
      head.push_back(Stmt::alloc(pr));
      head.push_back(over(shape, [&](const std::vector<Index>& j) { return Stmt::store(pr, j, Value::constant(identity, d)); }));
      tail.push_back(over(shape, [&](const std::vector<Index>& j) {
        std::vector<Index> at = j;
        at.insert(at.begin(), pv);
        return Stmt::store(pb, at, Value::load(pr, j, d));
      }));
      fold.push_back(over(shape, [&](const std::vector<Index>& j) {
        std::vector<Index> at = j;
        at.insert(at.begin(), pv);
        return Stmt::accumulate(b, j, t.combine, Value::load(pb, at, d));
      }));
    }
    Stmt chunk_loop;
    if (chunk == 1) {
      chunk_loop = substitute_var(inner, loop->var, pv);
    } else {
      const std::string q = names_.take("r");
      Index extent = n % chunk == 0 ? Index(chunk) : min(Index(chunk), Index(n) - pv * Index(chunk));
      chunk_loop = Stmt::loop(q, extent, LoopKind::Serial,
                              substitute_var(inner, loop->var, pv * Index(chunk) + Index::var(q)));
    }
    std::vector<Stmt> body = head;
    body.push_back(chunk_loop);
    body.insert(body.end(), tail.begin(), tail.end());
    Stmt par = Stmt::loop(p, Index(parts_n), LoopKind::Parallel, Stmt::seq(std::move(body)), threads_);
    Stmt combine = Stmt::loop(p, Index(parts_n), LoopKind::Serial, Stmt::seq(std::move(fold)));
    std::vector<Stmt> out = allocs_outside;
    out.push_back(par);
    out.push_back(combine);
    // A scope of its own, so that the slots end with it.
    return Stmt::seq(std::move(out));
  }

  Kernel& k_;
  int threads_;
  NameSource names_;
  std::map<int, int64_t> refs_;
  std::set<int> privatized_;
};

}  // namespace

Kernel parallel_sums(const Kernel& k, int threads) {
  if (threads <= 1) return k;
  Kernel out = k;
  Splitter s(&out, threads);
  Stmt body = s.run(out.body);
  // The Allocs of buffers each thread now allocates for itself.
  body = rewrite(body, [&](const Stmt& x) {
    if (x.kind() != StmtKind::Seq) return x;
    std::vector<Stmt> kept;
    for (const Stmt& c : x->body)
      if (!(c.kind() == StmtKind::Alloc && s.privatized().count(c->buffer))) kept.push_back(c);
    return kept.size() == x->body.size() ? x : Stmt::seq(std::move(kept));
  });
  out.body = body;
  // The split is the verifier's to accept: the kernel as it came otherwise.
  if (verify(out).size() > verify(k).size()) return k;
  return out;
}

}  // namespace axon::tile
