// parallel_for: runs fn(0) .. fn(n - 1) on up to `threads` threads (the
// calling thread among them), each index exactly once, in no fixed order.
// The first exception thrown by any call is rethrown on the calling thread
// once every thread has stopped; the indices not started by then are
// skipped. threads <= 0: one per core.
#pragma once

#include <cstddef>
#include <functional>

namespace axon::support {

void parallel_for(size_t n, int threads, const std::function<void(size_t)>& fn);

}  // namespace axon::support
