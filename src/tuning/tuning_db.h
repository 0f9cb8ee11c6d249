// The tuning database: every candidate `axon optimize` measured, and the
// report of each finished search, in one SQLite file (docs/optimize.md, "The
// tuning database").
//
/// Rows are keyed by a TuningKey: the graph's structural hash with its
/// parameter and output types (the shapes), the target's fingerprint and
/// the compiler's version, so a different machine, compiler or shape never
/// reads another's results. Candidates are unique per (key, schedule): a
/// second record of the same point replaces the first. Thread-compatible,
/// not thread-safe; several processes may share a file (SQLite locks it,
/// with a busy timeout).
#pragma once

#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace axon::tuning {

struct TuningKey {
  std::string graph;     // structural hash and types
  std::string target;    // Target::fingerprint()
  std::string compiler;  // runtime::compiler_version and codegen::kCodegenVersion
  std::string text() const;  // the three joined, the row key
};

struct StoredCandidate {
  std::string schedule_json;
  double ms = 0;
  bool verified = false;
};

/// $AXON_DB, else $XDG_CACHE_HOME/axon/tuning.sqlite, else
/// ~/.cache/axon/tuning.sqlite.
std::string default_db_path();

class TuningDb {
 public:
  /// Opens (creating the file, its folder and the tables when missing).
  /// Throws axon::Diagnostic naming the path when it cannot.
  explicit TuningDb(const std::string& path);
  ~TuningDb();
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  void record_candidate(const TuningKey& k, const StoredCandidate& c);
  /// Every candidate of `k`, ordered by schedule text.
  std::vector<StoredCandidate> candidates(const TuningKey& k) const;
  /// The fastest verified candidate of `k`.
  std::optional<StoredCandidate> best(const TuningKey& k) const;
  /// The report of the last finished search of `k` (a JSON text).
  void store_report(const TuningKey& k, const std::string& report_json);
  std::optional<std::string> report(const TuningKey& k) const;
  const std::string& path() const { return path_; }

 private:
  void exec(const std::string& sql) const;
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace axon::tuning
