// worst_element.h: one more run of a failing kernel on the reference inputs,
// to name the element that failed.
#include "optimize/worst_element.h"

#include <cmath>
#include <cstdio>

#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "verify/error_budget.h"
#include "verify/kernel_io.h"
#include "runtime/run_check.h"

namespace axon::optimize {

std::optional<WorstElement> worst_element(const ir::Graph& g, const runtime::Measurer& m,
                                          const codegen::KernelSource& k, const std::vector<std::string>& flags) {
  try {
    runtime::CompileOptions co;
    if (!flags.empty()) co.flags = flags;
    runtime::LoadedKernel kernel(runtime::compile_shared(k, co), k.entry);
    std::optional<WorstElement> worst;
    for (int s = 0; s < m.inputs_tried(); ++s) {
      runtime::KernelBuffers b = runtime::make_buffers(g, m.inputs(s));
      kernel.call(b.pointers());
      for (size_t j = 0; j < g.outputs.size(); ++j) {
        const ir::Type& t = g[g.outputs[j]].type;
        std::vector<double> got = verify::from_buffer(b.storage[g.params.size() + j].data(), t.numel(), t.dtype);
        verify::Comparison c = verify::compare_with_budget(got, m.reference(s)[j], m.bounds(s)[j]);
        if (c.ok() || c.worst_index < 0) continue;
        // A NaN where a number was due compares as infinitely far over.
        double over = std::isnan(c.max_error_over_budget) ? INFINITY : c.max_error_over_budget;
        if (worst && !(over > worst->over)) continue;
        WorstElement w;
        w.output = static_cast<int>(j);
        w.input = s;
        int64_t rest = c.worst_index;
        w.index.assign(t.shape.size(), 0);
        for (size_t a = t.shape.size(); a-- > 0;) {
          int64_t d = std::max<int64_t>(t.shape[a], 1);
          w.index[a] = rest % d;
          rest /= d;
        }
        w.got = c.worst_got;
        w.reference = c.worst_ref;
        w.error = std::fabs(c.worst_got - c.worst_ref);
        w.budget = c.worst_budget;
        w.over = over;
        w.elements_over = c.mismatches;
        worst = w;
      }
    }
    return worst;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

namespace {
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}
}  // namespace

std::string describe(const WorstElement& w) {
  std::string idx = "[";
  for (size_t i = 0; i < w.index.size(); ++i) idx += (i ? ", " : "") + std::to_string(w.index[i]);
  idx += "]";
  return "output " + std::to_string(w.output) + ", element " + idx + " (input " + std::to_string(w.input) +
         "): " + num(w.got) + " against " + num(w.reference) + " (float64), error " + num(w.error) + ", budget " +
         num(w.budget) + " (" + num(w.over) + "x the budget; " + std::to_string(w.elements_over) + " element" +
         (w.elements_over == 1 ? "" : "s") + " over)";
}

nlohmann::json to_json(const WorstElement& w) {
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(num(v)); };
  return {{"output", w.output},       {"input", w.input},           {"element", w.index},
          {"got", finite(w.got)},     {"reference", finite(w.reference)}, {"error", finite(w.error)},
          {"budget", finite(w.budget)}, {"error_over_budget", finite(w.over)}, {"elements_over", w.elements_over}};
}

}  // namespace axon::optimize
