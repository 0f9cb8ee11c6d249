// Fingerprints that the gate's report quotes: FNV-1a 64 of input buffers
// (cheap, enough to tell a replayed input from another) and SHA-256 of the
// candidate's source (what people compare across machines).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace axon::gate {

uint64_t fnv1a64(const void* data, size_t n);
/// 16 lower-case hex digits.
std::string hex64(uint64_t v);
/// 64 lower-case hex digits.
std::string sha256_hex(const std::string& data);

}  // namespace axon::gate
