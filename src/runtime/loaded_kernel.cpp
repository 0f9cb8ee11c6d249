#include "runtime/loaded_kernel.h"

#include <dlfcn.h>

#include <array>
#include <utility>

#include "support/diagnostic.h"

namespace axon::runtime {

namespace {

// Calls fn as void(void*, ..., void*) with N arguments. Every kernel
// parameter is a data pointer, which the C ABI passes like void*.
template <size_t... I>
void call_with(void* fn, void* const* b, std::index_sequence<I...>) {
  using Fn = void (*)(decltype((void)I, static_cast<void*>(nullptr))...);
  reinterpret_cast<Fn>(fn)(b[I]...);
}

using Caller = void (*)(void*, void* const*);

template <size_t N>
void call_n(void* fn, void* const* b) {
  call_with(fn, b, std::make_index_sequence<N>{});
}

template <size_t... N>
constexpr std::array<Caller, sizeof...(N)> make_callers(std::index_sequence<N...>) {
  return {&call_n<N>...};
}

constexpr auto kCallers = make_callers(std::make_index_sequence<LoadedKernel::kMaxBuffers + 1>{});

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlerror";
}

}  // namespace

// Kernels may use OpenMP. If libgomp came in with a kernel library, closing
// the last such library would unload it under its own idle worker threads,
// which then crash the process; so it is pinned, once, for good.
static void pin_openmp_runtime() {
  static const bool pinned = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE) != nullptr;
  (void)pinned;
}

LoadedKernel::LoadedKernel(const std::string& so_path, const std::string& entry) : path_(so_path), entry_(entry) {
  pin_openmp_runtime();
  handle_ = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw InternalError("cannot load kernel library " + so_path + ": " + dl_error());
  dlerror();
  fn_ = dlsym(handle_, entry.c_str());
  if (!fn_) {
    std::string err = dl_error();
    dlclose(handle_);
    handle_ = nullptr;
    throw InternalError("kernel library " + so_path + " has no entry '" + entry + "': " + err);
  }
}

LoadedKernel::~LoadedKernel() {
  if (handle_) dlclose(handle_);
}

LoadedKernel::LoadedKernel(LoadedKernel&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)),
      fn_(std::exchange(o.fn_, nullptr)),
      path_(std::move(o.path_)),
      entry_(std::move(o.entry_)) {}

LoadedKernel& LoadedKernel::operator=(LoadedKernel&& o) noexcept {
  if (this != &o) {
    if (handle_) dlclose(handle_);
    handle_ = std::exchange(o.handle_, nullptr);
    fn_ = std::exchange(o.fn_, nullptr);
    path_ = std::move(o.path_);
    entry_ = std::move(o.entry_);
  }
  return *this;
}

void LoadedKernel::call(const std::vector<void*>& buffers) const {
  AXON_CHECK(fn_) << "call on a moved-from LoadedKernel";
  AXON_CHECK(buffers.size() <= static_cast<size_t>(kMaxBuffers))
      << "kernel '" << entry_ << "' called with " << buffers.size() << " buffers; at most " << kMaxBuffers
      << " are supported";
  kCallers[buffers.size()](fn_, buffers.data());
}

}  // namespace axon::runtime
