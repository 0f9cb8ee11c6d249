// Keys and folders of the on-disk kernel cache (compile_shared.h and
// prelude_header.h share them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace axon::runtime {

/// FNV-1a over length-prefixed fields, twice with different bases: 128 bits
/// of key, plenty for a cache of kernels.
class CacheKey {
 public:
  void add(const std::string& field);
  /// 32 hex digits.
  std::string hex() const;

 private:
  void bytes(const void* p, size_t n);
  uint64_t a_ = 0xcbf29ce484222325ull;
  uint64_t b_ = 0x84222325cbf29ce4ull;
};

/// The host CPU's model name and ISA flags (/proc/cpuinfo): part of the key
/// of everything compiled with -march=native, so that a cache folder shared
/// between machines never hands one the other's code.
const std::string& host_cpu_signature();

/// Whether `flags` compile for "this CPU" (-march=native, -mtune=native).
bool targets_host_cpu(const std::vector<std::string>& flags);

/// 32 hex digits identifying the build of axon's code running here (a key
/// of the bytes of the file that holds it, read once: the axon executable,
/// or the Python module's shared library): part of the key of anything
/// memoised from what this build's code generators print, so that a rebuilt
/// axon never reads the texts of another. A process that cannot read that
/// file gets a key of its own (nothing memoised is shared then).
const std::string& executable_identity();

/// A suffix for a build folder that no other thread or process uses at the
/// same time: builds go there and are renamed into place when complete.
std::string private_suffix();

}  // namespace axon::runtime
