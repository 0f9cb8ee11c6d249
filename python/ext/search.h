// axon.optimize's search, called from Python: optimize/optimize.h on a
// Program, with the GIL released for the whole search.
//
// progress: a one-line progress report on stderr, rewritten in place
// (candidates tried, verified, best ms, speedup); the package asks for it
// only when stderr is a terminal. catch_sigint (the main thread only): while
// the search runs, the first Ctrl-C asks it to stop and keep the best kernel
// so far (`interrupted` is then true); Python's own handler is put back
// afterwards, so a second Ctrl-C after the search interrupts Python as usual.
// No kernel passing its check throws VerificationError with the search's
// failure text (the CLI's exit code 3).
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_source.h"
#include "program.h"

namespace axon::python {

struct SearchOptions {
  double budget_s = 30;
  int trials = 0;
  uint64_t seed = 1;
  std::string db_path;  // empty: tuning::default_db_path()
  bool use_db = true;
  bool resume = false;
  bool rewrites = true;
  bool progress = false;
  bool catch_sigint = false;
};

struct SearchResult {
  codegen::KernelSource kernel;
  std::vector<std::string> compile_flags;  // how the kernel is built (the backend's)
  std::string report_json;                 // report.json's text
  double axon_ms = 0, naive_ms = 0;
  bool from_db = false, interrupted = false;
  std::string stop_reason;
  std::vector<std::string> warnings;
};

SearchResult search(const Program& p, const SearchOptions& o);

/// The naive kernel of `p` and its flags, without a search.
SearchResult naive(const Program& p);

}  // namespace axon::python
