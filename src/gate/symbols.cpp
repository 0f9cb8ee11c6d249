#include "gate/symbols.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <regex>
#include <map>
#include <set>
#include <sstream>

#include "support/command.h"
#include "support/diagnostic.h"

namespace axon::gate {

using support::CommandResult;
using support::first_lines;
using support::run_command;

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// libm: each name also with an f or l suffix, and glibc's __*_finite forms.
const std::set<std::string>& math_functions() {
  static const std::set<std::string> names = [] {
    const char* base[] = {
        "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "logb", "ilogb", "sqrt", "cbrt",
        "pow", "hypot", "sin", "cos", "tan", "sincos", "asin", "acos", "atan", "atan2", "sinh", "cosh",
        "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "tgamma", "lgamma", "floor", "ceil", "round",
        "lround", "llround", "trunc", "rint", "lrint", "llrint", "nearbyint", "fmod", "remainder",
        "remquo", "fma", "fmax", "fmin", "fdim", "fabs", "ldexp", "frexp", "modf", "scalbn", "scalbln",
        "nextafter", "nexttoward", "copysign", "nan", "significand"};
    std::set<std::string> s;
    for (const char* b : base)
      for (const char* suffix : {"", "f", "l"}) {
        s.insert(std::string(b) + suffix);
        s.insert("__" + std::string(b) + suffix + "_finite");
      }
    return s;
  }();
  return names;
}

const std::set<std::string>& allowed_c_symbols() {
  static const std::set<std::string> names = {
      // memory and strings
      "memcpy", "memmove", "memset", "memcmp", "memchr", "bzero", "strlen", "strnlen", "strcmp", "strncmp",
      "strcpy", "strncpy", "strchr", "strrchr", "strstr", "__memcpy_chk", "__memmove_chk", "__memset_chk",
      "__strcpy_chk", "__strncpy_chk",
      // the allocator
      "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "memalign",
      // pure utilities
      "qsort", "bsearch", "abs", "labs", "llabs", "div", "ldiv", "strtof", "strtod", "strtold", "strtol",
      "strtoll", "strtoul", "strtoull", "atoi", "atol", "atof", "snprintf", "sprintf", "vsnprintf",
      "vsprintf", "__sprintf_chk", "__snprintf_chk", "__vsnprintf_chk",
      // pseudo-random numbers (deterministic per process; the battery sees what they do)
      "rand", "srand", "rand_r", "random", "srandom", "drand48", "erand48", "lrand48", "nrand48", "mrand48",
      "jrand48", "srand48",
      // waiting and sizing thread pools
      "nanosleep", "usleep", "sched_yield", "sysconf", "get_nprocs", "get_nprocs_conf",
      // failing loudly
      "abort", "__assert_fail", "__stack_chk_fail", "__errno_location",
      // the C++ runtime and the toolchain
      "__gxx_personality_v0", "__tls_get_addr", "__dso_handle", "_GLOBAL_OFFSET_TABLE_", "__cpu_model",
      "__cpu_indicator_init", "__cpu_features2", "__libc_single_threaded", "__pthread_key_create",
      "__once_proxy"};
  return names;
}

// Prefix families: the C++ ABI, unwinding, OpenMP, pthreads, atomics, and
// libgcc's arithmetic helpers (128-bit division, half-float conversions).
bool in_allowed_family(const std::string& s) {
  static const std::set<std::string> denied = {"omp_get_wtime", "omp_get_wtick", "pthread_kill",
                                               "pthread_sigqueue", "pthread_getcpuclockid"};
  if (denied.count(s)) return false;
  for (const char* p : {"__cxa_", "_Unwind_", "GOMP_", "omp_", "pthread_", "__atomic_", "__sync_"})
    if (starts_with(s, p)) return true;
  static const std::regex libgcc(
      "__(u?div|u?mod|mul|pow[ir]?|fix(uns)?|float(un)?|extend|trunc|neg|u?cmp|popcount|clz|ctz|ffs|parity|"
      "bswap|ashl|ashr|lshr|add|sub|eq|ne|lt|le|gt|ge|unord)[a-z0-9]*");
  return std::regex_match(s, libgcc);
}

// Pieces of demangled C++ names that reach files, clocks or entropy.
const char* forbidden_cxx_piece(const std::string& demangled) {
  static const char* pieces[] = {"std::chrono::",   "random_device", "std::filesystem::", "basic_filebuf",
                                 "basic_fstream",   "basic_ofstream", "basic_ifstream",   "__basic_file",
                                 "std::__cxx11::basic_ofstream", "std::system_clock", "std::steady_clock",
                                 "std::experimental::filesystem"};
  for (const char* p : pieces)
    if (demangled.find(p) != std::string::npos) return p;
  return nullptr;
}

bool is_cxx_symbol(const std::string& s) { return starts_with(s, "_Z"); }

}  // namespace

std::string demangle(const std::string& symbol) {
  if (!is_cxx_symbol(symbol)) return symbol;
  int status = 0;
  char* d = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return symbol;
  std::string out(d);
  std::free(d);
  return out;
}

bool is_allowed_undefined_symbol(const std::string& raw) {
  std::string s = raw.substr(0, raw.find('@'));  // symbol versions (memcpy@GLIBC_2.14)
  if (is_cxx_symbol(s)) return forbidden_cxx_piece(demangle(s)) == nullptr;
  return math_functions().count(s) || allowed_c_symbols().count(s) || in_allowed_family(s);
}

std::vector<Finding> check_object_symbols(const std::string& object_path, const std::string& entry,
                                          bool* entry_defined) {
  CommandResult r = run_command({"nm", "-P", object_path});
  AXON_CHECK(r.ok()) << "cannot list the symbols of " << object_path << " with nm (" << r.how
                     << "): " << first_lines(r.output, 10);
  std::vector<Finding> found;
  std::set<std::string> seen;
  *entry_defined = false;
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name, type;
    if (!(fields >> name >> type) || type.size() != 1) continue;
    char t = type[0];
    if (!seen.insert(name + " " + type).second) continue;
    if (t == 'U' || t == 'w' || t == 'v') {
      if (!is_allowed_undefined_symbol(name)) {
        std::string d = demangle(name);
        const char* piece = is_cxx_symbol(name) ? forbidden_cxx_piece(d) : nullptr;
        found.push_back({"calls", d,
                         piece ? std::string("reaches ") + piece + " (files, clocks or entropy)"
                               : "not on the list of functions a kernel may call"});
      }
      continue;
    }
    bool global = std::isupper(static_cast<unsigned char>(t)) || t == 'u';
    if (!global) continue;
    if (name == entry) {
      *entry_defined = t == 'T' || t == 'W';
      continue;
    }
    bool function = t == 'T' || t == 'W' || t == 'i';
    if (!is_cxx_symbol(name) && function) {
      found.push_back({"defines", name,
                       "a C-linkage function other than the entry, which could replace a library function"});
    } else if (is_cxx_symbol(name) && t == 'T' && starts_with(demangle(name), "std::")) {
      found.push_back({"defines", demangle(name), "a strong definition inside namespace std"});
    }
  }
  return found;
}

std::vector<Finding> check_object_instructions(const std::string& object_path) {
  CommandResult r = run_command({"objdump", "-d", "--no-show-raw-insn", object_path});
  AXON_CHECK(r.ok()) << "cannot disassemble " << object_path << " with objdump (" << r.how
                     << "): " << first_lines(r.output, 10);
  static const std::set<std::string> forbidden = {"syscall", "sysenter", "int",    "rdtsc", "rdtscp",
                                                  "rdpmc",   "rdrand",   "rdseed", "rdpid"};
  std::vector<Finding> found;
  std::set<std::string> seen;
  std::istringstream in(r.output);
  std::string line, function;
  while (std::getline(in, line)) {
    // "0000000000000000 <rowsum>:" starts a function; "  1f:\tsyscall" is an instruction.
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.back() == ':') {
      size_t a = line.find('<'), b = line.rfind('>');
      if (a != std::string::npos && b != std::string::npos && b > a) function = demangle(line.substr(a + 1, b - a - 1));
      continue;
    }
    size_t tab = line.find(":\t");
    if (tab == std::string::npos) continue;
    std::istringstream insn(line.substr(tab + 2));
    std::string mnemonic;
    insn >> mnemonic;
    if (!forbidden.count(mnemonic) || !seen.insert(mnemonic).second) continue;
    found.push_back({"instruction", mnemonic,
                     "in " + function + ": reads a clock, counter or hardware randomness, or calls the kernel"});
  }
  return found;
}

std::vector<StaticData> shared_static_data(const std::string& object_path) {
  CommandResult r = run_command({"objdump", "-h", "-t", "-w", object_path});
  AXON_CHECK(r.ok()) << "cannot list the sections of " << object_path << " with objdump (" << r.how
                     << "): " << first_lines(r.output, 10);
  // Section lines: "  2 .bss  00005a00  VMA  LMA  off  2**5  ALLOC"; symbol
  // lines: "0000000000000000 l     O .bss\t0000000000005a00 name".
  std::map<std::string, int64_t> writable;  // section -> bytes
  std::vector<StaticData> found;
  std::set<std::string> listed;                   // sections with a symbol in `found`
  std::map<std::string, int64_t> runtime_bytes;  // section -> bytes of the C++ runtime's own symbols
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string idx, name, size;
    if (line.size() > 2 && line[0] == ' ' && f >> idx >> name >> size && !idx.empty() &&
        std::isdigit(static_cast<unsigned char>(idx[0]))) {
      const bool alloc = line.find("ALLOC") != std::string::npos;
      const bool readonly = line.find("READONLY") != std::string::npos;
      const bool code = line.find("CODE") != std::string::npos;
      const bool tls = line.find("THREAD_LOCAL") != std::string::npos;
      const int64_t bytes = std::strtoll(size.c_str(), nullptr, 16);
      // RELRO data (.data.rel.ro*) is made read-only once the loader has relocated it.
      if (alloc && !readonly && !code && !tls && bytes > 0 && !starts_with(name, ".data.rel.ro")) writable[name] = bytes;
      continue;
    }
    size_t tab = line.find('\t');
    if (tab == std::string::npos || tab < 17) continue;
    // The section is the last field before the tab.
    std::string head = line.substr(0, tab);
    size_t sp = head.find_last_of(' ');
    std::string section = sp == std::string::npos ? head : head.substr(sp + 1);
    std::istringstream rest(line.substr(tab + 1));
    std::string bytes_hex, symbol;
    if (!(rest >> bytes_hex >> symbol)) continue;
    if (symbol == ".hidden" || symbol == ".internal" || symbol == ".protected")  // visibility, then the name
      if (!(rest >> symbol)) continue;
    const int64_t bytes = std::strtoll(bytes_hex.c_str(), nullptr, 16);
    const bool object = head.find(" O ") != std::string::npos;
    if (section == "*COM*" || (object && writable.count(section) && bytes > 0)) {
      // The C++ runtime's personality pointer (DW.ref.__gxx_personality_v0),
      // which the dynamic linker writes once at load time.
      if (starts_with(symbol, "DW.ref.")) {
        runtime_bytes[section] += bytes;
        continue;
      }
      found.push_back({section, demangle(symbol), bytes});
      listed.insert(section);
    }
  }
  // A writable section with no symbol listed, beyond the runtime's bytes:
  // its bytes, unnamed.
  for (const auto& [section, bytes] : writable)
    if (!listed.count(section) && runtime_bytes[section] < bytes) found.push_back({section, "", bytes});
  return found;
}

namespace {

// The preprocessed text with string and character literals blanked out, so
// that a word inside a string is not taken for code.
std::string without_literals(const std::string& line) {
  std::string out = line;
  char quote = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    if (quote) {
      if (c == '\\' && i + 1 < out.size()) {
        out[i] = out[i + 1] = ' ';
        ++i;
        continue;
      }
      if (c == quote) quote = 0;
      else out[i] = ' ';
    } else if (c == '"' || c == '\'') {
      quote = c;
    }
  }
  return out;
}

}  // namespace

std::vector<Finding> check_preprocessed_source(const std::string& preprocessed,
                                               const std::vector<std::string>& own_files) {
  static const std::set<std::string> asm_words = {"asm", "__asm", "__asm__"};
  static const std::regex forbidden_builtin(
      "syscall|_?_rdtscp?|__builtin_ia32_rd(tscp?|pmc|rand\\w*|seed\\w*|pid)|__builtin_readcyclecounter|"
      "__builtin_readsteadycounter|_rd(rand|seed)\\d+_step|_rdpid_u32");
  std::vector<Finding> found;
  std::set<std::string> seen;
  std::istringstream in(preprocessed);
  std::string line;
  bool own = true;
  int lineno = 0;
  std::string file;
  while (std::getline(in, line)) {
    ++lineno;
    if (starts_with(line, "# ")) {  // linemarker: # <line> "<file>" <flags>
      size_t a = line.find('"'), b = line.rfind('"');
      if (a != std::string::npos && b > a) {
        file = line.substr(a + 1, b - a - 1);
        own = false;
        for (const std::string& f : own_files)
          own = own || (file.size() >= f.size() && file.compare(file.size() - f.size(), f.size(), f) == 0);
      }
      continue;
    }
    if (!own) continue;
    std::string code = without_literals(line);
    for (size_t i = 0; i < code.size();) {
      if (!(std::isalpha(static_cast<unsigned char>(code[i])) || code[i] == '_')) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < code.size() && (std::isalnum(static_cast<unsigned char>(code[j])) || code[j] == '_')) ++j;
      std::string word = code.substr(i, j - i);
      i = j;
      if (asm_words.count(word)) {
        if (seen.insert(word).second) found.push_back({"source", word, "inline assembly in " + file});
      } else if (std::regex_match(word, forbidden_builtin)) {
        if (seen.insert(word).second)
          found.push_back({"source", word, "reads a clock, counter or hardware randomness, or calls the kernel, in " + file});
      }
    }
  }
  return found;
}

}  // namespace axon::gate
