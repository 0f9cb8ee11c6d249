// The symbolic sizes a move on a concrete graph is proved over (prove_move).
//
// Every distinct parameter size > 1 is a symbol named after its value
// (n1024), so a proof covers every assignment of the graph's size pattern
// (sizes equal in the spec stay equal). Two kinds of size are not free
// symbols:
//  - the axis an online softmax splits (Move::split_size) is two symbols,
//    its tiles: n4096 = n4096a + n4096b;
//  - a size that a reshape splits into parts or merges from parts
//    (q.reshape(8, 4, 128) of q: f32[32, 128]) is derived: the outermost
//    part is a symbol, the inner parts stay literal wherever they occur, and
//    the size is their product, 32 = 4 * n8. Free symbols for 32, 8 and 4
//    would break the reshape at almost every assignment; this way the index
//    the reshape reads, (a (4 n128) + b n128 + d) / n128 = 4 a + b, is affine
//    in the symbols (ProofContext::decode reads the stride, P P, and the
//    size, 4 P, back as sizes), and an output axis of 4 n8 is read as 4 a + b
//    (output_index_cases), which divides back into the parts it merges.
// A graph whose reshapes ask for incompatible readings (a size both split
// and kept as a literal part, two different splits of one size, inner parts
// whose product is not small) gets no derived sizes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "verify/smt/prove.h"

namespace axon::rewrite {

struct SizeSymbols {
  /// A size derived from a reshape's parts: size = times * part.
  struct Derived {
    int64_t size = 0;
    int64_t times = 1;      // the literal product of the inner parts
    int64_t part_size = 0;  // the outermost part
    std::string part;       // its symbol
  };
  std::vector<std::string> dims;        // every symbol, at most kMaxSymbols
  std::map<std::string, int64_t> free;  // symbol -> the size it stands for
  std::vector<Derived> derived;
  std::string split_a, split_b;  // the split axis's tiles ("" when none)
  int64_t split_size = 0;

  /// Each size of the graph that changes at assignment `d` (resize's map).
  std::map<int64_t, int64_t> at(const verify::smt::DimSizes& d) const;
};

/// The symbols of a proof on `g`; `split_size` > 0 names the axis an online
/// softmax splits in two tiles.
SizeSymbols size_symbols(const ir::Graph& g, int64_t split_size);

}  // namespace axon::rewrite
