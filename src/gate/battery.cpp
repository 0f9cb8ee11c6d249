#include "gate/battery.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <random>
#include <thread>

#include "gate/hashing.h"
#include "verify/error_budget.h"
#include "verify/kernel_io.h"
#include "verify/random_values.h"
#include "ir/real.h"

namespace axon::gate {

namespace {

// Seeds of the sets: distinct streams from one battery seed.
uint64_t set_seed(uint64_t seed, int k) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(k + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

int64_t buffer_bytes(const ir::Type& t) {
  return std::max<int64_t>(t.numel(), 1) * ir::dtype_bytes(t.dtype);
}

Battery plan_battery(const ir::Graph& g, uint64_t seed, bool time_kernel, const std::shared_future<void>* second_core) {
  using verify::Distribution;
  Battery b;
  // The drawn sets, in order. Sets beyond verify::Distribution are normal
  // values scaled and shifted (then rounded to the parameter's dtype).
  struct Draw {
    std::string name;
    Distribution d;
    double scale = 1, offset = 0;
  };
  std::vector<Draw> draws = {{"normal", Distribution::Normal}, {"normal#2", Distribution::Normal}};
  for (Distribution d : {Distribution::ShiftedMean, Distribution::WideRange, Distribution::Large, Distribution::Ties,
                         Distribution::Tiny})
    draws.push_back({verify::distribution_name(d), d});
  draws.push_back({"small", Distribution::Normal, 1e-4});
  draws.push_back({"large_mean", Distribution::Normal, 1, 1000});
  // On this thread while the kernel compiles beside the plan (a second
  // drawing thread only slowed its compile: bench/RESULTS.md, "Verdict
  // time"), and on a second one too once the compile has ended and left a
  // core idle. Sets are taken in order; each is the same whoever draws it.
  std::vector<BatterySet> drawn(draws.size());
  std::vector<std::vector<std::vector<uint8_t>>> drawn_blocks(draws.size());
  std::atomic<size_t> next_draw{0};
  std::mutex failure_mu;
  std::exception_ptr failure;
  auto draw_sets = [&] {
    try {
      for (size_t k; (k = next_draw++) < draws.size();) {
        const Draw& d = draws[k];
        BatterySet& s = drawn[k];
        const bool derived = d.scale != 1 || d.offset != 0;
        s.name = d.name;
        s.distribution = derived ? d.name : verify::distribution_name(d.d);
        s.seed = set_seed(seed, static_cast<int>(k));
        s.compared = true;
        // The values and the kernel's bytes of them in one pass.
        s.inputs = verify::random_inputs(g, s.seed, verify::Draw{d.d, d.scale, d.offset}, &drawn_blocks[k]);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mu);
      if (!failure) failure = std::current_exception();
    }
  };
  std::thread second;
  if (second_core && second_core->valid())
    second = std::thread([&] {
      // Polls, so that it ends as soon as every set is taken even when the
      // build outlasts the plan.
      while (next_draw.load() < draws.size())
        if (second_core->wait_for(std::chrono::milliseconds(5)) == std::future_status::ready) {
          draw_sets();
          break;
        }
    });
  draw_sets();
  if (second.joinable()) second.join();
  if (failure) std::rethrow_exception(failure);
  for (size_t k = 0; k < draws.size(); ++k) {
    BatterySet& s = drawn[k];
    for (std::vector<uint8_t>& block : drawn_blocks[k]) {
      s.blocks.push_back(static_cast<int>(b.plan.blocks.size()));
      b.plan.blocks.push_back(std::move(block));
    }
    b.sets.push_back(std::move(s));
  }
  for (size_t p = 0; p < g.params.size(); ++p) {
    const BatterySet& a = b.sets[0];
    BatterySet s;
    s.name = "normal with " + g.params[p].name + " from normal#2";
    s.distribution = a.distribution;
    s.seed = a.seed;
    s.varied_param = static_cast<int>(p);
    s.compared = false;  // its inputs are A's and B's: References::ensure takes them from there
    s.blocks = a.blocks;
    s.blocks[p] = b.sets[1].blocks[p];
    b.sets.push_back(std::move(s));
  }

  // The key of the digests that compare slot calls with their baselines:
  // a stream of its own, so that the rest of the plan is what it was.
  b.plan.key = set_seed(seed, 2000);
  for (const ir::ParamInfo& p : g.params) b.plan.input_bytes.push_back(buffer_bytes(p.type));
  for (ir::NodeId o : g.outputs) b.plan.output_bytes.push_back(buffer_bytes(g[o].type));
  for (const BatterySet& s : b.sets) b.plan.sets.push_back(s.blocks);

  // Fills: the data of nan and random now, the references later. Their
  // values are streams of their own (verify/random_values.h), so that the
  // draws below do not depend on the outputs' sizes.
  std::mt19937_64 rng(set_seed(seed, 1000));
  int fill_streams = 0;
  auto fill_block = [&](const ir::Type& t, bool nan) {
    const uint64_t key = set_seed(seed, 1001 + fill_streams++);
    const int64_t n = std::max<int64_t>(t.numel(), 1);
    const int w = ir::dtype_bytes(t.dtype);
    std::vector<uint8_t> bytes(static_cast<size_t>(n * w));
    if (!nan && ir::is_float(t.dtype)) {
      // Finite values: normal values times 2^k, k uniform in [-4, 4].
      constexpr double kPow2[9] = {0.0625, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16};
      std::vector<double> values(static_cast<size_t>(n + 1));
      verify::normal_values(key, 0, (n + 1) / 2, values.data());
      values.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        values[static_cast<size_t>(i)] *= kPow2[verify::stream_word(~key, static_cast<uint64_t>(i) + 1) % 9];
      return verify::to_buffer(ir::Tensor{t, std::move(values)}, t.dtype);
    }
    const bool nan_float = nan && ir::is_float(t.dtype);
    for (int64_t e = 0; e < n; ++e) {
      const size_t i = static_cast<size_t>(e * w);
      const uint64_t r = verify::stream_word(key, static_cast<uint64_t>(e) + 1);
      if (nan_float) {
        // Exponent all ones, a random sign and a random non-zero payload.
        if (w == 4) {
          uint32_t v = 0x7F800000u | static_cast<uint32_t>((r >> 8) & 0x7FFFFF) | (r & 1 ? 0x80000000u : 0);
          if ((v & 0x7FFFFF) == 0) v |= 1;
          std::memcpy(&bytes[i], &v, 4);
        } else if (w == 8) {
          uint64_t v = 0x7FF0000000000000ull | ((r >> 12) & 0xFFFFFFFFFFFFFull) | (r & 1 ? 1ull << 63 : 0);
          if ((v & 0xFFFFFFFFFFFFFull) == 0) v |= 1;
          std::memcpy(&bytes[i], &v, 8);
        } else {
          const bool half = t.dtype == ir::DType::F16;
          uint16_t v = half ? static_cast<uint16_t>(0x7C00u | ((r >> 8) & 0x3FF)) : static_cast<uint16_t>(0x7F80u | ((r >> 8) & 0x7F));
          if ((v & (half ? 0x3FF : 0x7F)) == 0) v |= 1;
          if (r & 1) v |= 0x8000;
          std::memcpy(&bytes[i], &v, 2);
        }
      } else if (t.dtype == ir::DType::Bool) {
        bytes[i] = static_cast<uint8_t>(r & 1);
      } else {
        std::memcpy(&bytes[i], &r, static_cast<size_t>(w));
      }
    }
    return bytes;
  };
  auto add_fill = [&](const std::string& name, FillKind kind) {
    OutputFill f;
    f.name = name;
    f.kind = kind;
    b.plan.fills.push_back(std::move(f));
  };
  add_fill("poison", FillKind::Poison);
  add_fill("nan", FillKind::Data);
  for (ir::NodeId o : g.outputs) b.plan.fills.back().data.push_back(fill_block(g[o].type, true));
  add_fill("zeros", FillKind::Zeros);
  add_fill("random", FillKind::Data);
  for (ir::NodeId o : g.outputs) b.plan.fills.back().data.push_back(fill_block(g[o].type, false));
  add_fill("outputs of " + b.sets[1].name, FillKind::Data);
  add_fill("outputs of " + b.sets[0].name, FillKind::Data);
  add_fill("untouched", FillKind::Untouched);
  add_fill("kept (as the slot's previous call left them)", FillKind::Untouched);

  auto pick = [&](std::vector<int> from) { return from[rng() % from.size()]; };
  // The fill "another set's right answers" for a call on `set`.
  auto other_outputs = [&](int set) { return set == 1 ? fill::kOutputsOfA : fill::kOutputsOfB; };
  auto any_fill = [&](int set) {
    return pick({fill::kPoison, fill::kNan, fill::kZeros, fill::kRandom, other_outputs(set)});
  };

  auto add_call = [&](int set, Layout layout, bool fresh, int f) { b.plan.calls.push_back({set, layout, fresh, f}); };
  add_call(0, Layout::GuardAfter, true, fill::kPoison);
  add_call(1, Layout::GuardAfter, false, pick({fill::kNan, fill::kZeros, fill::kRandom}));
  const int f2 = any_fill(0);
  int f3 = any_fill(0);
  while (f3 == f2) f3 = any_fill(0);
  add_call(0, Layout::GuardAfter, true, f2);
  add_call(0, Layout::GuardAfter, false, f3);
  add_call(0, Layout::GuardBefore, true, any_fill(0));
  const int nsets = static_cast<int>(b.sets.size());
  std::vector<int> distributions;
  for (int s = 2; s < nsets; ++s)
    if (b.sets[static_cast<size_t>(s)].compared) {
      distributions.push_back(s);
      add_call(s, Layout::GuardAfter, true, any_fill(s));
    }
  std::vector<int> probe = {fill::kPoison, fill::kNan, fill::kZeros, fill::kRandom, fill::kOutputsOfB};
  std::shuffle(probe.begin(), probe.end(), rng);
  for (int f : probe) add_call(0, Layout::GuardAfter, true, f);
  add_call(0, Layout::Heap, true, fill::kUntouched);
  for (int s = 2; s < nsets; ++s)
    if (!b.sets[static_cast<size_t>(s)].compared) add_call(s, Layout::GuardAfter, true, fill::kPoison);

  b.sanitized_plan = b.plan;
  b.sanitized_plan.calls = {{0, Layout::Heap, true, fill::kPoison}};
  b.sanitized_plan.fills.resize(1);

  // Slots: A, B and two other distributions.
  std::shuffle(distributions.begin(), distributions.end(), rng);
  std::vector<int> slot_sets = {0, 1};
  for (size_t i = 0; i < distributions.size() && slot_sets.size() < 4; ++i) slot_sets.push_back(distributions[i]);
  for (int s : slot_sets) b.plan.slots.push_back({s, any_fill(s)});
  const int nslots = static_cast<int>(slot_sets.size());
  b.plan.concurrent_a = 0;
  b.plan.concurrent_b = 1;

  // ThreadSanitizer sees a race between the two threads' calls whenever
  // they touch the same memory without synchronisation, whether or not the
  // calls happened to overlap in time: a few rounds suffice.
  b.race_plan = b.plan;
  b.race_plan.calls.clear();
  b.race_plan.slots.resize(2);
  b.race_plan.fills.resize(1);  // the poison: the others' data comes later, from the references
  for (auto& slot : b.race_plan.slots) slot.second = fill::kPoison;
  b.race_plan.min_rounds = b.race_plan.max_rounds = 4;
  b.race_plan.rounds_min_ms = b.race_plan.rounds_max_ms = 0;

  // The soak: 1050 to 1299 calls on drawn slots. A quarter get a drawn fill
  // and are compared with the slot's baseline (and timed); the others keep
  // what the slot's previous call left in the outputs, as a user's reused
  // buffer would, and one in eight of those is compared (docs/gate.md,
  // "The soak draws which calls it fills and compares"). Ten are recorded,
  // at drawn positions in [0, 100), [100, 1000) and [1000, n), each with a
  // drawn fill.
  const int n = 1050 + static_cast<int>(rng() % 250);
  for (int i = 0; i < n; ++i) {
    int k = static_cast<int>(rng() % static_cast<uint64_t>(nslots));
    const int f = any_fill(slot_sets[static_cast<size_t>(k)]);
    const bool filled = rng() % 4 == 0;
    const bool compared = filled || rng() % 8 == 0;
    b.plan.soak.push_back({k, filled ? f : fill::kKept, false, compared});
  }
  auto record_in = [&](int lo, int hi, int count) {
    for (int c = 0; c < count; ++c) {
      SoakCall& call = b.plan.soak[static_cast<size_t>(lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo)))];
      call.record = call.compare = true;
      if (call.fill == fill::kKept) call.fill = any_fill(slot_sets[static_cast<size_t>(call.slot)]);
    }
  };
  record_in(0, 100, 3);
  record_in(100, 1000, 3);
  record_in(1000, n, 4);

  b.plan.timed = time_kernel;  // the soak's calls, each with its drawn slot and fill
  b.plan.last_slot = static_cast<int>(rng() % static_cast<uint64_t>(nslots));
  b.plan.last_fill = any_fill(slot_sets[static_cast<size_t>(b.plan.last_slot)]);

  std::vector<int> compared = {0, 1};
  compared.insert(compared.end(), distributions.begin(), distributions.end());
  b.user.set = compared[rng() % compared.size()];
  b.user.calls = 1050 + static_cast<int>(rng() % 300);
  return b;
}

void fill_reference_outputs(const ir::Graph& g, Battery& b, References& refs) {
  const int from[2] = {1, 0};  // kOutputsOfB holds set 1's reference, kOutputsOfA set 0's
  const int to[2] = {fill::kOutputsOfB, fill::kOutputsOfA};
  for (int i = 0; i < 2; ++i) {
    OutputFill& f = b.plan.fills[static_cast<size_t>(to[i])];
    f.data.clear();
    const std::vector<ir::Tensor>& ref = refs.reference(from[i]);
    for (size_t o = 0; o < g.outputs.size(); ++o) {
      f.data.push_back(verify::to_buffer(ref[o], g[g.outputs[o]].type.dtype));
      f.data.back().resize(static_cast<size_t>(b.plan.output_bytes[o]));
    }
  }
}

References::References(const ir::Graph& g, const Battery& b, int threads_per_set)
    : g_(g), b_(b), entries_(b.sets.size()), eval_(g, threads_per_set) {}

void References::ensure(int set) {
  Entry& e = entries_.at(static_cast<size_t>(set));
  std::call_once(e.once, [&] {
    const BatterySet& s = b_.sets[static_cast<size_t>(set)];
    verify::ReferenceWithBounds r;
    if (s.varied_param < 0) {
      r = eval_.evaluate(s.inputs);
    } else {  // a mixed set, computed only when a call's output calls for it: A with one parameter of B
      std::vector<ir::Tensor> inputs;
      for (size_t q = 0; q < b_.sets[0].inputs.size(); ++q)
        inputs.push_back(b_.sets[q == static_cast<size_t>(s.varied_param) ? 1 : 0].inputs[q]);
      r = eval_.evaluate(inputs);
    }
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
      for (size_t i; !stopped_ && (i = next++) < which.size();) ensure(which[i]);
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

const std::vector<ir::Tensor>& References::reference(int set) {
  ensure(set);
  return entries_[static_cast<size_t>(set)].ref;
}

const std::vector<ir::Tensor>& References::bounds(int set) {
  ensure(set);
  return entries_[static_cast<size_t>(set)].bound;
}

std::vector<InputSet> describe_inputs(const Battery& b) {
  // Each block once (the mixed sets share theirs).
  std::vector<uint64_t> hash;
  for (const std::vector<uint8_t>& block : b.plan.blocks) hash.push_back(fast_fingerprint(block.data(), block.size()));
  std::vector<InputSet> out;
  for (const BatterySet& s : b.sets) {
    InputSet i;
    i.name = s.name;
    i.distribution = s.distribution;
    i.seed = s.seed;
    for (int blk : s.blocks) i.hashes.push_back(hex64(hash[static_cast<size_t>(blk)]));
    out.push_back(std::move(i));
  }
  return out;
}

}  // namespace axon::gate
