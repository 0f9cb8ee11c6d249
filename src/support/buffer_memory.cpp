// See buffer_memory.h.
#include "support/buffer_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace axon::support {

void* alloc_buffer_memory(std::size_t bytes) {
  const bool huge = bytes >= kHugePagesFrom;
  const std::size_t align = huge ? std::size_t{2} << 20 : 64;
  const std::size_t size = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (huge) madvise(p, size, MADV_HUGEPAGE);  // a hint; its failure leaves ordinary pages
#endif
  return p;
}

void free_buffer_memory(void* p) noexcept { std::free(p); }

}  // namespace axon::support
