// The stored rule library (rules/library.json) is what the generator makes
// today: regenerated in memory with the same seed and options and compared
// (solver times aside). Fix a failure with
//     build/axon_rules --out rules/library.json
// Also checks a few rules the enumeration must find, and that every stored
// rule was proved.
#include <gtest/gtest.h>

#include <fstream>

#include "rewrite/enumerate.h"

using namespace axon::rewrite;

namespace {
nlohmann::json stored() {
  std::ifstream f(std::string(AXON_SOURCE_DIR) + "/rules/library.json");
  EXPECT_TRUE(f.good()) << "rules/library.json is missing: run build/axon_rules --out rules/library.json";
  return nlohmann::json::parse(f);
}

bool has_rule(const nlohmann::json& lib, const std::string& lhs, const std::string& rhs) {
  for (const auto& r : lib["rules"])
    if (r["lhs"] == lhs && r["rhs"] == rhs) return true;
  return false;
}
}  // namespace

TEST(rewrite_library, StoredLibraryIsUpToDate) {
  EnumerateOptions o;
  nlohmann::json fresh = library_json(enumerate_rules(o), o);
  nlohmann::json old = stored();
  EXPECT_EQ(library_fingerprint(old), library_fingerprint(fresh))
      << "rules/library.json is stale: run build/axon_rules --out rules/library.json";
}

TEST(rewrite_library, FindsDistributivityAndNegationRules) {
  nlohmann::json lib = stored();
  EXPECT_TRUE(has_rule(lib, "(X @ V) + (Y @ V)", "(X + Y) @ V"));
  EXPECT_TRUE(has_rule(lib, "(X @ V) + (X @ W)", "X @ (V + W)"));
  EXPECT_TRUE(has_rule(lib, "-(X @ W)", "-X @ W"));
  EXPECT_TRUE(has_rule(lib, "Y * X", "X * Y"));
  EXPECT_FALSE(has_rule(lib, "(X @ V) * (X @ V)", "(X * X) @ V"));  // not an identity
  for (const auto& r : lib["rules"]) {
    EXPECT_EQ(r["side_conditions"], "none") << r["name"];
    EXPECT_NE(r["proved_by"].get<std::string>().find("z3"), std::string::npos) << r["name"];
  }
  EXPECT_GT(lib["rules"].size(), 100u);
}
