// Shared by the tile IR's tests: the verifier's problems as one text, so
// that EXPECT_EQ(problems_text(verify(k)), "") prints them all on failure.
#pragma once

#include <string>
#include <vector>

namespace axon::test {

inline std::string problems_text(const std::vector<std::string>& problems) {
  std::string s;
  for (const std::string& p : problems) s += p + "\n";
  return s;
}

}  // namespace axon::test
