#include "backend/backend.h"

#include "backend/cpu_stages.h"
#include "codegen/c_like/naive_cpp.h"
#include "codegen/cpu/emit_cpu.h"
#include "codegen/cpu/kernel_info.h"

namespace axon::backend {

namespace {

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(const target::Target& t) : t_(t) {}

  std::string name() const override { return "cpu"; }
  int version() const override { return codegen::kCodegenVersion; }
  const target::Target& target() const override { return t_; }

  schedule::Space space(const ir::Graph& g) const override { return schedule::schedule_space(g, t_); }
  std::string why_illegal(const ir::Graph& g, const schedule::Schedule& s) const override {
    return schedule::why_illegal(g, s, t_);
  }
  double predicted_seconds(const ir::Graph& g, const schedule::Schedule& s) const override {
    return schedule::predicted_seconds(g, s, t_);
  }

  codegen::KernelSource emit(const ir::Graph& g, const schedule::Schedule& s) const override {
    return emit_cpu(g, s, t_);
  }
  codegen::KernelSource emit_naive(const ir::Graph& g) const override { return codegen::emit_naive_cpp(g); }
  std::vector<std::pair<std::string, std::string>> programs(const ir::Graph& g,
                                                            const schedule::Schedule& s) const override {
    return stage_programs(g, s, t_);
  }
  codegen::KernelInfo kernel_info(const ir::Graph& g, const schedule::Schedule& s) const override {
    return codegen::cpu_kernel_info(g, lower_stages(g, s, t_));
  }
  std::vector<std::string> compile_flags(bool shared) const override { return codegen::cpu_compile_flags(t_, shared); }

 private:
  target::Target t_;
};

}  // namespace

std::unique_ptr<Backend> cpu_backend(const target::Target& t) { return std::make_unique<CpuBackend>(t); }

}  // namespace axon::backend
