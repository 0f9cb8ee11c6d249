#include "ir/op.h"

namespace axon::ir {

namespace {
struct OpInfo {
  const char* name;
  int arity;
  uint32_t props;
};
constexpr OpInfo kOps[] = {
#define AXON_OP(name, spelling, arity, props) {spelling, arity, props},
#include "ir/ops.def"
#undef AXON_OP
};
}  // namespace

const char* op_name(Op op) { return kOps[static_cast<int>(op)].name; }
int op_arity(Op op) { return kOps[static_cast<int>(op)].arity; }
uint32_t op_properties(Op op) { return kOps[static_cast<int>(op)].props; }

bool parse_op(const std::string& spelling, Op* out) {
  for (int i = 0; i < kNumOps; ++i)
    if (spelling == kOps[i].name) {
      *out = static_cast<Op>(i);
      return true;
    }
  return false;
}

}  // namespace axon::ir
