// Kernel: one tile-IR program: its buffers and the statement tree over them.
// A kernel's Input and Output buffers are its C ABI, in param/output order.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tile/buffer.h"
#include "tile/stmt.h"

namespace axon::tile {

struct Kernel {
  std::string name;
  std::vector<Buffer> buffers;
  Stmt body;

  int add_buffer(Buffer b) {
    buffers.push_back(std::move(b));
    return static_cast<int>(buffers.size()) - 1;
  }
};

/// Fresh names for the loop variables and buffers a pass adds: stem, a
/// counter and a suffix ("r3", "acc2_0"), avoiding every buffer and loop
/// variable name of the kernel it was made from and every name it handed
/// out before. Passes use stems the kernel ABI reserves (i, r, t, acc), so
/// that no name can clash with a parameter's.
class NameSource {
 public:
  explicit NameSource(const Kernel& k);
  std::string take(const std::string& stem, const std::string& suffix = "");

 private:
  std::set<std::string> taken_;
};

}  // namespace axon::tile
