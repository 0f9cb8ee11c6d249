#include "transforms/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "ir/verify.h"
#include "transforms/remove_dead_nodes.h"

namespace axon::transforms {

namespace {
bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

bool verify_after_passes() {
#ifdef AXON_VERIFY_PASSES
  return true;
#else
  return env_on("AXON_VERIFY_PASSES");
#endif
}

class Pipeline {
 public:
  void run(const char* name, const std::function<ir::Graph(const ir::Graph&)>& pass, ir::Graph& g) {
    auto t0 = std::chrono::steady_clock::now();
    g = pass(g);
    times_.emplace_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                        name);
    trace(std::string("after ") + name, g);
  }
  void trace(const std::string& label, const ir::Graph& g) const {
    if (env_on("AXON_DUMP_IR")) std::cerr << "// " << label << "\n" << ir::print(g);
    if (verify_after_passes()) ir::verify(g);
  }
  ~Pipeline() {
    if (!env_on("AXON_PASS_TIMES")) return;
    std::sort(times_.rbegin(), times_.rend());
    for (const auto& [ms, name] : times_) std::cerr << ms << " ms  " << name << "\n";
  }

 private:
  std::vector<std::pair<double, std::string>> times_;
};
}  // namespace

ir::Graph run_pipeline(ir::Graph g) {
  Pipeline p;
  p.trace("frontend", g);
  p.run("remove_dead_nodes", remove_dead_nodes, g);
  return g;
}

}  // namespace axon::transforms
