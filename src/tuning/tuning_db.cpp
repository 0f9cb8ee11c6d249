// The tuning database on SQLite; the contract and key are in tuning_db.h, the tables in docs/optimize.md.
#include "tuning/tuning_db.h"

#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>

#include "support/diagnostic.h"

namespace axon::tuning {

namespace fs = std::filesystem;

std::string TuningKey::text() const { return graph + "|" + target + "|" + compiler; }

std::string default_db_path() {
  if (const char* p = std::getenv("AXON_DB"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/axon/tuning.sqlite";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/axon/tuning.sqlite";
}

namespace {

// A prepared statement, finalized on scope exit.
struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK)
      throw InternalError(std::string("tuning database: cannot prepare '") + sql + "': " + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s); }
  void text(int i, const std::string& v) { sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  std::string column_text(int i) {
    const unsigned char* t = sqlite3_column_text(s, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
};

void step_done(sqlite3* db, Stmt& st) {
  int rc = sqlite3_step(st.s);
  if (rc != SQLITE_DONE) throw InternalError(std::string("tuning database: ") + sqlite3_errmsg(db));
}

}  // namespace

TuningDb::TuningDb(const std::string& path) : path_(path) {
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw Diagnostic(SourceLoc{path, 0, 0}, "cannot create the folder of the tuning database: " + ec.message());
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Diagnostic(SourceLoc{path, 0, 0}, "cannot open the tuning database " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db_, 5000);
  try {
    exec("CREATE TABLE IF NOT EXISTS candidates (key TEXT NOT NULL, schedule TEXT NOT NULL, ms REAL NOT NULL, "
         "verified INTEGER NOT NULL, PRIMARY KEY (key, schedule))");
    exec("CREATE TABLE IF NOT EXISTS reports (key TEXT PRIMARY KEY, report TEXT NOT NULL)");
  } catch (const InternalError& e) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw Diagnostic(SourceLoc{path, 0, 0}, "not a usable tuning database: " + path + ": " + e.what());
  }
}

TuningDb::~TuningDb() { sqlite3_close(db_); }

void TuningDb::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw InternalError("tuning database: " + msg);
  }
}

void TuningDb::record_candidate(const TuningKey& k, const StoredCandidate& c) {
  Stmt st(db_, "INSERT OR REPLACE INTO candidates (key, schedule, ms, verified) VALUES (?, ?, ?, ?)");
  st.text(1, k.text());
  st.text(2, c.schedule_json);
  sqlite3_bind_double(st.s, 3, c.ms);
  sqlite3_bind_int(st.s, 4, c.verified ? 1 : 0);
  step_done(db_, st);
}

std::vector<StoredCandidate> TuningDb::candidates(const TuningKey& k) const {
  Stmt st(db_, "SELECT schedule, ms, verified FROM candidates WHERE key = ? ORDER BY schedule");
  st.text(1, k.text());
  std::vector<StoredCandidate> out;
  while (sqlite3_step(st.s) == SQLITE_ROW)
    out.push_back({st.column_text(0), sqlite3_column_double(st.s, 1), sqlite3_column_int(st.s, 2) != 0});
  return out;
}

std::optional<StoredCandidate> TuningDb::best(const TuningKey& k) const {
  Stmt st(db_, "SELECT schedule, ms FROM candidates WHERE key = ? AND verified = 1 ORDER BY ms, schedule LIMIT 1");
  st.text(1, k.text());
  if (sqlite3_step(st.s) != SQLITE_ROW) return std::nullopt;
  return StoredCandidate{st.column_text(0), sqlite3_column_double(st.s, 1), true};
}

void TuningDb::store_report(const TuningKey& k, const std::string& report_json) {
  Stmt st(db_, "INSERT OR REPLACE INTO reports (key, report) VALUES (?, ?)");
  st.text(1, k.text());
  st.text(2, report_json);
  step_done(db_, st);
}

std::optional<std::string> TuningDb::report(const TuningKey& k) const {
  Stmt st(db_, "SELECT report FROM reports WHERE key = ?");
  st.text(1, k.text());
  if (sqlite3_step(st.s) != SQLITE_ROW) return std::nullopt;
  return st.column_text(0);
}

}  // namespace axon::tuning
