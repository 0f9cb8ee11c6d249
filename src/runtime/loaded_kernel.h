// A compiled kernel, loaded into this process.
#pragma once

#include <string>
#include <vector>

namespace axon::runtime {

/// The entry function `entry` of the shared library at `so_path` (dlopen and
/// dlsym). The library is closed on destruction; movable, not copyable.
class LoadedKernel {
 public:
  /// Most buffers call() can pass.
  static constexpr int kMaxBuffers = 32;

  /// Throws axon::InternalError with dlerror()'s text when either step fails.
  LoadedKernel(const std::string& so_path, const std::string& entry);
  ~LoadedKernel();
  LoadedKernel(LoadedKernel&& o) noexcept;
  LoadedKernel& operator=(LoadedKernel&& o) noexcept;
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  /// Calls the entry with one pointer per buffer, in the kernel ABI's order
  /// (inputs, then outputs). The count must match the kernel's signature; it
  /// is not checked (the library does not record it).
  void call(const std::vector<void*>& buffers) const;

  const std::string& path() const { return path_; }
  const std::string& entry() const { return entry_; }

 private:
  void* handle_ = nullptr;
  void* fn_ = nullptr;
  std::string path_, entry_;
};

}  // namespace axon::runtime
