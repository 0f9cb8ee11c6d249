#include "gate/battery.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "gate/hashing.h"
#include "verify/error_budget.h"
#include "verify/kernel_io.h"
#include "verify/real.h"

namespace axon::gate {

namespace {

// Seeds of the sets: distinct streams from one battery seed.
uint64_t set_seed(uint64_t seed, int k) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(k + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int64_t buffer_bytes(const ir::Type& t) {
  return std::max<int64_t>(t.numel(), 1) * ir::dtype_bytes(t.dtype);
}

}  // namespace

Battery plan_battery(const ir::Graph& g, uint64_t seed, bool time_kernel) {
  using verify::Distribution;
  Battery b;
  // Sets beyond verify::Distribution are normal values scaled and shifted
  // (then rounded to the parameter's dtype).
  auto add_drawn = [&](const std::string& name, Distribution d, int k, double scale = 1, double offset = 0) {
    BatterySet s;
    s.name = name;
    s.distribution = scale != 1 || offset != 0 ? name : verify::distribution_name(d);
    s.seed = set_seed(seed, k);
    s.compared = true;
    s.inputs = verify::random_inputs(g, s.seed, d);
    for (verify::Tensor& t : s.inputs)
      if ((scale != 1 || offset != 0) && ir::is_float(t.type.dtype))
        for (double& x : t.data) x = verify::cast_to(t.type.dtype, verify::Real{x * scale + offset}).v;
    for (size_t p = 0; p < g.params.size(); ++p) {
      s.blocks.push_back(static_cast<int>(b.plan.blocks.size()));
      b.plan.blocks.push_back(verify::to_buffer(s.inputs[p], g.params[p].type.dtype));
    }
    b.sets.push_back(std::move(s));
  };
  add_drawn("normal", Distribution::Normal, 0);
  add_drawn("normal#2", Distribution::Normal, 1);
  const Distribution others[] = {Distribution::ShiftedMean, Distribution::WideRange, Distribution::Large,
                                 Distribution::Ties, Distribution::Tiny};
  for (int i = 0; i < 5; ++i) add_drawn(verify::distribution_name(others[i]), others[i], 2 + i);
  add_drawn("small", Distribution::Normal, 7, 1e-4);
  add_drawn("large_mean", Distribution::Normal, 8, 1, 1000);
  for (size_t p = 0; p < g.params.size(); ++p) {
    BatterySet s = b.sets[0];
    s.name = "normal with " + g.params[p].name + " from normal#2";
    s.varied_param = static_cast<int>(p);
    s.compared = false;
    s.inputs[p] = b.sets[1].inputs[p];
    s.blocks[p] = b.sets[1].blocks[p];
    b.sets.push_back(std::move(s));
  }

  for (const ir::ParamInfo& p : g.params) b.plan.input_bytes.push_back(buffer_bytes(p.type));
  for (ir::NodeId o : g.outputs) b.plan.output_bytes.push_back(buffer_bytes(g[o].type));
  for (const BatterySet& s : b.sets) b.plan.sets.push_back(s.blocks);

  auto add_call = [&](int set, Layout layout, bool fresh) { b.plan.calls.push_back({set, layout, fresh}); };
  add_call(0, Layout::GuardAfter, true);
  add_call(1, Layout::GuardAfter, false);
  add_call(0, Layout::GuardAfter, true);
  add_call(0, Layout::GuardAfter, false);
  add_call(0, Layout::GuardBefore, true);
  for (int s = 2; s < static_cast<int>(b.sets.size()); ++s) add_call(s, Layout::GuardAfter, true);
  if (time_kernel) b.plan.time_set = 0;

  b.sanitized_plan = b.plan;
  b.sanitized_plan.calls = {{0, Layout::Heap, true}};
  b.sanitized_plan.time_set = -1;
  return b;
}

References::References(const ir::Graph& g, const Battery& b) : g_(g), b_(b), entries_(b.sets.size()) {}

void References::ensure(int set) {
  Entry& e = entries_.at(static_cast<size_t>(set));
  std::call_once(e.once, [&] {
    verify::ReferenceWithBounds r = verify::reference_with_bounds(g_, b_.sets[static_cast<size_t>(set)].inputs);
    e.ref = std::move(r.reference);
    e.bound = std::move(r.bounds);
  });
}

void References::compute(const std::vector<int>& which, int threads) {
  threads = std::max(1, std::min<int>(threads, static_cast<int>(which.size())));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr failure;
  auto work = [&] {
    try {
      for (size_t i; (i = next++) < which.size();) ensure(which[i]);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

const std::vector<verify::Tensor>& References::reference(int set) {
  ensure(set);
  return entries_[static_cast<size_t>(set)].ref;
}

const std::vector<verify::Tensor>& References::bounds(int set) {
  ensure(set);
  return entries_[static_cast<size_t>(set)].bound;
}

std::vector<InputSet> describe_inputs(const Battery& b) {
  std::vector<InputSet> out;
  for (const BatterySet& s : b.sets) {
    InputSet i;
    i.name = s.name;
    i.distribution = s.distribution;
    i.seed = s.seed;
    for (int blk : s.blocks) {
      const std::vector<uint8_t>& data = b.plan.blocks[static_cast<size_t>(blk)];
      i.hashes.push_back(hex64(fnv1a64(data.data(), data.size())));
    }
    out.push_back(std::move(i));
  }
  return out;
}

}  // namespace axon::gate
