#include "tile/passes/exp2_scaled.h"

#include <set>
#include <string>

namespace axon::tile {

namespace {

constexpr double kLog2E = 1.4426950408889634;

class Folder {
 public:
  explicit Folder(Kernel* k) : k_(*k), names_(*k) {}

  Stmt stmt(const Stmt& s) {
    switch (s.kind()) {
      case StmtKind::Seq: {
        std::vector<Stmt> body;
        for (const Stmt& b : s->body) body.push_back(stmt(b));
        return s.with([&](StmtNode& n) { n.body = std::move(body); });
      }
      case StmtKind::For: {
        bool inner = false;
        visit(s->body.at(0), [&](const Stmt& x) { inner |= x.kind() == StmtKind::For; });
        if (inner || s->loop != LoopKind::Vectorized) {
          Stmt body = stmt(s->body.at(0));
          return s.with([&](StmtNode& n) { n.body = {body}; });
        }
        return vector_loop(s);
      }
      default: return s;
    }
  }

 private:
  // The loop with its exps folded, after the Stores of their scales.
  Stmt vector_loop(const Stmt& loop) {
    written_.clear();
    for (int b : written_buffers(loop)) written_.insert(b);
    var_ = loop->var;
    hoisted_.clear();
    Stmt body = rewrite(loop->body.at(0), [&](const Stmt& x) -> Stmt {
      if (x.kind() != StmtKind::Store && x.kind() != StmtKind::Accumulate && x.kind() != StmtKind::Rescale) return x;
      return x.with([&](StmtNode& n) {
        n.value = fold(n.value);
        if (n.alpha.defined()) n.alpha = fold(n.alpha);
      });
    });
    if (hoisted_.empty()) return loop;
    std::vector<Stmt> seq = hoisted_;
    seq.push_back(loop.with([&](StmtNode& n) { n.body = {body}; }));
    return Stmt::seq(std::move(seq));
  }

  bool invariant(const Value& c) const {
    if (c.uses(var_)) return false;
    bool reads_written = false;
    c.visit_loads([&](const Value& l) { reads_written |= written_.count(l.buffer()) > 0; });
    return !reads_written;
  }

  Value fold(const Value& v) {
    if (v.kind() != ValueKind::Apply) return v;
    std::vector<Value> args;
    for (const Value& a : v.args()) args.push_back(fold(a));
    const ir::Node& op = v.op();
    if (op.op == ir::Op::Exp && op.type.dtype == ir::DType::F32 && args[0].kind() == ValueKind::Apply &&
        args[0].op().op == ir::Op::Mul && args[0].dtype() == ir::DType::F32) {
      const Value& m = args[0];
      for (int i : {0, 1}) {
        const Value &c = m.args()[i], &x = m.args()[1 - i];
        if (!invariant(c) || !x.uses(var_)) continue;
        const int s = scale_of(c);
        ir::Node pow = op;
        pow.op = ir::Op::Pow;
        return Value::apply(pow, {Value::constant(2.0, ir::DType::F32),
                                  Value::apply(m.op(), {x, Value::load(s, {}, ir::DType::F32)})});
      }
    }
    return Value::apply(op, std::move(args));
  }

  // A Register holding fl32(c * log2(e)), the product in float64.
  int scale_of(const Value& c) {
    Buffer b;
    b.name = names_.take("t", "_log2e");
    b.dtype = ir::DType::F32;
    b.scope = Scope::Register;
    const int id = k_.add_buffer(b);
    ir::Node to64{}, to32{}, mul{};
    to64.op = to32.op = ir::Op::Cast;
    to64.type = ir::Type{ir::DType::F64, {}};
    to32.type = ir::Type{ir::DType::F32, {}};
    mul.op = ir::Op::Mul;
    mul.type = ir::Type{ir::DType::F64, {}};
    Value scale = Value::apply(to32, {Value::apply(mul, {Value::apply(to64, {c}), Value::constant(kLog2E, ir::DType::F64)})});
    hoisted_.push_back(Stmt::alloc(id));
    hoisted_.push_back(Stmt::store(id, {}, scale));
    return id;
  }

  Kernel& k_;
  NameSource names_;
  std::set<int> written_;
  std::string var_;
  std::vector<Stmt> hoisted_;
};

}  // namespace

Kernel exp2_scaled(const Kernel& k) {
  Kernel out = k;
  Folder f(&out);
  out.body = f.stmt(k.body);
  return out;
}

}  // namespace axon::tile
