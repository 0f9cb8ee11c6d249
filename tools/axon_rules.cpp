// axon_rules: regenerates the rule library by enumeration and proof
// (src/rewrite/enumerate.h). `axon_rules --out rules/library.json`; without
// --out it prints the library. Exit 0 on success, 2 on an internal error.
#include <fstream>
#include <iostream>
#include <string>

#include "rewrite/enumerate.h"

int main(int argc, char** argv) {
  std::string out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out = argv[++i];
    else {
      std::cerr << "usage: axon_rules [--out FILE]\n";
      return 1;
    }
  }
  try {
    axon::rewrite::EnumerateOptions o;
    nlohmann::json j = axon::rewrite::library_json(axon::rewrite::enumerate_rules(o), o);
    if (out.empty()) {
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::ofstream f(out);
    f << j.dump(2) << "\n";
    if (!f) {
      std::cerr << "axon_rules: cannot write " << out << "\n";
      return 2;
    }
    std::cerr << "axon_rules: " << j["rules"].size() << " rules -> " << out << "\n";
  } catch (const std::exception& e) {
    std::cerr << "axon_rules: internal error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
