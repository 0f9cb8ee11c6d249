// The gate's work folder: where the kernel's sources, builds, plans, input
// blocks and recorded outputs live for one verdict.
//
// Without a folder named by the caller, it is created in memory-backed
// /dev/shm when TMPDIR is not set and /dev/shm (a tmpfs) has room for what
// the verdict may write, else under the system's temporary folder. The
// driver writes every recorded call's outputs (a 16 MiB output: 16 MiB per
// record, 20 to 40 records) and reads the input blocks from there; on a
// disk-backed /tmp those writes took a third of the battery (docs/gate.md,
// "Verdict time").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace axon::gate {

class WorkDir {
 public:
  /// `named`: the caller's folder (kept); empty: a fresh one, removed on the
  /// way out unless `keep`. `buffer_bytes`: the kernel's inputs and outputs
  /// together, which bounds what the verdict writes.
  WorkDir(const std::string& named, bool keep, int64_t buffer_bytes);
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;

  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }
  bool kept() const { return keep_; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

/// Where a fresh work folder goes for a kernel whose buffers take
/// `buffer_bytes`: /dev/shm when TMPDIR is unset and /dev/shm is a tmpfs
/// whose free space, and half the memory the system has available, both
/// cover 80 times the buffers plus 256 MiB; else the temporary folder.
std::filesystem::path work_root(int64_t buffer_bytes);

}  // namespace axon::gate
