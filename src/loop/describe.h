// describe_stages: what each stage of a partition is, in one line, and for
// a stage the specialised generators do not take, why not (the row form's
// reason, each product's reason), and for a product stored for a later
// stage why that stage is not its epilogue, so that `axon explain` shows where a
// program leaves the fast patterns (docs/loop_ir.md).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "loop/partition.h"

namespace axon::loop {

struct StageDescription {
  std::string kind;               // stage_kind_name, "loops" for a Naive stage
  std::string what;               // one line: the nodes it computes and its shape
  std::vector<std::string> why;   // for a Naive stage: why it is no row kernel, and why each product in it is no
                                  // contraction; for a Contraction stage read by another: why that is not its epilogue
};

std::vector<StageDescription> describe_stages(const ir::Graph& g, const Partition& p);

}  // namespace axon::loop
