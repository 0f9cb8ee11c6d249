// The schedule space of one graph on one target (docs/architecture.md, "Data
// flow", step 6; the knobs of each stage: docs/loop_ir.md): the
// choices that change how fast a kernel runs but never what it computes.
//
/// A Space is a list of named knobs, each with its legal values; a Schedule
/// gives every knob one value. Knob names are stable strings ("k0.mr",
/// "k0.threads", ...: kernel index, then the choice) so that schedules can
/// be stored in the tuning database, shown in reports and proposed from
/// outside. The search treats knobs as opaque; only the CPU code generator
/// (codegen/cpu) gives them meaning.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "target/target.h"

namespace axon::schedule {

struct Knob {
  std::string name;
  std::vector<int64_t> values;  // legal values; values[0] is the default
  std::string doc;              // one line for reports
};

struct Space {
  std::vector<Knob> knobs;
  const Knob* find(const std::string& name) const;
  /// Number of points (product of the value counts), saturating at 2^62.
  int64_t size() const;
};

/// A value for every knob of a Space.
using Schedule = std::map<std::string, int64_t>;

/// The knobs of `g` on `t`.
Space schedule_space(const ir::Graph& g, const target::Target& t);

/// values[0] of every knob.
Schedule default_schedule(const Space& s);

/// Empty when `s` is a point of the space that can be compiled for `t`
/// (every knob present with a legal value, register and cache budgets met,
/// tile sizes dividing what they must); otherwise why not, in one line.
/// Run before compiling: an illegal candidate is never compiled.
std::string why_illegal(const ir::Graph& g, const Schedule& s, const target::Target& t);

/// The cost model: predicted seconds of one call of the kernel `s` gives
/// (a roofline of its loop nests plus penalties for poor tiles); used to rank
/// candidates before any is measured. Requires why_illegal(g, s, t) == "".
double predicted_seconds(const ir::Graph& g, const Schedule& s, const target::Target& t);

nlohmann::json to_json(const Schedule& s);
/// Throws axon::Diagnostic naming the key when `j` is not an object of integers.
Schedule schedule_from_json(const nlohmann::json& j);

}  // namespace axon::schedule
