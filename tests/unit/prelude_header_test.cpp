// The precompiled prelude (runtime/prelude_header.h): which sources
// qualify, that GCC really reads the precompiled header, that the object
// code is the same as without it, and that a compile the prelude breaks is
// done again without it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/compile_shared.h"
#include "runtime/prelude_header.h"
#include "support/command.h"

namespace axon {
namespace {

namespace fs = std::filesystem;
using runtime::leading_standard_headers;
using Headers = std::vector<std::string>;

// A cache folder of its own, removed at the end of the test.
class ScratchCache {
 public:
  explicit ScratchCache(const std::string& name) {
    std::random_device rd;
    path_ = (fs::path(testing::TempDir()) / ("axon-prelude-" + name + "-" + std::to_string(rd()))).string();
    fs::remove_all(path_);
  }
  ~ScratchCache() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(prelude_header, TheStandardHeadersBeforeTheFirstLineOfCode) {
  const std::string axon_like =
      "// kernel.cpp: generated\n/* a block\n   comment */\n#include \"kernel.h\"\n\n#include <math.h>\n"
      "#include <cmath>   // trailing comment\n#  include <cstdint>\n#include <memory>\n#include <immintrin.h>\n"
      "\n#ifndef X\n#define X\n#endif\n#include <cstring>\nint f();\n";
  EXPECT_EQ(leading_standard_headers(axon_like), (Headers{"math.h", "cmath", "cstdint", "memory", "immintrin.h"}));
  // The prelude ends at the first other line: a macro, another quoted
  // header, a header off the list, code after an #include on its line.
  EXPECT_EQ(leading_standard_headers("#include <cmath>\n#define N 4\n#include <cstdint>\n"), (Headers{"cmath"}));
  EXPECT_EQ(leading_standard_headers("#define _GNU_SOURCE\n#include <cmath>\n"), Headers{});
  EXPECT_EQ(leading_standard_headers("#include \"config.h\"\n#include <cmath>\n"), Headers{});
  EXPECT_EQ(leading_standard_headers("#include <cmath>\n#include <cassert>\n#include <cstdint>\n"), (Headers{"cmath"}));
  EXPECT_EQ(leading_standard_headers("#include <cmath> int x;\n#include <cstdint>\n"), Headers{});
  EXPECT_EQ(leading_standard_headers("int main() {}\n#include <cmath>\n"), Headers{});
  EXPECT_EQ(leading_standard_headers("/* never closed\n#include <cmath>\n"), Headers{});
}

TEST(prelude_header, NoPreludeForAnUnqualifiedSourceOrWhenSwitchedOff) {
  ScratchCache cache("none");
  const std::vector<std::string> flags = {"-O2", "-c"};
  EXPECT_TRUE(runtime::prelude_arguments("#define A 1\n#include <cmath>\n", AXON_DEFAULT_CXX, flags, cache.path()).empty());
  ScopedEnv off("AXON_NO_PRELUDE", "1");
  EXPECT_TRUE(runtime::prelude_arguments("#include <cmath>\nint f();\n", AXON_DEFAULT_CXX, flags, cache.path()).empty());
}

const char* kHeader = "#include <stdint.h>\n#ifdef __cplusplus\nextern \"C\"\n#endif\nvoid axpy(const float* x, float* y);\n";
const char* kSource =
    "// a kernel of axon's form\n#include \"kernel.h\"\n\n#include <math.h>\n#include <cmath>\n#include <cstdint>\n"
    "#include <cstdlib>\n#include <cstring>\n#include <memory>\n#include <immintrin.h>\n\n"
    "extern \"C\" void axpy(const float* x, float* y) {\n"
    "  for (int i = 0; i < 256; i += 8)\n"
    "    _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_set1_ps(std::exp(x[i]))));\n}\n";

// The object's disassembly, without the line naming its file.
std::string disassembly(const std::string& object) {
  support::CommandResult r = support::run_command({"objdump", "-d", "--no-show-raw-insn", object});
  EXPECT_EQ(r.status, 0) << r.output;
  return r.output.substr(r.output.find("Disassembly"));
}

TEST(prelude_header, GccReadsThePrecompiledHeaderAndTheCodeIsTheSame) {
  const std::vector<std::string> flags = {"-O2", "-mavx2", "-mfma", "-ffp-contract=off", "-c"};
  ScratchCache with("with"), without("without");
  runtime::CompileOptions co;
  co.flags = flags;
  co.output_name = "kernel.o";
  co.cache_dir = with.path();
  const std::string a = runtime::compile_shared({"axpy", kHeader, kSource}, co);
  co.cache_dir = without.path();
  std::string b;
  {
    ScopedEnv off("AXON_NO_PRELUDE", "1");
    b = runtime::compile_shared({"axpy", kHeader, kSource}, co);
  }
  const std::vector<std::string> args = runtime::prelude_arguments(kSource, co.cxx, flags, with.path());
  ASSERT_EQ(args.size(), 2u);
  ASSERT_TRUE(fs::exists(args[1] + ".gch")) << args[1];
  EXPECT_NE(read(fs::path(a).parent_path() / "compile.log").find("-include " + args[1]), std::string::npos);
  EXPECT_EQ(read(fs::path(b).parent_path() / "compile.log").find("-include"), std::string::npos);
  for (const auto& entry : fs::directory_iterator(without.path()))
    EXPECT_EQ(entry.path().filename().string().rfind("prelude-", 0), std::string::npos) << entry.path();

  // GCC marks a precompiled header it used with "!" in its -H listing (an
  // invalid one it skips, and parses the text header instead: "x").
  std::vector<std::string> check = {co.cxx};
  check.insert(check.end(), flags.begin(), flags.end() - 1);
  check.insert(check.end(), {"-fsyntax-only", "-H", args[0], args[1], (fs::path(a).parent_path() / "kernel.cpp").string()});
  support::CommandResult h = support::run_command(check);
  ASSERT_EQ(h.status, 0) << h.output;
  EXPECT_NE(h.output.find("! " + args[1] + ".gch"), std::string::npos) << h.output.substr(0, 2000);

  EXPECT_EQ(disassembly(a), disassembly(b));
}

TEST(prelude_header, ACompileThePreludeBreaksIsDoneWithoutIt) {
  // This kernel.h insists on coming before <cmath>, as the source has it;
  // with the prelude <cmath> comes first and the compile fails.
  const std::string header = std::string("#ifdef _GLIBCXX_CMATH\n#error cmath before kernel.h\n#endif\n") + kHeader;
  ScratchCache cache("fallback");
  runtime::CompileOptions co;
  co.flags = {"-O2", "-mavx2", "-mfma", "-c"};
  co.output_name = "kernel.o";
  co.cache_dir = cache.path();
  const std::string obj = runtime::compile_shared({"axpy", header, kSource}, co);
  EXPECT_TRUE(fs::exists(obj));
  EXPECT_EQ(read(fs::path(obj).parent_path() / "compile.log").find("-include"), std::string::npos);
  EXPECT_EQ(runtime::prelude_arguments(kSource, co.cxx, co.flags, cache.path()).size(), 2u);  // it was tried
}

}  // namespace
}  // namespace axon
