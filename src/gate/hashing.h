// Fingerprints: FNV-1a 64 of input buffers, which the gate's report quotes
// (enough to tell a replayed input from another), SHA-256 of the
// candidate's source (what people compare across machines), and a fast
// word-wise fingerprint that only sorts outputs into likely-equal groups
// before a byte comparison decides (never reported).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace axon::gate {

uint64_t fnv1a64(const void* data, size_t n);
/// 8 bytes at a time on four independent lanes (several GB/s, against
/// FNV-1a's one byte per multiply); equal bytes give equal values. Not a
/// stable format: only compare values from one process.
uint64_t fast_fingerprint(const void* data, size_t n);
/// 16 lower-case hex digits.
std::string hex64(uint64_t v);
/// 64 lower-case hex digits.
std::string sha256_hex(const std::string& data);

}  // namespace axon::gate
