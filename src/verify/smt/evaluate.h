// Evaluates a normal form in float64 at concrete sizes, indices and inputs,
// walking every sum and max literally. It is the encoding's own check: a
// test compares it with the reference interpreter on every op, so the
// SMT encoding and the interpreter are shown to implement the same meaning.
#pragma once

#include <map>
#include <string>

#include "verify/interpreter.h"
#include "verify/smt/normal_form.h"

namespace axon::verify::smt {

struct EvalEnv {
  std::map<std::string, const ir::Tensor*> inputs;  // by parameter name
  std::map<std::string, int64_t> vars;          // index variables and sizes
};

double evaluate(const PolyRef& p, const EvalEnv& env);

}  // namespace axon::verify::smt
