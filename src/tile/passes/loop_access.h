// Shared by fuse_loops, shrink_buffers, interchange_sums, parallel_sums,
// transpose_blocks, the prefetch passes and lower_attention:
// how a statement tree touches buffers, and rewriting the indices of one
// buffer's accesses or a loop variable.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "tile/kernel.h"

namespace axon::tile {

/// Every element access of a statement tree: (buffer, indices); views
/// (Matmul, Copy) are reported with `view` set and no indices.
struct Access {
  int buffer = -1;
  std::vector<Index> idx;
  bool write = false;
  bool view = false;
};
std::vector<Access> accesses(const Stmt& s);

/// `s` with every access of buffer `b` (Loads, Stores, Accumulates,
/// Rescales, Prefetches) given indices f(old indices), and its Allocs and
/// Frees of `b` dropped when `drop_lifetime`.
Stmt reindex(const Stmt& s, int b, const std::function<std::vector<Index>(const std::vector<Index>&)>& f);

/// `s` with the loop variable `from` renamed `to` everywhere (indices,
/// values, extents, view offsets, a Matmul's sizes, the loops that bind it).
Stmt rename_var(const Stmt& s, const std::string& from, const std::string& to);

/// `s` with the variable `v` replaced by the index `by` everywhere (indices,
/// values, extents, view offsets, a Matmul's sizes); loops binding `v` keep
/// their name.
Stmt substitute_var(const Stmt& s, const std::string& v, const Index& by);

/// The statements of a Seq without its comments; a lone statement otherwise.
std::vector<Stmt> statements(const Stmt& s);

/// A serial loop of constant extent (with its one body statement).
bool serial_const_loop(const Stmt& s);

/// A kernel body with each top-level statement (the items of a Seq, else
/// the body itself) replaced by f of it.
Stmt map_top_level(const Stmt& body, const std::function<Stmt(const Stmt&)>& f);

}  // namespace axon::tile
