// Stmt: the statements of the tile IR. A kernel body is a tree of them.
//
///   Seq(s...)                      in order
///   For(var, extent, kind, body)   var = 0 .. extent-1; kind says how the
///                                  iterations run (LoopKind); a Parallel
///                                  loop's `chunk` how they are dealt out
///   Store(buf[idx], v)             buf[idx] = v; `streaming`: bypass caches
///   Accumulate(buf[idx], c, v)     buf[idx] = combine_step(c, buf[idx], v)
///                                  (ir/element_def.h), the carried
///                                  accumulator of a reduction
///   Rescale(buf[idx], alpha, v)    buf[idx] = buf[idx] * alpha + v, the step
///                                  of an online softmax
///   Matmul(C, A, B, m, n, k, keep) C[i, j] = (keep != 0 ? C[i, j] : 0)
///                                  + sum_l A[i, l] * B[l, j] for i < m,
///                                  j < n, l < k over strided views
///                                  (transposes and broadcasts are strides,
///                                  never copies); m, n, k and keep are
///                                  indices, so a tile cut by an edge or the
///                                  first slice of a blocked sum is one
///                                  statement; `next`, when set, is the A
///                                  view the following Matmul reads (a
///                                  prefetch hint)
///   Copy(dst, src, extents)        dst[i...] = src[i...] over strided views
///                                  (packing, layout copies); `streaming`:
///                                  bypass caches
///   Prefetch(buf[idx], ahead)      a hint; no effect on values. ahead > 0:
///                                  the line `ahead` bytes past the element,
///                                  non-temporal (read once) unless
///                                  `temporal`, an address that may lie
///                                  past the buffer (a prefetch never
///                                  faults)
///   Alloc(buf) / Free(buf)         a Memory buffer's lifetime; Scratch and
///                                  Register buffers are Alloc'ed and live to
///                                  the end of the enclosing Seq
///   Comment(text)                  carried to the printed code
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/element_def.h"
#include "tile/index.h"
#include "tile/value.h"

namespace axon::tile {

/// Serial, Parallel (threads share the iterations), Vectorized (lanes of one
/// thread), Unrolled; GpuBlock and GpuThread are reserved for a GPU printer.
enum class LoopKind { Serial, Parallel, Vectorized, Unrolled, GpuBlock, GpuThread };
const char* loop_kind_name(LoopKind k);

/// Element (i0, i1, ...) of a view is buffer[offset + sum i_d * strides[d]].
struct View {
  int buffer = -1;
  Index offset;
  std::vector<int64_t> strides;
};

enum class StmtKind { Seq, For, Store, Accumulate, Rescale, Matmul, Copy, Prefetch, Alloc, Free, Comment };

class Stmt;
struct StmtNode {
  StmtKind kind = StmtKind::Seq;
  std::vector<Stmt> body;  // Seq: the statements; For: one, the loop body
  // For
  std::string var;
  Index extent;
  LoopKind loop = LoopKind::Serial;
  int threads = 0;  // Parallel: how many (0: the runtime's default)
  int64_t chunk = 0;  // Parallel: iterations handed to the threads in turn, this many at a time (0: one even range each)
  // Store, Accumulate, Rescale, Prefetch, Alloc, Free
  int buffer = -1;
  std::vector<Index> idx;
  Value value;
  Value alpha;  // Rescale
  ir::Combine combine = ir::Combine::Sum;
  bool streaming = false;  // Store, Copy
  // Matmul: c (+)= a * b over (m, n, k); Copy: c = a over extents
  View c, a, b;
  Index m, n, k;
  Index keep = 1;  // Matmul: 0 overwrites C, anything else adds to it
  View next;       // Matmul: the next tile's A operand (buffer -1: none)
  std::vector<int64_t> extents;
  std::string text;  // Comment
  int64_t ahead = 0;  // Prefetch: bytes past the element (0: the element itself)
  bool temporal = false;  // Prefetch with ahead > 0: into every cache level, not read-once
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(StmtNode n) : n_(std::make_shared<const StmtNode>(std::move(n))) {}
  const StmtNode* operator->() const { return n_.get(); }
  const StmtNode& node() const { return *n_; }
  bool defined() const { return n_ != nullptr; }
  StmtKind kind() const { return n_->kind; }

  static Stmt seq(std::vector<Stmt> s);
  /// `threads`: how many run a Parallel loop (0: the runtime's default).
  static Stmt loop(const std::string& var, const Index& extent, LoopKind kind, Stmt body, int threads = 0);
  static Stmt store(int buffer, std::vector<Index> idx, Value v, bool streaming = false);
  static Stmt accumulate(int buffer, std::vector<Index> idx, ir::Combine c, Value v);
  static Stmt rescale(int buffer, std::vector<Index> idx, Value alpha, Value v);
  static Stmt matmul(View c, View a, View b, Index m, Index n, Index k, Index keep = 1);
  static Stmt copy(View dst, View src, std::vector<int64_t> extents, bool streaming = false);
  static Stmt prefetch(int buffer, std::vector<Index> idx, int64_t ahead = 0, bool temporal = false);
  static Stmt alloc(int buffer);
  static Stmt free(int buffer);
  static Stmt comment(const std::string& text);

  /// The same statement with `n` edited by `f`.
  Stmt with(const std::function<void(StmtNode&)>& f) const;

 private:
  std::shared_ptr<const StmtNode> n_;
};

/// Rebuilds `s` bottom-up: children first, then `f` on the rebuilt node
/// (which may return it unchanged, or anything in its place).
Stmt rewrite(const Stmt& s, const std::function<Stmt(const Stmt&)>& f);
/// Calls `f` on every statement, parents before children.
void visit(const Stmt& s, const std::function<void(const Stmt&)>& f);

/// The buffers a statement writes (Store, Accumulate, Rescale, Matmul's C,
/// Copy's destination) and reads (Loads, Accumulate/Rescale/Matmul's own
/// target, views read).
std::vector<int> written_buffers(const Stmt& s);

}  // namespace axon::tile
