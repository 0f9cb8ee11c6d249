// Masks inside fused attention (tile/masked_blocks.h, loop/attention_group.h):
// a mask built from iotas is computed in the kernel, the key blocks it
// covers wholly are left out when it is an affine comparison of the row and
// the key (np.triu / np.tril with any offset, arange comparisons), every
// block is computed otherwise, and the kernels stay correct on every target
// for default and random schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>

#include "codegen/cpu/attention.h"
#include "cpu_test_support.h"
#include "loop/partition.h"
#include "tile/masked_blocks.h"

namespace axon {
namespace {

const std::string kHead =
    "import numpy as np\n\n"
    "def f(Q: \"f32[2, 128, 32]\", K: \"f32[2, 256, 32]\", V: \"f32[2, 256, 64]\"):\n"
    "    s = Q @ np.swapaxes(K, -1, -2) * 0.25\n";
const std::string kTail =
    "    e = np.exp(s - np.max(s, axis=-1, keepdims=True))\n"
    "    return (e / np.sum(e, axis=-1, keepdims=True)) @ V\n";

struct MaskCase {
  const char* name;
  const char* mask;  // lines that rewrite s
  bool skips;        // whether wholly masked key blocks are left out
  std::function<bool(int64_t i, int64_t j)> masked;
};

const MaskCase kCases[] = {
    {"triu k=1", "    s = np.where(np.triu(np.ones((128, 256), dtype=bool), k=1), -np.inf, s)\n", true,
     [](int64_t i, int64_t j) { return j >= i + 1; }},
    {"triu k=70", "    s = np.where(np.triu(np.ones((128, 256), dtype=bool), k=70), -np.inf, s)\n", true,
     [](int64_t i, int64_t j) { return j >= i + 70; }},
    {"tril kept", "    s = np.where(np.tril(np.ones((128, 256), dtype=bool)), s, -np.inf)\n", true,
     [](int64_t i, int64_t j) { return j > i; }},
    {"tril k=9 kept", "    s = np.where(np.tril(np.ones((128, 256), dtype=bool), k=9), s, -np.inf)\n", true,
     [](int64_t i, int64_t j) { return j > i + 9; }},
    {"arange", "    s = np.where(2 * np.arange(256)[None, :] > np.arange(128)[:, None] + 100, -np.inf, s)\n", true,
     [](int64_t i, int64_t j) { return 2 * j > i + 100; }},
    // Masks that are not an affine comparison of row and key growing with
    // the key: every block is computed.
    {"row times key", "    s = np.where(np.arange(256)[None, :] * np.arange(128)[:, None] > 5000, -np.inf, s)\n", false,
     [](int64_t i, int64_t j) { return i * j > 5000; }},
    {"keys up to the row", "    s = np.where(np.triu(np.ones((128, 256), dtype=bool), k=1), s, -np.inf)\n", false,
     [](int64_t i, int64_t j) { return j <= i; }},
};

// The leading key blocks that hold an unmasked element of query block qb.
int64_t blocks_needed(const MaskCase& c, int64_t qb, int64_t bq, int64_t bk) {
  int64_t n = 0;
  for (int64_t i = qb * bq; i < qb * bq + bq; ++i)
    for (int64_t j = 0; j < 256; ++j)
      if (!c.masked(i, j)) n = std::max(n, j / bk + 1);
  return n;
}

const loop::Stage& attention_stage(const loop::Partition& p) {
  for (const loop::Stage& s : p.stages)
    if (s.kind == loop::StageKind::Attention) return s;
  throw std::runtime_error("no attention stage");
}

// The leading key blocks in which query block qb masks nothing.
int64_t blocks_unmasked(const MaskCase& c, int64_t qb, int64_t bq, int64_t bk) {
  int64_t n = 0;
  while (n < 256 / bk) {
    bool any = false;
    for (int64_t i = qb * bq; i < qb * bq + bq; ++i)
      for (int64_t j = n * bk; j < n * bk + bk; ++j) any = any || c.masked(i, j);
    if (any) break;
    ++n;
  }
  return n;
}

// The extent of the online softmax's loop `var` over key blocks (kb: the
// blocks computed, or with km after it the blocks the mask hides nothing
// in), in a kernel without K^T packing (whose own loop over kb packs every
// block); nullopt without such a loop. A loop that runs once is folded away
// (tile/passes/fold_indices.h): then 1.
std::optional<tile::Index> loop_extent(const tile::Kernel& k, const std::string& var) {
  std::optional<tile::Index> e;
  int loops = 0;
  tile::visit(k.body, [&](const tile::Stmt& s) {
    if (s.kind() == tile::StmtKind::For && s.node().var == var) e = s.node().extent, ++loops;
  });
  EXPECT_LE(loops, 1);
  return e;
}

// The key blocks computed for query block qb: kb's extent, plus km's where
// there is one; a kb loop that fold_indices removed (it never runs) or
// folded (it runs once) ran `folded_kb` times.
int64_t key_blocks_at(const tile::Kernel& k, int64_t qb, int64_t folded_kb) {
  std::optional<tile::Index> kb = loop_extent(k, "kb"), km = loop_extent(k, "km");
  if (!km) return kb ? kb->eval({{"qb", qb}}) : 1;
  return (kb ? kb->eval({{"qb", qb}}) : folded_kb) + km->eval({{"qb", qb}});
}

TEST(attention_mask, IotaMasksAreComputedInTheKernel) {
  for (const MaskCase& c : kCases) {
    ir::Graph g = test::parse(kHead + c.mask + kTail);
    loop::Partition p = loop::partition_graph(g);
    ASSERT_EQ(p.stages.size(), 1u) << c.name;
    const loop::Stage& st = attention_stage(p);
    EXPECT_EQ(st.inputs.size(), 3u) << c.name;
    for (bool b : st.attention.computed) EXPECT_TRUE(b) << c.name;
  }
  // A mask that is an input stays one.
  ir::Graph g = test::parse(
      "import numpy as np\n\n"
      "def f(Q: \"f32[2, 128, 32]\", K: \"f32[2, 256, 32]\", V: \"f32[2, 256, 64]\", M: \"bool[128, 256]\"):\n"
      "    s = Q @ np.swapaxes(K, -1, -2)\n    s = np.where(M, -np.inf, s)\n" + kTail);
  const loop::Partition p = loop::partition_graph(g);
  const loop::Stage& st = attention_stage(p);
  EXPECT_EQ(st.inputs.size(), 4u);
  EXPECT_EQ(st.attention.computed, std::vector<bool>{false});
}

// Whether a value of the kernel orders two numbers (<, <=, >, >=): the
// comparison of a mask (the online softmax's own test of its maximum is an
// equality).
bool compares(const tile::Kernel& k) {
  bool found = false;
  std::function<void(const tile::Value&)> value = [&](const tile::Value& x) {
    if (!x.defined() || x.kind() != tile::ValueKind::Apply) return;
    const ir::Op o = x.op().op;
    found = found || o == ir::Op::Lt || o == ir::Op::Le || o == ir::Op::Gt || o == ir::Op::Ge;
    for (const tile::Value& a : x.args()) value(a);
  };
  tile::visit(k.body, [&](const tile::Stmt& s) {
    value(s.node().value);
    value(s.node().alpha);
  });
  return found;
}

TEST(attention_mask, WhollyMaskedKeyBlocksAreLeftOut) {
  for (const MaskCase& c : kCases) {
    ir::Graph g = test::parse(kHead + c.mask + kTail);
    const loop::Partition p = loop::partition_graph(g);
    const loop::Stage& st = attention_stage(p);
    int64_t skipped = 0;
    for (int64_t bq : {32, 64, 128})
      for (int64_t bk : {64, 128}) {
        tile::AttentionSchedule s;
        s.bq = bq, s.bk = bk, s.mr = 4, s.nr = 16, s.transpose_k = false;
        tile::Kernel k = codegen::attention_kernel(g, st.attention, s, "f");
        const std::string what = std::string(c.name) + " bq " + std::to_string(bq) + " bk " + std::to_string(bk);
        if (!c.skips) {
          std::optional<tile::Index> e = loop_extent(k, "kb");
          ASSERT_TRUE(e && e->is_const()) << what;
          EXPECT_EQ(e->value(), 256 / bk) << what;
          EXPECT_FALSE(loop_extent(k, "km").has_value()) << what;
          EXPECT_TRUE(compares(k)) << what;
          continue;
        }
        // Exactly the blocks that hold an unmasked score (for some block
        // sizes, all of them); of those, the leading ones the mask hides
        // nothing in are a loop of their own (kb, then km for the rest),
        // whose score has no comparison.
        std::optional<tile::Index> kb = loop_extent(k, "kb"), km = loop_extent(k, "km");
        for (int64_t qb = 0; qb < 128 / bq; ++qb) {
          const int64_t unmasked = blocks_unmasked(c, qb, bq, bk);
          if (unmasked > 0) EXPECT_TRUE(km.has_value()) << what << " qb " << qb;
          if (km && kb) EXPECT_EQ(kb->eval({{"qb", qb}}), unmasked) << what << " qb " << qb;
          const int64_t e = key_blocks_at(k, qb, unmasked);
          EXPECT_EQ(e, blocks_needed(c, qb, bq, bk)) << what << " qb " << qb;
          skipped += 256 / bk - e;
        }
        // The blocks the mask cuts compare nothing either: each row's kept
        // keys are a range of their own (tile::keys_unmasked).
        EXPECT_FALSE(compares(k)) << what;
      }
    EXPECT_EQ(skipped > 0, c.skips) << c.name;
  }
}

TEST(attention_mask, MaskedKernelsAreCorrectOnEveryTarget) {
  std::mt19937 rng(7);
  for (const MaskCase& c : kCases) {
    ir::Graph g = test::parse(kHead + c.mask + kTail);
    for (const auto& t : test::targets()) {
      schedule::Space sp = schedule::schedule_space(g, t);
      // The default schedule for the first cases, a random one for each.
      for (int rep = &c - kCases < 2 ? 0 : 1; rep < 2; ++rep) {
        schedule::Schedule s = schedule::default_schedule(sp);
        if (rep > 0)
          for (int tries = 0; tries < 1000; ++tries) {
            schedule::Schedule r;
            for (const auto& k : sp.knobs) r[k.name] = k.values[rng() % k.values.size()];
            if (schedule::why_illegal(g, r, t).empty()) {
              s = r;
              break;
            }
          }
        test::expect_correct(g, s, t, std::string(c.name) + " " + schedule::to_json(s).dump(), 11 + rep);
      }
    }
  }
}

// Recognition on its own: the forms a mask takes and the block count.
TEST(attention_mask, BlockCountOfACausalMask) {
  // masked where j - i - 1 >= 0 (np.triu(k=1)): query block qb of bq rows
  // needs the key blocks up to its last row.
  const tile::AffineMask causal{-1, 1, -1};
  for (int64_t bq : {16, 64, 128})
    for (int64_t bk : {16, 64, 256}) {
      std::optional<tile::Index> n = tile::key_blocks_needed(causal, tile::Index::var("qb"), bq, bk, 1024 / bk);
      ASSERT_TRUE(n.has_value());
      for (int64_t qb = 0; qb < 1024 / bq; ++qb) {
        const int64_t last_row = qb * bq + bq - 1;
        EXPECT_EQ(n->eval({{"qb", qb}}), last_row / bk + 1) << bq << " " << bk << " " << qb;
      }
    }
  // The leading blocks with no masked score: those before the first row's
  // first masked key (row qb bq masks keys from qb bq + 1 on).
  for (int64_t bq : {16, 64, 128})
    for (int64_t bk : {16, 64, 256}) {
      std::optional<tile::Index> u = tile::key_blocks_unmasked(causal, tile::Index::var("qb"), bq, bk, 1024 / bk);
      ASSERT_TRUE(u.has_value());
      for (int64_t qb = 0; qb < 1024 / bq; ++qb)
        EXPECT_EQ(u->eval({{"qb", qb}}), (qb * bq + 1) / bk) << bq << " " << bk << " " << qb;
    }
  // Within a block, the keys of a row before its first masked one.
  for (const tile::AffineMask m : {causal, tile::AffineMask{-1, 1, -70}, tile::AffineMask{-1, 2, -101}})
    for (int64_t bk : {16, 64}) {
      std::optional<tile::Index> n = tile::keys_unmasked(m, tile::Index::var("i"), tile::Index::var("k0"), bk);
      ASSERT_TRUE(n.has_value());
      for (int64_t i = 0; i < 256; i += 3)
        for (int64_t k0 = 0; k0 < 512; k0 += bk) {
          int64_t kept = 0;
          while (kept < bk && m.a_i * i + m.a_j * (k0 + kept) + m.c < 0) ++kept;
          EXPECT_EQ(n->eval({{"i", i}, {"k0", k0}}), kept) << m.a_j << " " << m.c << " bk " << bk << " i " << i << " k0 " << k0;
        }
    }
  // A mask that hides keys before the row (c > a_j - 1) would need a
  // division of a negative value: not taken.
  EXPECT_FALSE(tile::keys_unmasked({-1, 1, 5}, tile::Index::var("i"), tile::Index(0), 64).has_value());
  // A mask that shrinks as the key grows is not a suffix of blocks.
  EXPECT_FALSE(tile::key_blocks_needed({1, -1, 0}, tile::Index::var("qb"), 64, 64, 16).has_value());
}

}  // namespace
}  // namespace axon
