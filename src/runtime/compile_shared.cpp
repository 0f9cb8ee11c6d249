#include "runtime/compile_shared.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "runtime/cache_key.h"
#include "runtime/prelude_header.h"
#include "support/command.h"
#include "support/diagnostic.h"

namespace axon::runtime {

namespace fs = std::filesystem;
using support::command_line;
using support::CommandResult;
using support::first_lines;
using support::run_command;

namespace {

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  out.close();
  AXON_CHECK(out.good()) << "cannot write " << p.string();
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

  CacheKey h;
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
  // With the precompiled prelude when the source qualifies (the same object
  // code, a fraction of the time), and without it when that fails.
  CommandResult r = compile_with_prelude(argv, k.source, dir.string());
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
