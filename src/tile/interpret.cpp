#include "tile/interpret.h"

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "ir/real.h"
#include "tile/value_eval.h"

namespace axon::tile {

namespace {

using ir::Real;

class Machine {
 public:
  explicit Machine(const Kernel& k) : k_(k), mem_(k.buffers.size()) {}

  std::vector<ir::Tensor> run(const std::vector<ir::Tensor>& inputs) {
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      const Buffer& buf = k_.buffers[b];
      if (buf.scope == Scope::Input) {
        if (buf.param < 0 || buf.param >= static_cast<int>(inputs.size()))
          throw std::runtime_error("tile interpret: no input for " + buf.name);
        mem_[b] = inputs[buf.param].data;
        if (static_cast<int64_t>(mem_[b].size()) != buf.numel())
          throw std::runtime_error("tile interpret: input " + buf.name + " has the wrong size");
      }
      if (buf.scope == Scope::Output) mem_[b].assign(buf.numel(), kPoison);
    }
    exec(k_.body);
    std::vector<ir::Tensor> out;
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      const Buffer& buf = k_.buffers[b];
      if (buf.scope != Scope::Output) continue;
      if (static_cast<int>(out.size()) <= buf.output) out.resize(buf.output + 1);
      out[buf.output] = ir::Tensor{ir::Type{buf.dtype, buf.shape}, mem_[b]};
    }
    return out;
  }

 private:
  static constexpr double kPoison = std::numeric_limits<double>::quiet_NaN();

  int64_t flat(int b, const std::vector<Index>& idx) const {
    const Buffer& buf = k_.buffers.at(b);
    if (idx.size() != buf.shape.size())
      throw std::runtime_error("tile interpret: " + buf.name + " indexed with " + std::to_string(idx.size()) +
                               " indices, rank " + std::to_string(buf.shape.size()));
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = idx[d].eval(env_);
      if (i < 0 || i >= buf.shape[d])
        throw std::runtime_error("tile interpret: " + buf.name + " index " + std::to_string(i) + " out of [0, " +
                                 std::to_string(buf.shape[d]) + ") in dimension " + std::to_string(d));
      off = off * buf.shape[d] + i;
    }
    return off;
  }
  double& at(int b, int64_t off) {
    std::vector<double>& m = mem_.at(b);
    if (off < 0 || off >= static_cast<int64_t>(m.size()))
      throw std::runtime_error("tile interpret: " + k_.buffers[b].name + " offset " + std::to_string(off) +
                               " out of bounds (not allocated?)");
    return m[off];
  }

  Real eval(const Value& v) {
    return evaluate<Real>(
        v, [](ir::DType) { return Real{}; }, [&](const Value& l) { return Real{at(l.buffer(), flat(l.buffer(), l.idx()))}; },
        [&](const Index& i) { return Real{static_cast<double>(i.eval(env_))}; });
  }

  void exec(const Stmt& s) {
    const StmtNode& n = s.node();
    switch (n.kind) {
      case StmtKind::Seq:
        for (const Stmt& c : n.body) exec(c);
        return;
      case StmtKind::For: {
        const int64_t e = n.extent.eval(env_);
        auto saved = env_.find(n.var) != env_.end() ? std::optional<int64_t>(env_[n.var]) : std::nullopt;
        for (int64_t t = 0; t < e; ++t) {
          env_[n.var] = n.loop == LoopKind::Parallel ? e - 1 - t : t;
          exec(n.body.at(0));
        }
        if (saved) env_[n.var] = *saved;
        else env_.erase(n.var);
        return;
      }
      case StmtKind::Store: {
        double v = eval(n.value).v;
        at(n.buffer, flat(n.buffer, n.idx)) = v;
        return;
      }
      case StmtKind::Accumulate: {
        double& dst = at(n.buffer, flat(n.buffer, n.idx));
        dst = ir::combine_step<Real>(n.combine, Real{dst}, eval(n.value)).v;
        return;
      }
      case StmtKind::Rescale: {
        double& dst = at(n.buffer, flat(n.buffer, n.idx));
        dst = (Real{dst} * eval(n.alpha) + eval(n.value)).v;
        return;
      }
      case StmtKind::Matmul: {
        const int64_t c0 = n.c.offset.eval(env_), a0 = n.a.offset.eval(env_), b0 = n.b.offset.eval(env_);
        const int64_t m = n.m.eval(env_), nn = n.n.eval(env_), kk = n.k.eval(env_);
        const bool keep = n.keep.eval(env_) != 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < nn; ++j) {
            double& c = at(n.c.buffer, c0 + i * n.c.strides.at(0) + j * n.c.strides.at(1));
            if (!keep) c = 0;
            for (int64_t l = 0; l < kk; ++l)
              c += at(n.a.buffer, a0 + i * n.a.strides.at(0) + l * n.a.strides.at(1)) *
                   at(n.b.buffer, b0 + l * n.b.strides.at(0) + j * n.b.strides.at(1));
          }
        return;
      }
      case StmtKind::Copy: {
        const int64_t d0 = n.c.offset.eval(env_), s0 = n.a.offset.eval(env_);
        std::vector<int64_t> i(n.extents.size(), 0);
        int64_t total = 1;
        for (int64_t e : n.extents) total *= e;
        for (int64_t t = 0; t < total; ++t) {
          int64_t rem = t, d = d0, src = s0;
          for (int ax = static_cast<int>(n.extents.size()) - 1; ax >= 0; --ax) {
            int64_t x = rem % n.extents[ax];
            rem /= n.extents[ax];
            d += x * n.c.strides.at(ax);
            src += x * n.a.strides.at(ax);
          }
          at(n.c.buffer, d) = at(n.a.buffer, src);
        }
        return;
      }
      case StmtKind::Prefetch: return;
      case StmtKind::Alloc: mem_.at(n.buffer).assign(std::max<int64_t>(k_.buffers.at(n.buffer).numel(), 1), kPoison); return;
      case StmtKind::Free: mem_.at(n.buffer).clear(); return;
      case StmtKind::Comment: return;
    }
  }

  const Kernel& k_;
  std::vector<std::vector<double>> mem_;
  std::map<std::string, int64_t> env_;
};

}  // namespace

std::vector<ir::Tensor> interpret(const Kernel& k, const std::vector<ir::Tensor>& inputs) {
  return Machine(k).run(inputs);
}

}  // namespace axon::tile
