// The lowering's evaluator, shared by the files that implement it:
//   lower.cpp            module and statements, helper inlining, the entry
//   lower_expr.cpp       expressions, operators, attributes, subscripts
//   numpy_functions.cpp  np.* functions and constants
//   builtins.cpp         Python builtins, ndarray methods and attributes, dtype calls
//   call_args.cpp        argument binding and conversion for built-in calls
// See lower.h for the contract.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/array_builder.h"
#include "frontend/ast.h"
#include "frontend/value.h"

namespace axon::frontend {

/// Variables of one function activation (or of the module).
struct Scope {
  std::map<std::string, Value> vars;
  const std::set<std::string>* locals = nullptr;  // names the function assigns anywhere (Python's rule)
  Scope* globals = nullptr;                        // null for the module scope
};

struct Arg {
  Value value;
  SourceLoc loc;       // where the value was written
  SourceLoc name_loc;  // a keyword argument: where its name was written
  const SourceLoc& keyword_loc() const { return name_loc.valid() ? name_loc : loc; }
};

struct CallArgs {
  std::vector<Arg> positional;
  std::vector<std::pair<std::string, Arg>> keywords;
};

/// Arguments of a built-in call bound to its parameter names, numpy-style.
class BoundArgs {
 public:
  /// `params` in positional order; the first `required` must be given.
  /// A parameter spelled with a leading '*' is keyword-only.
  BoundArgs(const std::string& fname, const CallArgs& args, const std::vector<std::string>& params, size_t required,
            const SourceLoc& at);
  bool has(const std::string& name) const;
  /// The argument, or None when absent.
  const Value& get(const std::string& name) const;
  /// Where the argument was written (the call when absent).
  const SourceLoc& loc(const std::string& name) const;
  /// Refuses a parameter axon only supports at its default (out=, where=, ...).
  void require_none(const std::string& name, const ir::Graph& g) const;

 private:
  std::string fname_;
  SourceLoc at_;
  std::map<std::string, Arg> bound_;
  Value none_;
};

class Lowerer {
 public:
  Lowerer(const Module& module, const std::map<std::string, int64_t>& dims);
  ir::Graph run(const std::string& entry);

  // ---- lower.cpp
  /// Runs statements until a return; true when one ran (its value in *ret).
  bool exec_block(const std::vector<StmtPtr>& body, Scope& scope, Value* ret, SourceLoc* ret_loc);
  void exec(const Stmt& s, Scope& scope, bool* returned, Value* ret, SourceLoc* ret_loc);
  void assign(const Expr& target, const Value& v, Scope& scope);
  Value call_function(const FuncDef& f, const CallArgs& args, const SourceLoc& at, SourceLoc* ret_loc = nullptr);

  // ---- lower_expr.cpp
  Value eval(const Expr& e, Scope& scope);
  Value binary_op(const std::string& op, const Value& a, const Value& b, const SourceLoc& at);
  Value compare_op(const std::string& op, const Value& a, const Value& b, const SourceLoc& at);
  Value get_attribute(const Value& obj, const std::string& name, const SourceLoc& at);

  // ---- numpy_functions.cpp
  Value numpy_attr(const std::string& name, const SourceLoc& at);
  Value call_numpy(const std::string& name, const CallArgs& args, const SourceLoc& at);
  /// np.sum / x.sum and the other reductions; `self` null for the np.* form.
  Value reduction(NpReduce kind, const std::string& fname, const Value* self, const CallArgs& args,
                  const SourceLoc& at);
  /// np.clip / x.clip: bounds may be None.
  Value clip(const Value& a, const Value& lo, const Value& hi, const SourceLoc& at, const std::string& fname);
  /// np.finfo(dtype).<name>: eps, max, min, tiny, smallest_normal, resolution.
  Value finfo_attr(DType d, const std::string& name, const SourceLoc& at);

  // ---- builtins.cpp
  Value call(const Value& callee, const CallArgs& args, const SourceLoc& at);
  Value builtin_value(const std::string& name) const;  // None kind when not a builtin
  Value call_builtin(const std::string& name, const CallArgs& args, const SourceLoc& at);
  Value tensor_attr(const Value& t, const std::string& name, const SourceLoc& at);
  Value call_method(const std::string& name, const Value& self, const CallArgs& args, const SourceLoc& at);
  Value call_dtype(const Value& dtype, const CallArgs& args, const SourceLoc& at);

  // ---- call_args.cpp: conversions with errors at the argument
  int64_t as_int(const Value& v, const SourceLoc& at, const std::string& what);
  std::vector<int64_t> as_int_list(const Value& v, const SourceLoc& at, const std::string& what);
  std::optional<DType> as_dtype(const Value& v, const SourceLoc& at);
  /// np.asarray: arrays pass, Python scalars become 0-d arrays of their default
  /// dtype, (nested) lists and tuples are stacked.
  NodeId as_array(const Value& v, const SourceLoc& at, std::optional<DType> dtype = std::nullopt);
  /// A tensor or Python scalar operand for elementwise numpy functions (lists become arrays).
  Value as_operand(const Value& v, const SourceLoc& at, const std::string& fname);
  std::vector<NodeId> as_array_list(const Value& v, const SourceLoc& at, const std::string& fname);
  bool as_bool(const Value& v, const SourceLoc& at, const std::string& what);

  const Module& module_;
  const std::map<std::string, int64_t>& dims_;
  ir::Graph graph_;
  ArrayBuilder ab_;
  Scope globals_;
  std::vector<const FuncDef*> stack_;
  std::vector<std::string> call_chain_;  // helper calls an error is unwinding through
  std::map<const FuncDef*, std::set<std::string>> locals_cache_;
};

}  // namespace axon::frontend
