// Fingerprints: a fast word-wise 64-bit hash of buffers, which the gate's
// report quotes for each input (enough to tell a replayed input from
// another) and which sorts outputs into likely-equal groups before a byte
// comparison decides, and SHA-256 of the candidate's source (what people
// compare across machines).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace axon::gate {

/// 8 bytes at a time (little-endian words) on four independent lanes,
/// several GB/s; equal bytes give equal values. A stable format: the same
/// value on every machine, so that a report's input hashes can be checked
/// against a replay elsewhere.
uint64_t fast_fingerprint(const void* data, size_t n);
/// 16 lower-case hex digits.
std::string hex64(uint64_t v);
/// 64 lower-case hex digits.
std::string sha256_hex(const std::string& data);

}  // namespace axon::gate
