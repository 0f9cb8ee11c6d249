#include "loop/describe.h"

#include <sstream>

#include "ir/op.h"
#include "loop/epilogue_group.h"

namespace axon::loop {

namespace {

std::string nodes_text(const ir::Graph& g, const std::vector<ir::NodeId>& nodes) {
  std::ostringstream o;
  const size_t shown = 6;
  for (size_t i = 0; i < nodes.size() && i < shown; ++i)
    o << (i ? " " : "") << "%" << nodes[i] << "(" << ir::op_name(g[nodes[i]].op) << ")";
  if (nodes.size() > shown) o << " and " << nodes.size() - shown << " more";
  return o.str();
}

}  // namespace

std::vector<StageDescription> describe_stages(const ir::Graph& g, const Partition& p) {
  std::vector<StageDescription> out;
  for (size_t k = 0; k < p.stages.size(); ++k) {
    const Stage& st = p.stages[k];
    StageDescription d;
    d.kind = st.kind == StageKind::Naive ? "loops" : stage_kind_name(st.kind);
    std::ostringstream what;
    switch (st.kind) {
      case StageKind::Contraction: {
        const Contraction& c = st.contraction;
        what << "a matrix product, batch " << c.batch << ", M " << c.M << ", N " << c.N << ", K " << c.K;
        if (const std::string why = epilogue_refusal(g, p, k); !why.empty())
          d.why.push_back("no epilogue: " + why);
        break;
      }
      case StageKind::Epilogue:
        if (st.epilogue.paired)
          what << "two matrix products over one A, computed together, with the elementwise work on both results "
                  "applied to each pair of tiles";
        else
          what << "a matrix product with the elementwise work on its result applied to each tile";
        break;
      case StageKind::Attention:
        what << "scores, softmax and the product with V in one pass over key blocks, without storing the scores";
        break;
      case StageKind::Copy:
        what << "a layout copy of a transpose, " << ir::shape_str(g[st.results.at(0)].type.shape);
        break;
      case StageKind::Row:
        what << "a row kernel over " << st.row.rows << " rows of " << st.row.cols << " elements";
        break;
      case StageKind::Naive:
        what << "loops (the general lowering: parallel and vectorised where the loops allow)";
        if (!st.row.why.empty()) d.why.push_back("no row kernel: " + st.row.why);
        for (ir::NodeId i : st.nodes) {
          if (g[i].op != ir::Op::Einsum) continue;
          Contraction c;
          std::string why;
          if (!plan_contraction(g, i, &c, &why))
            d.why.push_back("%" + std::to_string(i) + " (einsum \"" + g[i].attrs.text + "\") is no contraction stage: " + why);
          else if (is_matrix_vector(c))
            d.why.push_back("%" + std::to_string(i) + " (einsum \"" + g[i].attrs.text +
                            "\") is a matrix-vector product: memory-bound, lowered as loops");
        }
        break;
    }
    if (st.a_rows.active() || st.b_rows.active())
      what << "; " << (st.a_rows.active() && st.b_rows.active() ? "A and B" : st.a_rows.active() ? "A" : "B")
           << " computed by the kernel from its inputs (a prologue)";
    what << "; computes " << nodes_text(g, st.nodes);
    d.what = what.str();
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace axon::loop
