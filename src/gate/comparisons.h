// Comparisons of kernel outputs with their input set's float64 reference,
// shared by every judgement of one verdict. A comparison depends only on
// the set, the output, whether the call's fill was the poison and the
// output's bytes; a deterministic kernel returns the same bytes for a set
// in every call of the optimised run, in the sanitized run's call and in
// the plain process's first and last calls, so each distinct one is made
// once (grouped by fast_fingerprint, equal bytes confirmed byte for byte),
// the distinct ones of a request on every core; a call after the poison
// fill shares the comparison of a call after another fill when its bytes
// hold no poisoned element.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "gate/battery.h"
#include "verify/error_budget.h"

namespace axon::gate {

struct OutputCheck {
  verify::Comparison cmp;  // with unwritten elements left out
  int64_t unwritten = 0, first_unwritten = -1;
};

class Comparisons {
 public:
  Comparisons(const ir::Graph& g, References& refs) : g_(g), refs_(refs) {}

  struct Item {
    int set = 0;
    size_t output = 0;
    bool poisoned = false;  // the outputs held the poison before the call: elements still holding it are unwritten
    const std::vector<uint8_t>* bytes = nullptr;  // must outlive this object
  };
  /// The check of each item, in order; the distinct ones not made before
  /// are made now, on every core. The results live as long as this object.
  std::vector<const OutputCheck*> check(const std::vector<Item>& items);
  /// fast_fingerprint of bytes, each buffer hashed once.
  uint64_t fingerprint(const std::vector<uint8_t>* bytes);

 private:
  // One distinct output of a set. Judged after the poison fill, it differs
  // from its plain check only where an element still holds the poison: for
  // bytes without such an element (a correct kernel's), the two are one.
  struct Entry {
    int set = 0;
    size_t output = 0;
    const std::vector<uint8_t>* bytes = nullptr;
    int poison_free = -1;  // unknown yet
    std::unique_ptr<OutputCheck> plain, poisoned;
  };
  void compute(const Entry& e, bool poisoned, OutputCheck& c);  // on any thread
  bool has_poison(const Entry& e) const;

  const ir::Graph& g_;
  References& refs_;
  std::map<std::tuple<int, size_t, uint64_t>, std::vector<std::unique_ptr<Entry>>> done_;
  std::map<const std::vector<uint8_t>*, uint64_t> fingerprints_;
  std::mutex spare_mu_;
  std::vector<std::vector<double>> spare_;  // conversion buffers, one per thread at most
};

}  // namespace axon::gate
