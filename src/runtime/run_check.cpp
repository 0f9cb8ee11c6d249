#include "runtime/run_check.h"

#include <chrono>
#include <cstring>

#include "verify/inputs.h"
#include "verify/kernel_io.h"

namespace axon::runtime {

bool RunCheck::ok() const {
  for (const OutputCheck& o : outputs)
    if (!o.cmp.ok()) return false;
  return true;
}

std::vector<void*> KernelBuffers::pointers() {
  std::vector<void*> p;
  for (auto& s : storage) p.push_back(s.data());
  return p;
}

KernelBuffers make_buffers(const ir::Graph& g, const std::vector<ir::Tensor>& inputs) {
  KernelBuffers b;
  for (size_t i = 0; i < g.params.size(); ++i) {
    std::vector<uint8_t> bytes = verify::to_buffer(inputs.at(i), g.params[i].type.dtype);
    b.storage.emplace_back(bytes.begin(), bytes.end());
  }
  for (ir::NodeId o : g.outputs) {
    const ir::Type& t = g[o].type;
    // 0xFF bytes are a NaN in every float format, -1 in ints and 'true'-ish in bool.
    size_t bytes = static_cast<size_t>(std::max<int64_t>(t.numel(), 1)) * ir::dtype_bytes(t.dtype);
    b.storage.emplace_back(bytes, uint8_t{0xFF});
  }
  return b;
}

RunCheck run_and_check(const ir::Graph& g, const LoadedKernel& kernel, uint64_t seed) {
  RunCheck r;
  r.inputs = verify::random_inputs(g, seed);
  auto t0 = std::chrono::steady_clock::now();
  verify::ReferenceWithBounds rb = verify::reference_with_bounds(g, r.inputs);
  r.reference = std::move(rb.reference);
  r.bounds = std::move(rb.bounds);
  r.interpreter_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  KernelBuffers b = make_buffers(g, r.inputs);
  kernel.call(b.pointers());
  for (size_t j = 0; j < g.outputs.size(); ++j) {
    const ir::Type& t = g[g.outputs[j]].type;
    OutputCheck oc;
    oc.got = verify::from_buffer(b.storage[g.params.size() + j].data(), t.numel(), t.dtype);
    oc.cmp = verify::compare_with_budget(oc.got, r.reference[j], r.bounds[j]);
    r.outputs.push_back(std::move(oc));
  }
  return r;
}

}  // namespace axon::runtime
