#include "tile/passes/prefetch_next_rows.h"

#include <set>
#include <string>

#include "ir/type.h"
#include "tile/passes/loop_access.h"

namespace axon::tile {

namespace {

class NextRows {
 public:
  NextRows(const Kernel& k, const std::string& row) : k_(k), row_(row) {}

  // The Prefetches of vector loop `v` for the row inputs it Loads (empty
  // when it Loads none).
  std::vector<Stmt> fetches(const Stmt& v) const {
    std::vector<Stmt> out;
    std::set<int> seen;
    visit(v->body.at(0), [&](const Stmt& x) {
      for (const Value* val : {&x->value, &x->alpha}) {
        if (!val->defined()) continue;
        val->visit_loads([&](const Value& l) {
          const Buffer& b = k_.buffers[static_cast<size_t>(l.buffer())];
          if (b.scope != Scope::Input || seen.count(l.buffer())) return;
          std::optional<Affine> a = as_affine(flat_index(b.shape, l.idx()));
          if (!a) return;
          auto lane = a->coef.find(v->var), row = a->coef.find(row_);
          if (lane == a->coef.end() || lane->second != 1 || row == a->coef.end() || row->second <= 0) return;
          seen.insert(l.buffer());
          out.push_back(Stmt::prefetch(l.buffer(), l.idx(), row->second * ir::dtype_bytes(b.dtype), true));
        });
      }
    });
    return out;
  }

  // `s` with every vector loop that reads a row input prefetching it.
  Stmt add_to_loops(const Stmt& s) const {
    if (s.kind() == StmtKind::Seq) {
      std::vector<Stmt> body;
      for (const Stmt& c : s->body) body.push_back(add_to_loops(c));
      return s.with([&](StmtNode& n) { n.body = std::move(body); });
    }
    if (s.kind() != StmtKind::For) return s;
    if (s->loop != LoopKind::Vectorized) {
      Stmt body = add_to_loops(s->body.at(0));
      return s.with([&](StmtNode& n) { n.body = {body}; });
    }
    std::vector<Stmt> add = fetches(s);
    if (add.empty()) return s;
    std::vector<Stmt> body = {s->body.at(0)};
    if (body[0].kind() == StmtKind::Seq) body = body[0]->body;
    body.insert(body.end(), add.begin(), add.end());
    return s.with([&](StmtNode& n) { n.body = {Stmt::seq(std::move(body))}; });
  }

  // Whether `s` holds a vector loop that reads a row input.
  bool reads_row(const Stmt& s) const {
    bool found = false;
    visit(s, [&](const Stmt& x) { found |= x.kind() == StmtKind::For && x->loop == LoopKind::Vectorized && !fetches(x).empty(); });
    return found;
  }

 private:
  const Kernel& k_;
  std::string row_;
};

}  // namespace

Kernel prefetch_next_rows(const Kernel& k, int pass) {
  if (pass <= 0) return k;
  Kernel out = k;
  auto top = [&](const Stmt& s) {
    if (s.kind() != StmtKind::For || s->body.at(0).kind() != StmtKind::Seq) return s;
    NextRows n(k, s->var);
    // The passes: the statements of the row's body (a loop nest each, a
    // cascaded sum's blocks and tail together) that read a row input.
    // Consecutive statements that write the same buffers outside
    // themselves (a sum's blocks and its tail) are one pass.
    std::vector<Stmt> body = s->body.at(0)->body;
    std::vector<std::vector<size_t>> passes;
    std::set<int> last;
    for (size_t i = 0; i < body.size(); ++i) {
      if (!n.reads_row(body[i])) continue;
      std::set<int> writes, inside;
      for (int b : written_buffers(body[i])) writes.insert(b);
      visit(body[i], [&](const Stmt& x) { if (x.kind() == StmtKind::Alloc) inside.insert(x->buffer); });
      for (int b : inside) writes.erase(b);
      if (passes.empty() || writes != last) passes.emplace_back();
      passes.back().push_back(i);
      last = std::move(writes);
    }
    if (passes.size() < 2) return s;
    for (size_t at : passes[std::min<size_t>(static_cast<size_t>(pass), passes.size() - 1)]) body[at] = n.add_to_loops(body[at]);
    Stmt seq = s->body.at(0).with([&](StmtNode& x) { x.body = std::move(body); });
    return s.with([&](StmtNode& x) { x.body = {seq}; });
  };
  out.body = map_top_level(k.body, top);
  return out;
}

}  // namespace axon::tile
