// Building generated kernels into shared libraries, with a cache on disk.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_source.h"

#ifndef AXON_DEFAULT_CXX  // CMake sets it to the compiler axon itself was built with
#define AXON_DEFAULT_CXX "c++"
#endif

namespace axon::runtime {

struct CompileOptions {
  /// The compiler: a program name looked up in PATH, or a path.
  std::string cxx = AXON_DEFAULT_CXX;
  /// Passed before "-o <lib> <source>". No contraction: a * b + c is
  /// rounded twice, as written, unless the source asks for an FMA.
  std::vector<std::string> flags = {"-O2", "-march=native", "-ffp-contract=off", "-fPIC", "-shared"};
  /// Empty: $AXON_CACHE_DIR, else $XDG_CACHE_HOME/axon, else ~/.cache/axon.
  std::string cache_dir;
  /// The file the compiler writes in the cache entry: with "-c" among the
  /// flags, an object ("driver.o"); part of the key when not the default.
  std::string output_name = "kernel.so";
};

/// Compiles `k.source` (with `k.header` written next to it as kernel.h) into
/// a shared library (or opts.output_name) in the cache and returns its path. The cache is
/// keyed by a hash of (source, header, compiler, compiler version, flags, and
/// with -march=native the host CPU's model and ISA flags): a second call with
/// the same key returns at once without compiling. Each
/// build happens in a private folder that is renamed into place when
/// complete, so parallel compiles (threads or processes) are safe.
/// On compiler failure throws axon::InternalError with the command, the
/// first 60 lines of the compiler's log and the path of the kept source.
std::string compile_shared(const codegen::KernelSource& k, const CompileOptions& opts = {});

/// The first line of `cxx --version`, run once per compiler per process.
/// Throws axon::InternalError when the compiler cannot be run.
std::string compiler_version(const std::string& cxx);

/// The cache folder `opts` resolves to (see CompileOptions::cache_dir).
std::string resolve_cache_dir(const CompileOptions& opts);

}  // namespace axon::runtime
