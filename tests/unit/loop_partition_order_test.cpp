// Partitioning a graph into stages (loop/partition.h): every stage reads
// only parameters and values an earlier stage wrote. A transpose of a value
// computed in the same run of loop work (here a product of a slice with
// itself) is a Copy stage listed after the stage that computes its base;
// it was once listed first and read a buffer nothing had written yet. The
// compiled kernels are checked against the float64 reference.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cpu_test_support.h"
#include "loop/partition.h"

namespace axon {
namespace {

// The index of the first stage that reads a value no earlier stage wrote
// (parameters, constants and iotas are given), or -1.
int first_stage_reading_unwritten(const ir::Graph& g, const loop::Partition& p) {
  std::set<ir::NodeId> written;
  for (ir::NodeId i = 0; i < g.size(); ++i)
    if (g[i].op == ir::Op::Param || g[i].op == ir::Op::Constant || g[i].op == ir::Op::Iota) written.insert(i);
  for (size_t s = 0; s < p.stages.size(); ++s) {
    for (ir::NodeId in : p.stages[s].inputs)
      if (!written.count(in)) return static_cast<int>(s);
    written.insert(p.stages[s].results.begin(), p.stages[s].results.end());
  }
  return -1;
}

const char* kSpecs[] = {
    // The transpose's base is the product, computed in the same run.
    "import numpy as np\n\ndef f(p0: \"f32[5, 3]\"):\n    v = p0[1::2]\n    return np.swapaxes(v * v, 0, -1)\n",
    // A row kernel's result, transposed, beside a reduction of the same value.
    "import numpy as np\n\ndef f(a: \"f32[4, 2, 5]\", b: \"f32[4, 2, 5]\"):\n"
    "    v = np.swapaxes(a + b, 1, -3)\n    return v.max(axis=(0, 2)), v * 2.0\n",
};

TEST(loop_partition, EveryStageReadsWhatEarlierStagesWrote) {
  for (const char* spec : kSpecs) {
    ir::Graph g = test::parse(spec);
    loop::Partition p = loop::partition_graph(g);
    bool has_copy = false;
    for (const loop::Stage& s : p.stages) has_copy |= s.kind == loop::StageKind::Copy;
    EXPECT_TRUE(has_copy) << spec;
    EXPECT_EQ(first_stage_reading_unwritten(g, p), -1) << spec;
  }
}

TEST(loop_partition, KernelsWithACopyOfAComputedValueAreCorrect) {
  for (const char* spec : kSpecs) {
    ir::Graph g = test::parse(spec);
    for (const auto& t : test::targets()) {
      schedule::Space sp = schedule::schedule_space(g, t);
      test::expect_correct(g, schedule::default_schedule(sp), t, std::string(spec).substr(20, 60), 5);
    }
  }
}

}  // namespace
}  // namespace axon
