#include "runtime/compile_shared.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "support/command.h"
#include "support/diagnostic.h"

namespace axon::runtime {

namespace fs = std::filesystem;
using support::command_line;
using support::CommandResult;
using support::first_lines;
using support::run_command;

namespace {

// FNV-1a over length-prefixed fields, twice with different bases: 128 bits
// of key, plenty for a cache of kernels.
class KeyHasher {
 public:
  void add(const std::string& field) {
    uint64_t len = field.size();
    bytes(&len, sizeof len);
    bytes(field.data(), field.size());
  }
  std::string hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a_),
                  static_cast<unsigned long long>(b_));
    return buf;
  }

 private:
  void bytes(const void* p, size_t n) {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      a_ = (a_ ^ c[i]) * 0x100000001b3ull;
      b_ = (b_ ^ c[i]) * 0x100000001b3ull;
      b_ ^= b_ >> 29;
    }
  }
  uint64_t a_ = 0xcbf29ce484222325ull;
  uint64_t b_ = 0x84222325cbf29ce4ull;
};

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  out.close();
  AXON_CHECK(out.good()) << "cannot write " << p.string();
}

// A folder name no other thread or process uses at the same time.
std::string private_suffix() {
  static std::atomic<uint64_t> counter{0};
  return ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

// -march=native means "this CPU": the model and ISA flags join the key, so a
// cache folder shared between machines never hands one the other's code.
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

bool targets_host_cpu(const std::vector<std::string>& flags) {
  for (const std::string& f : flags)
    if (f.find("native") != std::string::npos) return true;
  return false;
}

}  // namespace

std::string compiler_version(const std::string& cxx) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(cxx);
  if (it != cache.end()) return it->second;
  CommandResult r = run_command({cxx, "--version"});
  AXON_CHECK(r.status == 0) << "cannot run the kernel compiler '" << cxx << " --version' (" << r.how
                            << "): " << first_lines(r.output, 10);
  std::string line = r.output.substr(0, r.output.find('\n'));
  return cache.emplace(cxx, line).first->second;
}

std::string resolve_cache_dir(const CompileOptions& opts) {
  if (!opts.cache_dir.empty()) return opts.cache_dir;
  if (const char* d = std::getenv("AXON_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return (fs::path(d) / "axon").string();
  if (const char* d = std::getenv("HOME"); d && *d) return (fs::path(d) / ".cache" / "axon").string();
  return (fs::temp_directory_path() / "axon-cache").string();
}

std::string compile_shared(const codegen::KernelSource& k, const CompileOptions& opts) {
  const fs::path dir = fs::absolute(resolve_cache_dir(opts));
  std::error_code ec;
  fs::create_directories(dir, ec);
  AXON_CHECK(!ec) << "cannot create the kernel cache " << dir.string() << ": " << ec.message();

  KeyHasher h;
  h.add(k.source);
  h.add(k.header);
  h.add(opts.cxx);
  h.add(compiler_version(opts.cxx));
  for (const std::string& f : opts.flags) h.add(f);
  if (targets_host_cpu(opts.flags)) h.add(host_cpu_signature());
  if (opts.output_name != "kernel.so") h.add(opts.output_name);
  const std::string key = h.hex();
  const fs::path final_dir = dir / key;
  const fs::path lib = final_dir / opts.output_name;
  if (fs::exists(lib)) return lib.string();

  // Build in a private folder; renaming it into place is the commit.
  const fs::path work = dir / (key + private_suffix());
  fs::remove_all(work, ec);
  fs::create_directory(work, ec);
  AXON_CHECK(!ec) << "cannot create " << work.string() << ": " << ec.message();
  write_file(work / "kernel.h", k.header);
  write_file(work / "kernel.cpp", k.source);
  std::vector<std::string> argv = {opts.cxx};
  argv.insert(argv.end(), opts.flags.begin(), opts.flags.end());
  argv.insert(argv.end(), {"-o", (work / opts.output_name).string(), (work / "kernel.cpp").string()});
  CommandResult r = run_command(argv);
  write_file(work / "compile.log", command_line(argv) + "\n" + compiler_version(opts.cxx) + "\n" + r.output);

  if (r.status != 0 || !fs::exists(work / opts.output_name)) {
    // Keep the failed build where a person can find it, one per key.
    fs::path kept = dir / (key + ".failed");
    fs::remove_all(kept, ec);
    fs::rename(work, kept, ec);
    if (ec) kept = work;
    std::ostringstream msg;
    msg << "compiling kernel '" << k.entry << "' failed (" << r.how << ")\n"
        << "command: " << command_line(argv) << "\n"
        << first_lines(r.output, 60) << "source kept at " << (kept / "kernel.cpp").string();
    throw InternalError(msg.str());
  }

  fs::rename(work, final_dir, ec);
  if (ec) {
    // Another compile of the same key won the race; its library is the same.
    fs::remove_all(work, ec);
    AXON_CHECK(fs::exists(lib)) << "kernel cache entry " << final_dir.string() << " exists without " << opts.output_name;
  }
  return lib.string();
}

}  // namespace axon::runtime
