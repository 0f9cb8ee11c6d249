// The graph pipeline: the passes a spec's graph goes through before code
// generation, in order. Each pass is a function Graph -> Graph whose
// contract is in its own header; after each one the pipeline traces the IR
// (AXON_DUMP_IR=1 prints it to stderr), times it (AXON_PASS_TIMES=1 prints a
// sorted table) and, in debug builds or with AXON_VERIFY_PASSES=1, runs the
// invariant checker.
#pragma once

#include "ir/graph.h"

namespace axon::transforms {

ir::Graph run_pipeline(ir::Graph g);

}  // namespace axon::transforms
