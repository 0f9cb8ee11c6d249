#include "tile/print.h"

#include <sstream>

#include "ir/type.h"

namespace axon::tile {

namespace {

std::string idx_str(const std::vector<Index>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + idx[i].str();
  return s + "]";
}

std::string view_str(const Kernel& k, const View& v) {
  std::string s = k.buffers.at(v.buffer).name + "{offset " + v.offset.str() + ", strides [";
  for (size_t i = 0; i < v.strides.size(); ++i) s += (i ? ", " : "") + std::to_string(v.strides[i]);
  return s + "]}";
}

const char* combine_op(ir::Combine c) {
  switch (c) {
    case ir::Combine::Sum: return "+=";
    case ir::Combine::Max: return "max=";
    case ir::Combine::Min: return "min=";
    case ir::Combine::None: return "=";
  }
  return "?";
}

class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  std::string value(const Value& v) const {
    return v.str([&](int b) { return k_.buffers.at(b).name; });
  }

  void stmt(const Stmt& s, int depth) {
    const std::string pad(2 * depth, ' ');
    const StmtNode& n = s.node();
    switch (n.kind) {
      case StmtKind::Seq:
        if (depth > 0 && has_alloc(s)) {
          os_ << pad << "{\n";
          for (const Stmt& c : n.body) stmt(c, depth + 1);
          os_ << pad << "}\n";
        } else {
          for (const Stmt& c : n.body) stmt(c, depth);
        }
        return;
      case StmtKind::For:
        os_ << pad << "for " << n.var << " in [0, " << n.extent.str() << ") " << loop_kind_name(n.loop);
        if (n.loop == LoopKind::Parallel && (n.threads > 0 || n.chunk > 0)) {
          os_ << "(";
          if (n.threads > 0) os_ << n.threads << " threads" << (n.chunk > 0 ? ", " : "");
          if (n.chunk > 0) os_ << "chunks of " << n.chunk;
          os_ << ")";
        }
        os_ << " {\n";
        stmt(n.body.at(0), depth + 1);
        os_ << pad << "}\n";
        return;
      case StmtKind::Store:
        os_ << pad << name(n.buffer) << idx_str(n.idx) << " = " << value(n.value) << (n.streaming ? "  (streaming)" : "")
            << "\n";
        return;
      case StmtKind::Accumulate:
        os_ << pad << name(n.buffer) << idx_str(n.idx) << " " << combine_op(n.combine) << " " << value(n.value) << "\n";
        return;
      case StmtKind::Rescale:
        os_ << pad << name(n.buffer) << idx_str(n.idx) << " = " << name(n.buffer) << idx_str(n.idx) << " * "
            << value(n.alpha) << " + " << value(n.value) << "\n";
        return;
      case StmtKind::Matmul:
        os_ << pad << "matmul " << view_str(k_, n.c)
            << (n.keep.is_const() ? (n.keep.value() != 0 ? " += " : " = ") : " (" + n.keep.str() + " ? += : =) ")
            << view_str(k_, n.a) << " . " << view_str(k_, n.b) << " (" << n.m.str() << " x " << n.n.str() << " x "
            << n.k.str() << ")";
        if (n.next.buffer >= 0) os_ << ", prefetch " << view_str(k_, n.next);
        os_ << "\n";
        return;
      case StmtKind::Copy: {
        os_ << pad << "copy " << view_str(k_, n.c) << " = " << view_str(k_, n.a) << " [";
        for (size_t i = 0; i < n.extents.size(); ++i) os_ << (i ? ", " : "") << n.extents[i];
        os_ << "]" << (n.streaming ? "  (streaming)" : "") << "\n";
        return;
      }
      case StmtKind::Prefetch:
        os_ << pad << "prefetch " << name(n.buffer) << idx_str(n.idx);
        if (n.ahead > 0) os_ << " + " << n.ahead << " bytes" << (n.temporal ? "" : ", non-temporal");
        os_ << "\n";
        return;
      case StmtKind::Alloc: {
        const Buffer& b = k_.buffers.at(n.buffer);
        os_ << pad << "alloc " << b.name << ": " << scope_name(b.scope) << " " << ir::dtype_name(b.dtype)
            << ir::shape_str(b.shape) << "\n";
        return;
      }
      case StmtKind::Free: os_ << pad << "free " << name(n.buffer) << "\n"; return;
      case StmtKind::Comment: os_ << pad << "// " << n.text << "\n"; return;
    }
  }

  std::string header() const {
    std::string ins, outs;
    for (const Buffer& b : k_.buffers) {
      std::string t = b.name + ": " + ir::dtype_name(b.dtype) + ir::shape_str(b.shape);
      if (b.scope == Scope::Input) ins += (ins.empty() ? "" : ", ") + t;
      if (b.scope == Scope::Output) outs += (outs.empty() ? "" : ", ") + t;
    }
    return "kernel " + k_.name + "(" + ins + ") -> (" + outs + ")\n";
  }

  std::string str() const { return os_.str(); }

 private:
  static bool has_alloc(const Stmt& s) {
    for (const Stmt& c : s->body)
      if (c.kind() == StmtKind::Alloc) return true;
    return false;
  }
  std::string name(int b) const { return k_.buffers.at(b).name; }

  const Kernel& k_;
  std::ostringstream os_;
};

}  // namespace

std::string print(const Kernel& k) {
  Printer p(k);
  p.stmt(k.body, 0);
  return p.header() + p.str();
}

std::string print(const Kernel& k, const Stmt& s, int indent) {
  Printer p(k);
  p.stmt(s, indent);
  return p.str();
}

}  // namespace axon::tile
