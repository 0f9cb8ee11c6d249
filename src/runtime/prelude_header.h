// The precompiled prelude: the standard headers at the top of a kernel
// source, parsed once per compiler, flag set and header list, and kept in
// the kernel cache (compile_shared.h).
//
// Parsing <memory>, <cmath> and <immintrin.h> is most of what g++ spends on
// one of axon's kernels: a row kernel of 550 lines took 3.9 s at -O2 on a
// loaded 2-core host, the headers alone 3.4 s of it, and 0.5 s with them
// precompiled; a search compiles dozens of candidates and a verdict three
// builds of one. A source qualifies when it begins (after comments and
// blank lines) with #include lines only, each either "kernel.h" (the ABI
// header axon writes: a declaration and <stdint.h>/<stdbool.h>) or a header
// of the standard library or the compiler on the list in prelude_header.cpp.
// Its prelude is those standard headers, in its order, compiled into a GCC
// precompiled header and passed with -include: the compiler reads the same
// headers as the source names, before kernel.h instead of after it, which
// changes nothing (they do not depend on the order they are included in, and
// kernel.h depends on no macro of theirs); the object code is the same
// (tests/unit/prelude_header_test.cpp compares it). A source with anything
// else before its first line of code (a #define, another quoted header) is
// compiled as it is.
//
// Each precompiled header takes 20 to 80 MB of the cache (a full test run
// leaves about 40 of them, one per header list and flag set, about 1 GB);
// like the compiled kernels beside them they stay until the cache is
// deleted.
//
// The prelude never decides whether a kernel compiles: compile_shared and
// the gate compile again without it when a compile with it fails. With a
// compiler other than GCC, or with AXON_NO_PRELUDE set in the environment,
// there is no prelude.
#pragma once

#include <string>
#include <vector>

#include "support/command.h"

namespace axon::runtime {

/// The standard headers of the source's leading #include lines, in order
/// ("cmath", "immintrin.h"), or none when the source does not qualify.
std::vector<std::string> leading_standard_headers(const std::string& source);

/// The arguments that make `cxx` with `flags` read the precompiled prelude
/// of `source`: {"-include", "<cache_dir>/prelude-<key>/axon_prelude.h"},
/// the precompiled header next to it, built on first use (one build per
/// key, safe between threads and processes). Empty when the source does not
/// qualify, the compiler is not GCC, AXON_NO_PRELUDE is set, or the
/// precompiled header does not build (a marker in the cache then saves the
/// next caller the attempt). `flags` are the compile's: those that only say
/// what to produce (-c, -shared, -o FILE) are left out of the prelude's.
std::vector<std::string> prelude_arguments(const std::string& source, const std::string& cxx,
                                           const std::vector<std::string>& flags, const std::string& cache_dir);

/// Runs the compile `argv` (the compiler, then its flags and files; in `cwd`,
/// empty: the current folder) of `source` with its prelude when it has one,
/// and again as given when that fails: the prelude never decides whether a
/// kernel compiles. `argv` becomes the command whose result is returned.
support::CommandResult compile_with_prelude(std::vector<std::string>& argv, const std::string& source,
                                            const std::string& cache_dir, const std::string& cwd = "");

}  // namespace axon::runtime
