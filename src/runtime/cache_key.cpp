#include "runtime/cache_key.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace axon::runtime {

void CacheKey::add(const std::string& field) {
  uint64_t len = field.size();
  bytes(&len, sizeof len);
  bytes(field.data(), field.size());
}

std::string CacheKey::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a_),
                static_cast<unsigned long long>(b_));
  return buf;
}

void CacheKey::bytes(const void* p, size_t n) {
  const unsigned char* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    a_ = (a_ ^ c[i]) * 0x100000001b3ull;
    b_ = (b_ ^ c[i]) * 0x100000001b3ull;
    b_ ^= b_ >> 29;
  }
}

const std::string& host_cpu_signature() {
  static const std::string sig = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line) && (model.empty() || flags.empty())) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
    }
    return model + "\n" + flags;
  }();
  return sig;
}

const std::string& executable_identity() {
  static const std::string id = [] {
    // The file that holds this code: the axon executable, or the shared
    // library of the Python module (whose process is python's).
    auto read = [](const std::string& path) {
      std::ifstream in(path, std::ios::binary);
      if (!in) return std::string();
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      return in.bad() ? std::string() : bytes;
    };
    std::string bytes;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&executable_identity), &info) != 0 && info.dli_fname && info.dli_fname[0] == '/')
      bytes = read(info.dli_fname);
    if (bytes.empty()) bytes = read("/proc/self/exe");
    if (bytes.empty()) bytes = "unreadable, process " + std::to_string(getpid()) + " " + private_suffix();
    CacheKey k;
    k.add("axon code");
    k.add(bytes);
    return k.hex();
  }();
  return id;
}

bool targets_host_cpu(const std::vector<std::string>& flags) {
  for (const std::string& f : flags)
    if (f.find("native") != std::string::npos) return true;
  return false;
}

std::string private_suffix() {
  static std::atomic<uint64_t> counter{0};
  return ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

}  // namespace axon::runtime
