#include "tile/passes/fuse_loops.h"

#include <algorithm>
#include <set>

#include "tile/passes/interchange_sums.h"
#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

bool fusable_kind(const Stmt& s) {
  return s.kind() == StmtKind::For && s->loop == LoopKind::Serial && s->extent.is_const();
}

std::set<int> allocated_inside(const Stmt& s) {
  std::set<int> a;
  visit(s, [&](const Stmt& x) {
    if (x.kind() == StmtKind::Alloc) a.insert(x->buffer);
  });
  return a;
}

bool binds(const Stmt& s, const std::string& var) {
  bool found = false;
  visit(s, [&](const Stmt& x) { found |= x.kind() == StmtKind::For && x->var == var; });
  return found;
}

// Whether every access of `b` in `accs` is an element access whose index
// in dimension `dim` is the variable `var`.
bool indexed_by(const std::vector<Access>& accs, int b, const std::string& var, size_t dim) {
  for (const Access& a : accs) {
    if (a.buffer != b) continue;
    if (a.view || a.idx.size() <= dim) return false;
    if (a.idx[dim].kind() != IndexKind::Var || a.idx[dim].name() != var) return false;
  }
  return true;
}

// Whether one dimension of `b` is indexed by the first loop's variable in
// every access of the first body and by the second's in every access of the
// second: then iterations i and i' != i touch disjoint elements of `b`.
bool row_local(const std::vector<Access>& a1, const std::string& v1, const std::vector<Access>& a2,
               const std::string& v2, int b) {
  size_t rank = 0;
  for (const Access& a : a1)
    if (a.buffer == b) rank = std::max(rank, a.idx.size());
  for (size_t d = 0; d < rank; ++d)
    if (indexed_by(a1, b, v1, d) && indexed_by(a2, b, v2, d)) return true;
  return false;
}

// Whether fusing `l` keeps what interchange_sums would do to it: `l` is no
// column sum, or the column sum is the nest below it (its loop a batch of
// whole column sums: `for n { for j { acc = 0; for c { acc += x[n, c, j] };
// t[n, j] = acc } }`), which interchange_sums still takes inside the fused
// loop, one batch at a time.
bool keeps_interchange(const Kernel& k, const Stmt& l) {
  if (!interchanges(k, l)) return true;
  const std::vector<Stmt> body = statements(l->body.at(0));
  return body.size() == 1 && body[0].kind() == StmtKind::For && interchanges(k, body[0]);
}

bool legal(const Kernel& k, const Stmt& l1, const Stmt& l2) {
  if (!fusable_kind(l1) || !fusable_kind(l2) || l1->extent.value() != l2->extent.value()) return false;
  if (!keeps_interchange(k, l1) || !keeps_interchange(k, l2)) return false;
  const Stmt& b1 = l1->body.at(0);
  const Stmt& b2 = l2->body.at(0);
  if (binds(b2, l1->var) || binds(b1, l2->var)) return false;
  std::vector<Access> a1 = accesses(b1), a2 = accesses(b2);
  std::set<int> local1 = allocated_inside(b1), local2 = allocated_inside(b2);
  std::set<int> w1, w2, t1, t2;
  for (const Access& a : a1) {
    if (local1.count(a.buffer)) continue;
    t1.insert(a.buffer);
    if (a.write) w1.insert(a.buffer);
  }
  for (const Access& a : a2) {
    if (local2.count(a.buffer)) continue;
    t2.insert(a.buffer);
    if (a.write) w2.insert(a.buffer);
  }
  std::set<int> shared;
  for (int b : w1)
    if (t2.count(b)) shared.insert(b);
  for (int b : w2)
    if (t1.count(b)) shared.insert(b);
  for (int b : shared)
    if (!row_local(a1, l1->var, a2, l2->var, b)) return false;
  return true;
}

bool fuse_once(Kernel& k) {
  if (k.body.kind() != StmtKind::Seq) return false;
  const std::vector<Stmt>& top = k.body->body;
  for (size_t i = 0; i < top.size(); ++i) {
    if (!fusable_kind(top[i])) continue;
    size_t j = i + 1;
    std::vector<Stmt> allocs, frees, comments;
    while (j < top.size() && (top[j].kind() == StmtKind::Alloc || top[j].kind() == StmtKind::Free ||
                              top[j].kind() == StmtKind::Comment)) {
      (top[j].kind() == StmtKind::Alloc ? allocs : top[j].kind() == StmtKind::Free ? frees : comments).push_back(top[j]);
      ++j;
    }
    if (j >= top.size() || !legal(k, top[i], top[j])) continue;
    const std::string var = top[i]->var;
    Stmt second = rename_var(top[j]->body.at(0), top[j]->var, var);
    std::vector<Stmt> inner = {top[i]->body.at(0)};
    inner.insert(inner.end(), comments.begin(), comments.end());
    inner.push_back(second);
    Stmt fused = top[i].with([&](StmtNode& n) { n.body = {Stmt::seq(std::move(inner))}; });
    std::vector<Stmt> next(top.begin(), top.begin() + static_cast<long>(i));
    next.insert(next.end(), allocs.begin(), allocs.end());
    next.push_back(fused);
    next.insert(next.end(), frees.begin(), frees.end());
    next.insert(next.end(), top.begin() + static_cast<long>(j) + 1, top.end());
    k.body = Stmt::seq(std::move(next));
    return true;
  }
  return false;
}

}  // namespace

Kernel fuse_loops(const Kernel& k) {
  Kernel out = k;
  while (fuse_once(out)) {
  }
  return out;
}

}  // namespace axon::tile
