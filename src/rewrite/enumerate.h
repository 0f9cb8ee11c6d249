// Discovery by enumeration: the rule library (rules/library.json).
//
// Enumerates every term of at most `max_ops` operations over four inputs,
// X, Y : [M, K] and W, V : [K, N], with the ops neg, add, sub, mul
// (elementwise, equal shapes) and @ (matmul). Each term is evaluated once on
// random inputs in the integers modulo the prime 2^31 - 1 at M=3, K=4, N=5:
// these ops are polynomial, so two terms computing the same polynomial have
// the same fingerprint, and two different ones collide with negligible
// probability (the prover settles every candidate anyway). Within a group
// of equal fingerprints and output type the smallest term (fewest ops, then
// by its text) is canonical; each other term whose operands are canonical
// and not identically zero gives a candidate rule term -> canonical, one per class under
// renaming the inputs (X <-> Y, W <-> V). Each candidate is sent
// to the prover over symbolic M, K, N; only Proved ones enter the library.
// The enumeration order, the seed and the output are deterministic, so
// regenerating gives the same library (solver times aside).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace axon::rewrite {

struct Rule {
  std::string name;  // "r12"
  std::string lhs, rhs;
  std::string side_conditions;  // "none" or the axioms used
  std::string proved_by;        // "z3 (symbolic M, K, N >= 1)"
  double solver_ms = 0;
  int queries = 0;
};

struct EnumerateOptions {
  int max_ops = 3;
  uint64_t seed = 20261203;
  unsigned timeout_ms = 2000;
};

struct RuleLibrary {
  std::vector<Rule> rules;
  int terms = 0, candidates = 0, refused = 0;  // refused or unknown candidates
};

RuleLibrary enumerate_rules(const EnumerateOptions& o = {});

/// {"generator", "options", "stats", "rules": [{name, lhs, rhs, side_conditions, proved_by, solver_ms, queries}]}
nlohmann::json library_json(const RuleLibrary& lib, const EnumerateOptions& o);
/// The same without solver times: what an up-to-date check compares.
nlohmann::json library_fingerprint(const nlohmann::json& library);

}  // namespace axon::rewrite
