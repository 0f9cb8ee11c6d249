// Kernel: one tile-IR program: its buffers and the statement tree over them.
// A kernel's Input and Output buffers are its C ABI, in param/output order.
#pragma once

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
  /// A variable or buffer name not used yet in this kernel, from `stem`.
  std::string fresh_name(const std::string& stem) const;
};

}  // namespace axon::tile
