// What a candidate may call: the static half of the gate. A kernel computes
// from its inputs and nothing else, so its object file may only reach the
// math library, memory and string functions, the allocator, threads and the
// OpenMP runtime, and the C++ runtime's support code. Everything else (files,
// processes, dynamic loading, the environment, clocks, sockets, raw system
// calls) is forbidden, whether it is reached through a symbol, an instruction
// or inline assembly. The check is an allowlist: a symbol nobody thought of
// is refused, with its name, rather than let through.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace axon::gate {

struct Finding {
  std::string kind;    // "calls", "defines", "instruction", "source"
  std::string what;    // the symbol, mnemonic or token (demangled when C++)
  std::string detail;  // why it is refused
};

/// True when an undefined reference to `symbol` (as the linker spells it)
/// is allowed in a kernel.
bool is_allowed_undefined_symbol(const std::string& symbol);

/// Runs `nm` on the object: undefined references off the allowlist, and
/// global definitions that would replace a library function (any C-linkage
/// function other than `entry`, strong definitions in namespace std).
/// Sets *entry_defined. Throws InternalError when nm cannot run.
std::vector<Finding> check_object_symbols(const std::string& object_path, const std::string& entry,
                                          bool* entry_defined);

/// Runs `objdump -d` on the object: syscall, sysenter, int, rdtsc, rdtscp,
/// rdpmc, rdrand, rdseed, rdpid. Throws InternalError when objdump cannot run.
std::vector<Finding> check_object_instructions(const std::string& object_path);

/// One piece of memory a kernel's object keeps outside any call: a
/// writable, non-thread-local section and the data symbols in it.
struct StaticData {
  std::string section;  // .data, .bss, a named section, or *COM* (a common symbol)
  std::string symbol;   // demangled; empty for a section's unnamed bytes
  int64_t bytes = 0;
};

/// Runs `objdump -h -t` on the object: every allocated section that is
/// writable and not thread-local, with a nonzero size, and the symbols in
/// it (common symbols too). A kernel without any keeps no memory shared by
/// its callers: two calls can only meet in their own buffers. Throws
/// InternalError when objdump cannot run.
std::vector<StaticData> shared_static_data(const std::string& object_path);

/// Scans `g++ -E` output, only the lines that come from files whose name
/// ends in one of `own_files`, for inline assembly and for the builtins and
/// intrinsics that read clocks, counters or hardware randomness or make
/// system calls. Catches names built by macros, which the preprocessor has
/// expanded.
std::vector<Finding> check_preprocessed_source(const std::string& preprocessed,
                                               const std::vector<std::string>& own_files);

/// The demangled name, or `symbol` itself when it is not a C++ name.
std::string demangle(const std::string& symbol);

}  // namespace axon::gate
