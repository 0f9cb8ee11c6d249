// Memory for the large arrays kernels are timed and checked on.
//
// numpy (and so torch.from_numpy) asks Linux for transparent huge pages on
// every array of 4 MiB or more (madvise MADV_HUGEPAGE), so that is what a
// user's large arrays are made of. It changes what is fastest: the
// hardware prefetchers stop at 4 KiB page boundaries, and with 4 KiB pages
// a row sum of 32 MiB ran fastest reading 8 rows at a time (0.88 ms against
// 0.94-1.03 ms row by row), with 2 MiB pages row by row (0.72 ms against
// 0.84-0.90). Timing on other pages than the users' tunes for the wrong
// machine, and a stream probe on 4 KiB pages under-reports the bandwidth.
#pragma once

#include <cstddef>

namespace axon::support {

/// At least `bytes` bytes on a 64-byte boundary; from 4 MiB up, on a 2 MiB
/// boundary and advised to be backed by huge pages (a hint: where the
/// kernel declines, ordinary pages). Never null for bytes > 0 (throws
/// std::bad_alloc). Release with free_buffer_memory.
void* alloc_buffer_memory(std::size_t bytes);
void free_buffer_memory(void* p) noexcept;

/// The size from which buffers are advised to use huge pages (numpy's rule).
inline constexpr std::size_t kHugePagesFrom = std::size_t{4} << 20;

}  // namespace axon::support
