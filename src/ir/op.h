// The Op enum, names and properties, generated from ops.def.
#pragma once

#include <cstdint>
#include <string>

namespace axon::ir {

enum OpProperty : uint32_t {
  Leaf = 1u << 0,
  Elementwise = 1u << 1,
  Reduction = 1u << 2,
  Contraction = 1u << 3,
  Layout = 1u << 4,
  Commutative = 1u << 5,
  Associative = 1u << 6,
  Linear = 1u << 7,
  Transcendental = 1u << 8,
  Comparison = 1u << 9,
  Logical = 1u << 10,
};

enum class Op : uint8_t {
#define AXON_OP(name, spelling, arity, props) name,
#include "ir/ops.def"
#undef AXON_OP
};

constexpr int kNumOps = 0
#define AXON_OP(name, spelling, arity, props) +1
#include "ir/ops.def"
#undef AXON_OP
    ;

const char* op_name(Op op);
/// -1 for variadic.
int op_arity(Op op);
uint32_t op_properties(Op op);
inline bool has_property(Op op, OpProperty p) { return (op_properties(op) & p) != 0; }
inline bool is_elementwise(Op op) { return has_property(op, Elementwise); }
inline bool is_reduction(Op op) { return has_property(op, Reduction); }
/// Looks an op up by its spelling; false when unknown.
bool parse_op(const std::string& spelling, Op* out);

}  // namespace axon::ir
