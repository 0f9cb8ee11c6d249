#include "tile/passes/interchange_sums.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/type.h"
#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

Stmt wrap(const std::vector<Stmt>& loops, Stmt body) {
  for (auto it = loops.rbegin(); it != loops.rend(); ++it)
    body = Stmt::loop((*it)->var, (*it)->extent, (*it)->loop, body, (*it)->threads);
  return body;
}

class Interchange {
 public:
  explicit Interchange(Kernel* k) : k_(*k), names_(*k) {}

  Stmt walk(const Stmt& s) {
    if (s.kind() == StmtKind::For)
      if (std::optional<Stmt> done = interchange(s)) return *done;
    if (s->body.empty()) return s;
    return s.with([&](StmtNode& n) {
      for (Stmt& c : n.body) c = walk(c);
    });
  }

  bool takes(const Stmt& s) { return s.kind() == StmtKind::For && interchange(s).has_value(); }

 private:
  // The fold's shape, checked: Allocs, Stores and Accumulates of Register
  // scalars (the accumulators), serial loops over reduction variables and
  // nested sequences of these, and
  // at the top level the Store of the result into one other buffer.
  struct Fold {
    std::set<int> regs;
    std::set<std::string> rvars;
    int target = -1;
    std::vector<Index> o;
    std::vector<Value> values;
  };
  bool scalar_reg(int b) const {
    const Buffer& x = k_.buffers[b];
    return x.scope == Scope::Register && x.shape.empty() && (x.dtype == ir::DType::F32 || x.dtype == ir::DType::F64);
  }
  bool check(const std::vector<Stmt>& body, bool top, Fold* f) const {
    for (const Stmt& s : body) {
      switch (s.kind()) {
        case StmtKind::Comment: break;
        case StmtKind::Alloc:
          if (!scalar_reg(s->buffer)) return false;
          f->regs.insert(s->buffer);
          break;
        case StmtKind::Store:
        case StmtKind::Accumulate:
          f->values.push_back(s->value);
          if (f->regs.count(s->buffer) && s->idx.empty()) break;
          if (!top || s.kind() != StmtKind::Store || f->target >= 0) return false;
          f->target = s->buffer;
          f->o = s->idx;
          break;
        case StmtKind::Seq:
          if (!check(statements(s), false, f)) return false;
          break;
        case StmtKind::For:
          if (!serial_const_loop(s)) return false;
          f->rvars.insert(s->var);
          if (!check(statements(s->body[0]), false, f)) return false;
          break;
        default: return false;
      }
    }
    return true;
  }

  // The interchanged form of the nest rooted at `top`, or nullopt.
  std::optional<Stmt> interchange(const Stmt& top) {
    std::vector<Stmt> kept;
    Stmt cur = top;
    std::vector<Stmt> body;
    int64_t points = 1;
    while (true) {
      if (!serial_const_loop(cur)) return std::nullopt;
      kept.push_back(cur);
      points *= cur->extent.value();
      body = statements(cur->body[0]);
      if (body.size() == 1 && body[0].kind() == StmtKind::For) {
        cur = body[0];
        continue;
      }
      break;
    }
    Fold f;
    if (!check(body, true, &f) || f.target < 0 || f.rvars.empty()) return std::nullopt;
    const Buffer& tb = k_.buffers[f.target];
    if (tb.scope == Scope::Register || tb.scope == Scope::Input || f.o.size() != tb.shape.size()) return std::nullopt;
    for (int r : f.regs)
      if (k_.buffers[r].dtype != tb.dtype) return std::nullopt;
    if (points * ir::dtype_bytes(tb.dtype) > kMaxPromotedBytes) return strip_mined(top, kept, tb.dtype);
    // o: constants, outer variables (a batch the nest runs inside), and the
    // kept variables, each once, plus terms of outer variables (a block of a
    // strip-mined kept loop).
    std::set<std::string> kept_vars, used;
    for (const Stmt& l : kept) kept_vars.insert(l->var);
    for (const Index& x : f.o) {
      if (x.is_const()) continue;
      std::optional<Affine> a = as_affine(x);
      if (!a) return std::nullopt;
      std::string var;
      for (const auto& [name, c] : a->coef) {
        if (f.rvars.count(name)) return std::nullopt;
        if (!kept_vars.count(name)) continue;
        if (c != 1 || !var.empty()) return std::nullopt;
        var = name;
      }
      if (var.empty()) continue;  // outer variables only: fixed inside the nest
      if (!used.insert(var).second) return std::nullopt;
    }
    if (used.size() != kept.size()) return std::nullopt;
    // Values read only inputs and buffers the fold does not write, and the
    // accumulators; worth it when a load runs contiguously along the
    // innermost kept variable and none along a reduction variable.
    const std::string& inner_var = kept.back()->var;
    bool contiguous = false, strided_sum = true, reads_target = false;
    for (const Value& v : f.values) {
      reads_target |= v.uses_buffer(f.target);
      v.visit_loads([&](const Value& l) {
        if (l.idx().empty() || f.regs.count(l.buffer())) return;
        const Index& back = l.idx().back();
        std::optional<Affine> a = as_affine(back);
        if (a && a->coef.count(inner_var) && a->coef.at(inner_var) == 1) contiguous = true;
        for (const std::string& r : f.rvars)
          if (back.uses(r)) strided_sum = false;
      });
    }
    if (reads_target || !contiguous || !strided_sum) return std::nullopt;
    // Each accumulator becomes a Scratch array over the kept loops.
    std::vector<Index> at;
    ir::Shape shape;
    for (const Stmt& l : kept) {
      at.push_back(Index::var(l->var));
      shape.push_back(l->extent.value());
    }
    std::map<int, int> promoted;
    std::vector<Stmt> out;
    for (int r : f.regs) {
      Buffer b = k_.buffers[r];
      b.name = names_.take("acc", "_lanes");
      b.scope = Scope::Scratch;
      b.shape = shape;
      promoted[r] = k_.add_buffer(b);
      out.push_back(Stmt::alloc(promoted[r]));
    }
    auto value = [&](const Value& v) {
      return v.replace_loads([&](const Value& l) -> std::optional<Value> {
        auto it = promoted.find(l.buffer());
        if (it == promoted.end()) return std::nullopt;
        return Value::load(it->second, at, l.dtype());
      });
    };
    std::function<std::vector<Stmt>(const std::vector<Stmt>&)> distribute = [&](const std::vector<Stmt>& ss) {
      std::vector<Stmt> res;
      for (const Stmt& s : ss) {
        if (s.kind() == StmtKind::Alloc || s.kind() == StmtKind::Comment) continue;
        if (s.kind() == StmtKind::Seq) {
          res.push_back(Stmt::seq(distribute(statements(s))));
          continue;
        }
        if (s.kind() == StmtKind::For) {
          res.push_back(s.with([&](StmtNode& n) { n.body = {Stmt::seq(distribute(statements(n.body[0])))}; }));
          continue;
        }
        auto it = promoted.find(s->buffer);
        const int b = it == promoted.end() ? s->buffer : it->second;
        const std::vector<Index> idx = it == promoted.end() ? s->idx : at;
        res.push_back(wrap(kept, s.kind() == StmtKind::Store ? Stmt::store(b, idx, value(s->value))
                                                             : Stmt::accumulate(b, idx, s->combine, value(s->value))));
      }
      return res;
    };
    std::vector<Stmt> rest = distribute(body);
    out.insert(out.end(), rest.begin(), rest.end());
    return Stmt::seq(std::move(out));
  }

  // A single kept loop too long for lane arrays: blocks of B of its
  // iterations, each interchanged (`for ib { for ii < B: ... v = ib*B + ii }`),
  // B the largest divisor of its extent whose arrays take at most
  // kStripBytes (at least kMinStrip elements).
  std::optional<Stmt> strip_mined(const Stmt& top, const std::vector<Stmt>& kept, ir::DType d) {
    if (kept.size() != 1) return std::nullopt;
    const int64_t n = top->extent.value();
    const int64_t most = kStripBytes / ir::dtype_bytes(d);
    int64_t b = 0;
    for (int64_t c = std::min(n / 2, most); c >= kMinStrip && b == 0; --c)
      if (n % c == 0) b = c;
    if (b == 0) return std::nullopt;
    const std::string ib = names_.take("i"), ii = names_.take("i");
    Stmt block = Stmt::loop(ii, Index(b), LoopKind::Serial,
                            substitute_var(top->body[0], top->var, Index::var(ib) * Index(b) + Index::var(ii)));
    std::optional<Stmt> done = interchange(block);
    if (!done) return std::nullopt;
    return Stmt::loop(ib, Index(n / b), LoopKind::Serial, *done);
  }

  static constexpr int64_t kMaxPromotedBytes = 64 * 1024;  // the printer's stack scratch limit
  static constexpr int64_t kStripBytes = 16 * 1024;        // a strip's lane arrays stay in L1
  static constexpr int64_t kMinStrip = 256;
  Kernel& k_;
  NameSource names_;
};

}  // namespace

Kernel interchange_sums(const Kernel& k) {
  Kernel out = k;
  Interchange pass(&out);
  out.body = pass.walk(k.body);
  return out;
}

bool interchanges(const Kernel& k, const Stmt& nest) {
  Kernel scratch = k;  // the trial adds its lane buffers here, not to k
  return Interchange(&scratch).takes(nest);
}

}  // namespace axon::tile
