// ArrayBuilder: contractions. `@`/np.matmul, np.dot and np.einsum all become
// the IR's two-operand einsum; n-operand einsums chain left to right, keeping
// only the labels that later operands or the output still need.
#include <algorithm>
#include <map>
#include <set>

#include "frontend/array_builder.h"

namespace axon::frontend {

using ir::Op;

namespace {
// Labels for batch and ellipsis axes; 'k', 'm' and 'n' are reserved for matmul's core axes.
const std::string kBatchLabels = "abcdefghijlopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
}  // namespace

NodeId ArrayBuilder::contract(const std::string& a_labels, NodeId a, const std::string& b_labels, NodeId b,
                              const std::string& out_labels, const SourceLoc& at) {
  DType dt = promote_types(type(a).dtype, type(b).dtype);
  if (dt == DType::Bool) fail_unsupported_at(at, "contractions of bool arrays are not supported");
  a = cast(a, dt, at);
  b = cast(b, dt, at);
  return note(ir::einsum(g_, a_labels + "," + b_labels + "->" + out_labels, a, b), at);
}

NodeId ArrayBuilder::matmul(NodeId a, NodeId b, const SourceLoc& at) {
  const Shape sa = type(a).shape, sb = type(b).shape;
  for (int k = 0; k < 2; ++k) {
    if ((k == 0 ? sa : sb).empty())
      fail_at(at, "matmul: operand " + std::to_string(k) + " is 0-d (" + type_of(k == 0 ? a : b) +
                      "); use * to multiply by a scalar");
  }
  int ra = static_cast<int>(sa.size()), rb = static_cast<int>(sb.size());
  int64_t ka = sa[ra - 1], kb = rb == 1 ? sb[0] : sb[rb - 2];
  if (ka != kb)
    fail_at(at, "matmul: contraction dims " + std::to_string(ka) + " and " + std::to_string(kb) + " do not match (" +
                    type_of(a) + " @ " + type_of(b) + ")");
  int na = std::max(ra - 2, 0), nb = std::max(rb - 2, 0), nbatch = std::max(na, nb);
  // Batch axes broadcast right-aligned; an operand's unit axis facing a larger
  // one is reshaped away so that its label lives only on the other operand.
  std::string la, lb, lout;
  Shape keep_a, keep_b;
  for (int j = 0; j < nbatch; ++j) {
    int ia = j - (nbatch - na), ib = j - (nbatch - nb);
    int64_t da = ia >= 0 ? sa[ia] : -1, db = ib >= 0 ? sb[ib] : -1;
    char label = kBatchLabels[j];
    if (da >= 0 && db >= 0 && da != db && da != 1 && db != 1)
      fail_at(at, "matmul: batch dims of " + type_of(a) + " and " + type_of(b) + " do not broadcast");
    bool use_a = da >= 0 && (da != 1 || db == 1 || db < 0);
    bool use_b = db >= 0 && (db != 1 || da == 1 || da < 0);
    if (use_a) la += label, keep_a.push_back(da);
    if (use_b) lb += label, keep_b.push_back(db);
    lout += label;
  }
  if (ra >= 2) {
    la += "mk";
    keep_a.push_back(sa[ra - 2]);
    keep_a.push_back(ka);
    lout += 'm';
  } else {
    la += "k";
    keep_a.push_back(ka);
  }
  if (rb >= 2) {
    lb += "kn";
    keep_b.push_back(kb);
    keep_b.push_back(sb[rb - 1]);
    lout += 'n';
  } else {
    lb += "k";
    keep_b.push_back(kb);
  }
  a = note(ir::reshape(g_, a, keep_a), at);
  b = note(ir::reshape(g_, b, keep_b), at);
  return contract(la, a, lb, b, lout, at);
}

NodeId ArrayBuilder::dot(NodeId a, NodeId b, const SourceLoc& at) {
  const Shape sa = type(a).shape, sb = type(b).shape;
  if (sa.empty() || sb.empty())
    return arithmetic(NpBinary::Mul, Value::tensor(a), Value::tensor(b), at, "np.dot").node;
  int ra = static_cast<int>(sa.size()), rb = static_cast<int>(sb.size());
  int cb = rb == 1 ? 0 : rb - 2;
  if (sa[ra - 1] != sb[cb])
    fail_at(at, "shapes " + numpy_shape(sa) + " and " + numpy_shape(sb) + " not aligned: " +
                    std::to_string(sa[ra - 1]) + " (dim " + std::to_string(ra - 1) + ") != " +
                    std::to_string(sb[cb]) + " (dim " + std::to_string(cb) + ")");
  if (ra <= 2 && rb <= 2) return matmul(a, b, at);
  std::string la, lb, lout;
  int next = 0;
  for (int i = 0; i < ra - 1; ++i) la += kBatchLabels[next++];
  la += 'k';
  for (int i = 0; i < rb; ++i) lb += i == cb ? 'k' : kBatchLabels[next++];
  lout = la.substr(0, ra - 1);
  for (int i = 0; i < rb; ++i)
    if (i != cb) lout += lb[i];
  return contract(la, a, lb, b, lout, at);
}

NodeId ArrayBuilder::einsum(const std::string& subscripts_in, const std::vector<NodeId>& operands_in,
                            const SourceLoc& at) {
  std::string subs;
  for (char c : subscripts_in)
    if (c != ' ') subs += c;
  std::string inputs = subs, output;
  size_t arrow = subs.find("->");
  bool explicit_out = arrow != std::string::npos;
  if (explicit_out) {
    inputs = subs.substr(0, arrow);
    output = subs.substr(arrow + 2);
  }
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = inputs.find(',', start);
    terms.push_back(inputs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands_in.size())
    fail_at(at, "einsum: the subscripts '" + subscripts_in + "' name " + std::to_string(terms.size()) +
                    " operand(s) but " + std::to_string(operands_in.size()) + " were given");
  std::set<char> used;
  auto check_term = [&](const std::string& t, const std::string& what) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.compare(i, 3, "...") == 0) {
        i += 2;
        continue;
      }
      if (!std::isalpha(static_cast<unsigned char>(t[i])))
        fail_at(at, "einsum: invalid character '" + std::string(1, t[i]) + "' in " + what + " subscripts '" + t + "'");
      used.insert(t[i]);
    }
    if (std::count(t.begin(), t.end(), '.') > 3 || (t.find('.') != std::string::npos && t.find("...") == std::string::npos))
      fail_at(at, "einsum: " + what + " subscripts '" + t + "' may hold one '...' at most");
  };
  for (size_t k = 0; k < terms.size(); ++k) check_term(terms[k], "operand " + std::to_string(k));
  std::set<char> input_labels = used;
  check_term(output, "output");

  // Ellipses become fresh labels, right-aligned across operands.
  std::string fresh;
  for (char c : kBatchLabels)
    if (!used.count(c) && c != 'k' && c != 'm' && c != 'n') fresh += c;
  std::vector<std::string> labels(terms.size());
  std::vector<NodeId> ops = operands_in;
  size_t ell_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    const std::string& t = terms[k];
    int rank = type(ops[k]).rank();
    size_t e = t.find("...");
    int named = static_cast<int>(t.size()) - (e == std::string::npos ? 0 : 3);
    if (named > rank || (e == std::string::npos && named != rank))
      fail_at(at, "einsum: operand " + std::to_string(k) + " is " + type_of(ops[k]) + " but its subscripts '" + t +
                      "' name " + std::to_string(named) + " dimension(s)");
    if (e != std::string::npos) ell_rank = std::max(ell_rank, static_cast<size_t>(rank - named));
  }
  if (ell_rank > fresh.size()) fail_unsupported_at(at, "einsum: too many dimensions under '...'");
  std::string ell_labels = fresh.substr(0, ell_rank);
  for (size_t k = 0; k < terms.size(); ++k) {
    const std::string& t = terms[k];
    size_t e = t.find("...");
    if (e == std::string::npos) {
      labels[k] = t;
      continue;
    }
    size_t covered = type(ops[k]).rank() - (t.size() - 3);
    labels[k] = t.substr(0, e) + ell_labels.substr(ell_rank - covered) + t.substr(e + 3);
  }
  std::string out;
  if (explicit_out) {
    size_t e = output.find("...");
    if (e == std::string::npos && ell_rank > 0)
      fail_unsupported_at(at, "einsum: the output subscripts '" + output + "' drop the dimensions under '...'");
    out = e == std::string::npos ? output : output.substr(0, e) + ell_labels + output.substr(e + 3);
    std::set<char> seen;
    for (char c : output) {
      if (c == '.') continue;
      if (!input_labels.count(c))
        fail_at(at, "einsum: output subscript '" + std::string(1, c) + "' does not appear in the operands");
      if (!seen.insert(c).second) fail_at(at, "einsum: output subscript '" + std::string(1, c) + "' appears twice");
    }
  } else {
    std::map<char, int> counts;
    for (const std::string& l : labels)
      for (char c : l) counts[c]++;
    out = ell_labels;
    for (auto [c, n] : counts)
      if (n == 1 && ell_labels.find(c) == std::string::npos) out += c;
  }

  // One extent per label; unit axes facing a larger extent are reshaped away.
  std::map<char, int64_t> extent;
  for (size_t k = 0; k < ops.size(); ++k)
    for (size_t i = 0; i < labels[k].size(); ++i) {
      int64_t d = type(ops[k]).shape[i];
      auto [it, fresh_label] = extent.emplace(labels[k][i], d);
      if (!fresh_label && it->second != d && it->second != 1 && d != 1)
        fail_at(at, "einsum: subscript '" + std::string(1, labels[k][i]) + "' has size " + std::to_string(it->second) +
                        " in one operand and " + std::to_string(d) + " in operand " + std::to_string(k));
      if (d > it->second) it->second = d;
    }
  for (size_t k = 0; k < ops.size(); ++k) {
    std::string kept;
    Shape shape;
    for (size_t i = 0; i < labels[k].size(); ++i) {
      int64_t d = type(ops[k]).shape[i];
      if (d == 1 && extent[labels[k][i]] != 1) continue;
      kept += labels[k][i];
      shape.push_back(d);
    }
    if (kept != labels[k]) {
      ops[k] = note(ir::reshape(g_, ops[k], shape), at);
      labels[k] = kept;
    }
  }
  for (char c : out) {
    bool present = false;
    for (const std::string& l : labels) present |= l.find(c) != std::string::npos;
    if (!present) fail_unsupported_at(at, "einsum: output label '" + std::string(1, c) + "' only has unit extent");
  }

  if (ops.size() == 1) {
    const std::string& l = labels[0];
    std::set<char> distinct(l.begin(), l.end());
    if (distinct.size() != l.size()) {
      // A diagonal needs the contraction itself: pair the operand with a 0-d one.
      return contract(l, ops[0], "", scalar(1, type(ops[0]).dtype, at), out, at);
    }
    std::vector<int64_t> axes;
    std::string rest;
    for (size_t i = 0; i < l.size(); ++i) {
      if (out.find(l[i]) == std::string::npos) axes.push_back(static_cast<int64_t>(i));
      else rest += l[i];
    }
    NodeId r = ops[0];
    if (type(r).dtype == DType::Bool) fail_unsupported_at(at, "contractions of bool arrays are not supported");
    if (!axes.empty()) r = note(ir::reduce(g_, Op::ReduceSum, r, axes), at);
    std::vector<int64_t> perm;
    for (char c : out) perm.push_back(static_cast<int64_t>(rest.find(c)));
    return note(ir::transpose(g_, r, perm), at);
  }
  NodeId cur = ops[0];
  std::string cur_labels = labels[0];
  for (size_t k = 1; k < ops.size(); ++k) {
    std::string needed = out;
    for (size_t j = k + 1; j < ops.size(); ++j) needed += labels[j];
    std::string inter;
    if (k + 1 == ops.size()) {
      inter = out;
    } else {
      for (char c : cur_labels + labels[k])
        if (needed.find(c) != std::string::npos && inter.find(c) == std::string::npos) inter += c;
    }
    cur = contract(cur_labels, cur, labels[k], ops[k], inter, at);
    cur_labels = inter;
  }
  return cur;
}

}  // namespace axon::frontend
