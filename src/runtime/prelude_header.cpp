#include "runtime/prelude_header.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "runtime/cache_key.h"
#include "runtime/compile_shared.h"
#include "support/command.h"

namespace axon::runtime {

namespace fs = std::filesystem;

namespace {

// Headers a prelude may hold: ones whose meaning does not depend on what was
// included or defined before them (not <assert.h>, which follows NDEBUG at
// each inclusion).
const std::set<std::string>& allowed_headers() {
  static const std::set<std::string> h = {
      "math.h",  "stdint.h",  "stdlib.h",  "string.h",  "stddef.h",  "stdbool.h", "float.h",    "limits.h",
      "cmath",   "cstdint",   "cstdlib",   "cstring",   "cstddef",   "cfloat",    "climits",    "memory",
      "new",     "algorithm", "array",     "atomic",    "limits",    "numeric",   "type_traits", "utility",
      "vector",  "bit",       "immintrin.h", "x86intrin.h", "omp.h"};
  return h;
}

// Whether `cxx` is GCC: its precompiled headers are found next to an
// -include'd header as "<name>.gch".
bool is_gcc(const std::string& cxx) {
  try {
    const std::string v = compiler_version(cxx);
    return v.find("clang") == std::string::npos && v.find("icpx") == std::string::npos;
  } catch (const std::exception&) {
    return false;
  }
}

// The compile's flags less what only names its inputs and output (-c,
// -shared, -o FILE, the source files).
std::vector<std::string> prelude_flags(const std::vector<std::string>& flags) {
  static const std::set<std::string> with_value = {"-I", "-isystem", "-iquote", "-D", "-U"};
  std::vector<std::string> out;
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& f = flags[i];
    if (f == "-c" || f == "-shared" || f == "-E" || f == "-S") continue;
    if (f == "-o" || f == "-x" || f == "-include" || f == "-MF" || f == "-MT") {
      ++i;  // and its argument
      continue;
    }
    if (f.empty() || f[0] != '-') continue;  // an input file
    out.push_back(f);
    if (with_value.count(f) && i + 1 < flags.size()) out.push_back(flags[++i]);
  }
  return out;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace

std::vector<std::string> leading_standard_headers(const std::string& source) {
  // The prelude is the standard headers before the source's first line that
  // is neither blank, a comment, #include "kernel.h" nor #include <h> of an
  // allowed header. Whatever follows, a #define or another header included,
  // comes after those headers with the prelude as without it.
  std::vector<std::string> headers;
  const size_t n = source.size();
  size_t i = 0;
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  while (i < n) {
    const char c = source[i];
    if (c == '\n' || blank(c)) {
      ++i;
    } else if (source.compare(i, 2, "//") == 0) {
      while (i < n && source[i] != '\n') ++i;
    } else if (source.compare(i, 2, "/*") == 0) {
      const size_t end = source.find("*/", i + 2);
      if (end == std::string::npos) break;
      i = end + 2;
    } else if (c == '#') {
      size_t j = i + 1;
      while (j < n && blank(source[j])) ++j;
      if (source.compare(j, 7, "include") != 0) break;
      j += 7;
      while (j < n && blank(source[j])) ++j;
      if (j >= n || (source[j] != '<' && source[j] != '"')) break;
      const char close = source[j] == '<' ? '>' : '"';
      const size_t end = source.find_first_of(std::string(1, close) + "\n", j + 1);
      if (end == std::string::npos || source[end] != close) break;
      const std::string name = source.substr(j + 1, end - j - 1);
      // The rest of the line: blanks and a comment at most.
      size_t k = end + 1;
      while (k < n && blank(source[k])) ++k;
      if (k < n && source[k] != '\n' && source.compare(k, 2, "//") != 0) break;
      if (close == '"' ? name != "kernel.h" : !allowed_headers().count(name)) break;
      if (close == '>') headers.push_back(name);
      i = k;
    } else {
      break;  // the first line of code
    }
  }
  return headers;
}

std::vector<std::string> prelude_arguments(const std::string& source, const std::string& cxx,
                                           const std::vector<std::string>& flags, const std::string& cache_dir) {
  if (const char* off = std::getenv("AXON_NO_PRELUDE"); off && *off) return {};
  const std::vector<std::string> headers = leading_standard_headers(source);
  if (headers.empty() || !is_gcc(cxx)) return {};

  const std::vector<std::string> pflags = prelude_flags(flags);
  CacheKey key;
  key.add("axon prelude 1");
  for (const std::string& h : headers) key.add(h);
  key.add(cxx);
  key.add(compiler_version(cxx));
  for (const std::string& f : pflags) key.add(f);
  if (targets_host_cpu(pflags)) key.add(host_cpu_signature());
  const std::string id = "prelude-" + key.hex();
  const fs::path dir = fs::absolute(cache_dir);
  const fs::path final_dir = dir / id;
  const fs::path header = final_dir / "axon_prelude.h";
  const fs::path failed = dir / (id + ".failed");

  // One build per key in this process (other keys build beside it); other
  // processes race through the rename below.
  static std::mutex map_mu;
  static std::map<std::string, std::mutex> key_mu;
  std::mutex* mu = nullptr;
  {
    std::lock_guard<std::mutex> lock(map_mu);
    mu = &key_mu[id];
  }
  std::lock_guard<std::mutex> lock(*mu);
  std::error_code ec;
  if (fs::exists(final_dir / "axon_prelude.h.gch", ec)) return {"-include", header.string()};
  if (fs::exists(failed, ec)) return {};

  fs::create_directories(dir, ec);
  if (ec) return {};
  const fs::path work = dir / (id + private_suffix());
  fs::remove_all(work, ec);
  fs::create_directory(work, ec);
  if (ec) return {};
  std::string text = "// The precompiled prelude of axon's kernel sources (runtime/prelude_header.h).\n";
  for (const std::string& h : headers) text += "#include <" + h + ">\n";
  write_text(work / "axon_prelude.h", text);
  std::vector<std::string> argv = {cxx};
  argv.insert(argv.end(), pflags.begin(), pflags.end());
  argv.insert(argv.end(), {"-x", "c++-header", (work / "axon_prelude.h").string(), "-o",
                           (work / "axon_prelude.h.gch").string()});
  const support::CommandResult r = support::run_command(argv);
  if (r.status != 0 || !fs::exists(work / "axon_prelude.h.gch", ec)) {
    write_text(work / "build.log", support::command_line(argv) + "\n" + r.output);
    fs::remove_all(failed, ec);
    fs::rename(work, failed, ec);
    if (ec) fs::remove_all(work, ec);
    return {};
  }
  fs::rename(work, final_dir, ec);
  if (ec) fs::remove_all(work, ec);  // another process built the same key
  if (!fs::exists(final_dir / "axon_prelude.h.gch", ec)) return {};
  return {"-include", header.string()};
}

support::CommandResult compile_with_prelude(std::vector<std::string>& argv, const std::string& source,
                                            const std::string& cache_dir, const std::string& cwd) {
  const std::vector<std::string> flags(argv.begin() + 1, argv.end());
  const std::vector<std::string> prelude = prelude_arguments(source, argv[0], flags, cache_dir);
  if (!prelude.empty()) {
    std::vector<std::string> with = argv;
    with.insert(with.begin() + 1, prelude.begin(), prelude.end());
    support::CommandResult r = support::run_command(with, cwd);
    if (r.status == 0) {
      argv = std::move(with);
      return r;
    }
  }
  return support::run_command(argv, cwd);
}

}  // namespace axon::runtime
