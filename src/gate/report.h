// The gate's report, for people (text) and for scripts (JSON). The JSON
// field names are a stable contract (docs/gate.md, "report").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gate/gate.h"

namespace axon::gate {

nlohmann::json report_json(const GateReport& r);
std::string report_text(const GateReport& r);

}  // namespace axon::gate
