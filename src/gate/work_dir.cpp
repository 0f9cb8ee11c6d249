#include "gate/work_dir.h"

#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include "support/diagnostic.h"

namespace axon::gate {

namespace fs = std::filesystem;

namespace {

constexpr long kTmpfsMagic = 0x01021994;

// MemAvailable from /proc/meminfo, in bytes; -1 when unknown.
int64_t memory_available() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return -1;
}

}  // namespace

fs::path work_root(int64_t buffer_bytes) {
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir && *tmpdir) return fs::temp_directory_path();
  const char* shm = "/dev/shm";
  struct statfs fsinfo;
  struct statvfs space;
  if (statfs(shm, &fsinfo) != 0 || fsinfo.f_type != kTmpfsMagic || statvfs(shm, &space) != 0 ||
      access(shm, W_OK | X_OK) != 0)
    return fs::temp_directory_path();
  // Recorded outputs (up to about 40 records of every buffer), the input
  // blocks (about 12 sets) and the builds.
  const int64_t need = 80 * buffer_bytes + (int64_t{256} << 20);
  const int64_t free_bytes = static_cast<int64_t>(space.f_bavail) * static_cast<int64_t>(space.f_frsize);
  const int64_t available = memory_available();
  if (free_bytes < need || available < 0 || available / 2 < need) return fs::temp_directory_path();
  return shm;
}

WorkDir::WorkDir(const std::string& named, bool keep, int64_t buffer_bytes) {
  if (!named.empty()) {
    path_ = fs::absolute(named);
    std::error_code ec;
    fs::create_directories(path_, ec);
    AXON_CHECK(!ec) << "cannot create the gate's work folder " << path_.string() << ": " << ec.message();
    keep_ = true;
    return;
  }
  std::string tmpl = (work_root(buffer_bytes) / "axon-gate-XXXXXX").string();
  AXON_CHECK(mkdtemp(tmpl.data()) != nullptr) << "cannot create a temporary folder from " << tmpl;
  path_ = tmpl;
  keep_ = keep;
}

WorkDir::~WorkDir() {
  std::error_code ec;
  if (!keep_) fs::remove_all(path_, ec);
}

}  // namespace axon::gate
