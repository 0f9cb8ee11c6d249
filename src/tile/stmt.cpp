#include "tile/stmt.h"

#include <algorithm>
#include <set>

#include "tile/buffer.h"
#include "tile/kernel.h"

namespace axon::tile {

const char* loop_kind_name(LoopKind k) {
  switch (k) {
    case LoopKind::Serial: return "serial";
    case LoopKind::Parallel: return "parallel";
    case LoopKind::Vectorized: return "vectorized";
    case LoopKind::Unrolled: return "unrolled";
    case LoopKind::GpuBlock: return "gpu_block";
    case LoopKind::GpuThread: return "gpu_thread";
  }
  return "?";
}

const char* scope_name(Scope s) {
  switch (s) {
    case Scope::Input: return "input";
    case Scope::Output: return "output";
    case Scope::Memory: return "memory";
    case Scope::Scratch: return "scratch";
    case Scope::Register: return "register";
    case Scope::Shared: return "shared";
  }
  return "?";
}

Stmt Stmt::seq(std::vector<Stmt> s) {
  StmtNode n;
  n.kind = StmtKind::Seq;
  // Nested sequences flatten, so passes see one list per scope... except
  // that Alloc'ed Scratch and Register buffers live to the end of their Seq:
  // a nested Seq holding an Alloc stays a scope of its own.
  for (Stmt& x : s) {
    if (!x.defined()) continue;
    bool has_scope = false;
    if (x.kind() == StmtKind::Seq)
      for (const Stmt& y : x->body) has_scope |= y.kind() == StmtKind::Alloc;
    if (x.kind() == StmtKind::Seq && !has_scope)
      n.body.insert(n.body.end(), x->body.begin(), x->body.end());
    else
      n.body.push_back(std::move(x));
  }
  return Stmt(std::move(n));
}

Stmt Stmt::loop(const std::string& var, const Index& extent, LoopKind kind, Stmt body, int threads) {
  StmtNode n;
  n.kind = StmtKind::For;
  n.var = var;
  n.extent = extent;
  n.loop = kind;
  n.threads = kind == LoopKind::Parallel ? threads : 0;
  n.body = {std::move(body)};
  return Stmt(std::move(n));
}

Stmt Stmt::store(int buffer, std::vector<Index> idx, Value v, bool streaming) {
  StmtNode n;
  n.kind = StmtKind::Store;
  n.buffer = buffer;
  n.idx = std::move(idx);
  n.value = std::move(v);
  n.streaming = streaming;
  return Stmt(std::move(n));
}

Stmt Stmt::accumulate(int buffer, std::vector<Index> idx, ir::Combine c, Value v) {
  StmtNode n;
  n.kind = StmtKind::Accumulate;
  n.buffer = buffer;
  n.idx = std::move(idx);
  n.combine = c;
  n.value = std::move(v);
  return Stmt(std::move(n));
}

Stmt Stmt::rescale(int buffer, std::vector<Index> idx, Value alpha, Value v) {
  StmtNode n;
  n.kind = StmtKind::Rescale;
  n.buffer = buffer;
  n.idx = std::move(idx);
  n.alpha = std::move(alpha);
  n.value = std::move(v);
  return Stmt(std::move(n));
}

Stmt Stmt::matmul(View c, View a, View b, Index m, Index nn, Index k, Index keep) {
  StmtNode n;
  n.kind = StmtKind::Matmul;
  n.c = std::move(c);
  n.a = std::move(a);
  n.b = std::move(b);
  n.m = m;
  n.n = nn;
  n.k = k;
  n.keep = keep;
  return Stmt(std::move(n));
}

Stmt Stmt::copy(View dst, View src, std::vector<int64_t> extents, bool streaming) {
  StmtNode n;
  n.kind = StmtKind::Copy;
  n.c = std::move(dst);
  n.a = std::move(src);
  n.extents = std::move(extents);
  n.streaming = streaming;
  return Stmt(std::move(n));
}

Stmt Stmt::prefetch(int buffer, std::vector<Index> idx, int64_t ahead, bool temporal) {
  StmtNode n;
  n.kind = StmtKind::Prefetch;
  n.buffer = buffer;
  n.idx = std::move(idx);
  n.ahead = ahead;
  n.temporal = temporal;
  return Stmt(std::move(n));
}

Stmt Stmt::alloc(int buffer) {
  StmtNode n;
  n.kind = StmtKind::Alloc;
  n.buffer = buffer;
  return Stmt(std::move(n));
}

Stmt Stmt::free(int buffer) {
  StmtNode n;
  n.kind = StmtKind::Free;
  n.buffer = buffer;
  return Stmt(std::move(n));
}

Stmt Stmt::comment(const std::string& text) {
  StmtNode n;
  n.kind = StmtKind::Comment;
  n.text = text;
  return Stmt(std::move(n));
}

Stmt Stmt::with(const std::function<void(StmtNode&)>& f) const {
  StmtNode n = *n_;
  f(n);
  return Stmt(std::move(n));
}

Stmt rewrite(const Stmt& s, const std::function<Stmt(const Stmt&)>& f) {
  if (!s.defined()) return s;
  Stmt rebuilt = s;
  if (s.kind() == StmtKind::Seq || s.kind() == StmtKind::For) {
    std::vector<Stmt> body;
    bool changed = false;
    for (const Stmt& c : s->body) {
      body.push_back(rewrite(c, f));
      changed |= body.back().operator->() != c.operator->();
    }
    if (changed) {
      if (s.kind() == StmtKind::Seq) rebuilt = Stmt::seq(std::move(body));
      else rebuilt = s.with([&](StmtNode& n) { n.body = std::move(body); });
    }
  }
  return f(rebuilt);
}

void visit(const Stmt& s, const std::function<void(const Stmt&)>& f) {
  if (!s.defined()) return;
  f(s);
  for (const Stmt& c : s->body) visit(c, f);
}

std::vector<int> written_buffers(const Stmt& s) {
  std::set<int> w;
  visit(s, [&](const Stmt& x) {
    switch (x.kind()) {
      case StmtKind::Store:
      case StmtKind::Accumulate:
      case StmtKind::Rescale: w.insert(x->buffer); break;
      case StmtKind::Matmul:
      case StmtKind::Copy: w.insert(x->c.buffer); break;
      default: break;
    }
  });
  return {w.begin(), w.end()};
}

NameSource::NameSource(const Kernel& k) {
  for (const Buffer& b : k.buffers) taken_.insert(b.name);
  visit(k.body, [&](const Stmt& s) {
    if (s.kind() == StmtKind::For) taken_.insert(s->var);
  });
}

std::string NameSource::take(const std::string& stem, const std::string& suffix) {
  for (int i = 0;; ++i) {
    std::string name = stem + std::to_string(i) + suffix;
    if (taken_.insert(name).second) return name;
  }
}

}  // namespace axon::tile
