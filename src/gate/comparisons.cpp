#include "gate/comparisons.h"

#include <cmath>

#include "gate/hashing.h"
#include "support/parallel_for.h"
#include "verify/kernel_io.h"

namespace axon::gate {

namespace {

bool is_poison(const uint8_t* p, int bytes) {
  for (int i = 0; i < bytes; ++i)
    if (p[i] != 0xFF) return false;
  return true;
}

}  // namespace

uint64_t Comparisons::fingerprint(const std::vector<uint8_t>* bytes) {
  auto it = fingerprints_.find(bytes);
  if (it != fingerprints_.end()) return it->second;
  return fingerprints_[bytes] = fast_fingerprint(bytes->data(), bytes->size());
}

std::vector<const OutputCheck*> Comparisons::check(const std::vector<Item>& items) {
  // The fingerprints of the buffers not seen yet, on every core.
  std::vector<const std::vector<uint8_t>*> unseen;
  for (const Item& it : items)
    if (!fingerprints_.count(it.bytes)) {
      fingerprints_[it.bytes] = 0;
      unseen.push_back(it.bytes);
    }
  std::vector<uint64_t> hashes(unseen.size());
  support::parallel_for(unseen.size(), 0, [&](size_t i) { hashes[i] = fast_fingerprint(unseen[i]->data(), unseen[i]->size()); });
  for (size_t i = 0; i < unseen.size(); ++i) fingerprints_[unseen[i]] = hashes[i];

  // Each item's entry: an earlier one with equal bytes, or a new one.
  std::vector<Entry*> entry(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    std::vector<std::unique_ptr<Entry>>& same = done_[{it.set, it.output, fingerprints_[it.bytes]}];
    size_t k = 0;
    while (k < same.size() && same[k]->bytes != it.bytes && *same[k]->bytes != *it.bytes) ++k;
    if (k == same.size()) {
      same.push_back(std::make_unique<Entry>());
      same.back()->set = it.set;
      same.back()->output = it.output;
      same.back()->bytes = it.bytes;
    }
    entry[i] = same[k].get();
  }
  // Whether the poisoned ones hold a poisoned element, each entry once.
  std::vector<Entry*> scan;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].poisoned && entry[i]->poison_free < 0) {
      entry[i]->poison_free = 2;  // being scanned
      scan.push_back(entry[i]);
    }
  support::parallel_for(scan.size(), 0, [&](size_t j) { scan[j]->poison_free = has_poison(*scan[j]) ? 0 : 1; });
  // The checks not made yet.
  std::vector<std::pair<Entry*, bool>> todo;  // entry, poisoned
  std::vector<const OutputCheck*> out(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const bool poisoned = items[i].poisoned && entry[i]->poison_free == 0;
    std::unique_ptr<OutputCheck>& c = poisoned ? entry[i]->poisoned : entry[i]->plain;
    if (!c) {
      c = std::make_unique<OutputCheck>();
      todo.emplace_back(entry[i], poisoned);
    }
    out[i] = c.get();
  }
  // The references first, one set at a time (each computed once, on its
  // own threads), then the distinct comparisons on every core.
  for (const auto& [e, poisoned] : todo) refs_.reference(e->set);
  support::parallel_for(todo.size(), 0, [&](size_t j) {
    Entry& e = *todo[j].first;
    compute(e, todo[j].second, todo[j].second ? *e.poisoned : *e.plain);
  });
  return out;
}

bool Comparisons::has_poison(const Entry& e) const {
  const int width = ir::dtype_bytes(g_[g_.outputs[e.output]].type.dtype);
  const std::vector<uint8_t>& bytes = *e.bytes;
  for (size_t i = 0; i + static_cast<size_t>(width) <= bytes.size(); i += static_cast<size_t>(width))
    if (is_poison(bytes.data() + i, width)) return true;
  return false;
}

void Comparisons::compute(const Entry& e, bool poisoned, OutputCheck& c) {
  const ir::Type& t = g_[g_.outputs[e.output]].type;
  const int width = ir::dtype_bytes(t.dtype);
  const std::vector<uint8_t>& bytes = *e.bytes;
  const ir::Tensor& ref = refs_.reference(e.set)[e.output];
  const ir::Tensor& bound = refs_.bounds(e.set)[e.output];
  // The float64 values in a buffer taken from the pool and given back: a
  // fresh one per comparison cost as much in page faults as the conversion.
  std::vector<double> got;
  {
    std::lock_guard<std::mutex> lock(spare_mu_);
    if (!spare_.empty()) {
      got = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  verify::from_buffer(bytes.data(), t.numel(), t.dtype, got);
  if (poisoned)
    for (size_t i = 0; i < got.size(); ++i) {
      if (!is_poison(bytes.data() + i * static_cast<size_t>(width), width)) continue;
      const double r = ref.data[i];
      const bool matches = (std::isnan(r) && std::isnan(got[i])) || r == got[i];
      if (!matches) {
        if (c.first_unwritten < 0) c.first_unwritten = static_cast<int64_t>(i);
        ++c.unwritten;
      }
      got[i] = r;  // judged as unwritten_output, not again as wrong_result
    }
  c.cmp = verify::compare_with_budget(got, ref, bound);
  std::lock_guard<std::mutex> lock(spare_mu_);
  spare_.push_back(std::move(got));
}

}  // namespace axon::gate
