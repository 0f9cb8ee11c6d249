// The lowering's statements: module execution, assignment, helper inlining
// and the entry function.
#include "frontend/lower.h"

#include "frontend/annotation.h"
#include "frontend/lowerer.h"
#include "frontend/scalar_fold.h"

namespace axon::frontend {

namespace {

void collect_target_names(const Expr& t, std::set<std::string>& out) {
  if (t.kind == ExprKind::Name) out.insert(t.text);
  if (t.kind == ExprKind::Tuple || t.kind == ExprKind::List || t.kind == ExprKind::Starred)
    for (const auto& item : t.items) collect_target_names(*item, out);
}

// Python decides at compile time which names are local to a function.
std::set<std::string> assigned_names(const FuncDef& f) {
  std::set<std::string> out;
  for (const Param& p : f.params) out.insert(p.name);
  for (const auto& s : f.body) {
    for (const auto& t : s->targets) collect_target_names(*t, out);
    if (s->kind == StmtKind::FunctionDef) out.insert(s->func->name);
    if (s->kind == StmtKind::Import)
      for (const ImportName& n : s->names) out.insert(n.asname.empty() ? n.name.substr(0, n.name.find('.')) : n.asname);
    if (s->kind == StmtKind::ImportFrom)
      for (const ImportName& n : s->names) out.insert(n.asname.empty() ? n.name : n.asname);
  }
  return out;
}

bool is_main_guard(const Expr* test) {
  if (!test || test->kind != ExprKind::Compare || test->ops.size() != 1 || test->ops[0].op != "==") return false;
  const Expr& l = *test->items[0];
  const Expr& r = *test->items[1];
  auto is_name = [](const Expr& e) { return e.kind == ExprKind::Name && e.text == "__name__"; };
  auto is_main = [](const Expr& e) { return e.kind == ExprKind::Str && e.text == "__main__"; };
  return (is_name(l) && is_main(r)) || (is_main(l) && is_name(r));
}

std::string unsupported_statement_message(const std::string& kw) {
  if (kw == "if") return "if statements are not supported; use np.where for element-wise choices";
  if (kw == "for" || kw == "while") return kw + " loops are not supported; write the computation with array operations";
  if (kw == "class") return "class definitions are not supported";
  if (kw == "decorator") return "decorators are not supported";
  return "'" + kw + "' statements are not supported";
}

}  // namespace

Lowerer::Lowerer(const Module& module, const std::map<std::string, int64_t>& dims)
    : module_(module), dims_(dims), ab_(graph_) {}

bool Lowerer::exec_block(const std::vector<StmtPtr>& body, Scope& scope, Value* ret, SourceLoc* ret_loc) {
  for (const auto& s : body) {
    bool returned = false;
    exec(*s, scope, &returned, ret, ret_loc);
    if (returned) return true;
  }
  return false;
}

void Lowerer::exec(const Stmt& s, Scope& scope, bool* returned, Value* ret, SourceLoc* ret_loc) {
  bool module_level = scope.globals == nullptr;
  switch (s.kind) {
    case StmtKind::ExprStmt:
      if (s.value->kind == ExprKind::Str || s.value->kind == ExprKind::EllipsisLit) return;  // docstring, `...`
      eval(*s.value, scope);
      return;
    case StmtKind::Assign: {
      Value v = eval(*s.value, scope);
      for (const auto& t : s.targets) assign(*t, v, scope);
      return;
    }
    case StmtKind::AnnAssign:
      if (s.value) assign(*s.targets[0], eval(*s.value, scope), scope);
      return;
    case StmtKind::AugAssign: {
      const Expr& t = *s.targets[0];
      if (t.kind != ExprKind::Name)
        fail_unsupported_at(s.loc, "augmented assignment to an element or attribute updates an array in place; "
                                   "build a new array instead");
      Value cur = eval(t, scope);
      if (cur.is_tensor())
        fail_unsupported_at(s.loc, "augmented assignment (" + s.text + "=) to an array updates it in place; write " +
                                       t.text + " = " + t.text + " " + s.text + " ... instead");
      Value rhs = eval(*s.value, scope);
      assign(t, binary_op(s.text, cur, rhs, s.loc), scope);
      return;
    }
    case StmtKind::Return:
      *ret = s.value ? eval(*s.value, scope) : Value::none();
      if (ret_loc) *ret_loc = s.value ? s.value->loc : s.loc;
      *returned = true;
      return;
    case StmtKind::Pass:
      return;
    case StmtKind::FunctionDef:
      if (!module_level)
        fail_unsupported_at(s.func->loc, "nested function definitions are not supported; define '" + s.func->name +
                                             "' at the top level");
      {
        Value f;
        f.kind = ValueKind::Function;
        f.func = s.func.get();
        scope.vars[s.func->name] = f;
      }
      return;
    case StmtKind::Import:
      for (const ImportName& n : s.names) {
        if (n.name != "numpy")
          fail_unsupported_at(n.loc, "import of module '" + n.name + "' is not supported; specs may import numpy only");
        Value m;
        m.kind = ValueKind::Module;
        m.s = "numpy";
        scope.vars[n.asname.empty() ? n.name : n.asname] = m;
      }
      return;
    case StmtKind::ImportFrom:
      if (s.module == "__future__") return;
      if (s.module != "numpy")
        fail_unsupported_at(s.loc, "import from module '" + s.module + "' is not supported; specs may import numpy only");
      for (const ImportName& n : s.names) {
        if (n.name == "*") fail_unsupported_at(n.loc, "'from numpy import *' is not supported; import names explicitly");
        scope.vars[n.asname.empty() ? n.name : n.asname] = numpy_attr(n.name, n.loc);
      }
      return;
    case StmtKind::Assert: {
      Value test = eval(*s.value, scope);
      if (test.is_tensor())
        fail_unsupported_at(s.value->loc, "assert on array values cannot be checked while lowering");
      if (!truthy(test)) {
        std::string msg = "assertion failed";
        if (s.annotation) {
          Value m = eval(*s.annotation, scope);
          msg += ": " + (m.kind == ValueKind::Str ? m.s : repr(m, graph_));
        }
        fail_at(s.value->loc, msg);
      }
      return;
    }
    case StmtKind::Unsupported:
      if (module_level && s.text == "if" && is_main_guard(s.value.get())) return;  // not run on import
      fail_unsupported_at(s.loc, unsupported_statement_message(s.text));
  }
}

void Lowerer::assign(const Expr& target, const Value& v, Scope& scope) {
  switch (target.kind) {
    case ExprKind::Name:
      scope.vars[target.text] = v;
      return;
    case ExprKind::Tuple:
    case ExprKind::List: {
      std::vector<Value> items;
      if (v.is_sequence()) {
        items = v.items;
      } else if (v.is_tensor()) {
        // Unpacking an array iterates over its first axis.
        const ir::Type t = graph_[v.node].type;
        if (t.rank() == 0) fail_at(target.loc, "cannot unpack a 0-d array");
        for (int64_t k = 0; k < t.shape[0]; ++k)
          items.push_back(Value::tensor(ab_.index(v.node, Value::integer(k), target.loc, {})));
      } else {
        fail_at(target.loc, "cannot unpack non-iterable " + describe(v, graph_));
      }
      size_t star = target.items.size();
      for (size_t k = 0; k < target.items.size(); ++k)
        if (target.items[k]->kind == ExprKind::Starred) star = k;
      size_t n = target.items.size();
      if (star == n) {
        if (items.size() != n)
          fail_at(target.loc, items.size() > n ? "too many values to unpack (expected " + std::to_string(n) + ", got " +
                                                     std::to_string(items.size()) + ")"
                                               : "not enough values to unpack (expected " + std::to_string(n) +
                                                     ", got " + std::to_string(items.size()) + ")");
        for (size_t k = 0; k < n; ++k) assign(*target.items[k], items[k], scope);
        return;
      }
      if (items.size() < n - 1)
        fail_at(target.loc, "not enough values to unpack (expected at least " + std::to_string(n - 1) + ", got " +
                                std::to_string(items.size()) + ")");
      size_t tail = n - 1 - star;
      for (size_t k = 0; k < star; ++k) assign(*target.items[k], items[k], scope);
      std::vector<Value> rest(items.begin() + star, items.end() - tail);
      assign(*target.items[star]->items[0], Value::tuple(rest, ValueKind::List), scope);
      for (size_t k = 0; k < tail; ++k) assign(*target.items[star + 1 + k], items[items.size() - tail + k], scope);
      return;
    }
    case ExprKind::Starred:
      fail_at(target.loc, "starred assignment target must be in a list or tuple");
    case ExprKind::Subscript:
      fail_unsupported_at(target.op_loc, "assigning to an element or slice updates an array in place; build the "
                                         "result with np.where or np.concatenate instead");
    case ExprKind::Attribute:
      fail_unsupported_at(target.op_loc, "assigning to an attribute is not supported");
    default:
      fail_at(target.loc, "cannot assign to this expression");
  }
}

Value Lowerer::call_function(const FuncDef& f, const CallArgs& args, const SourceLoc& at, SourceLoc* ret_loc) {
  for (const FuncDef* active : stack_)
    if (active == &f)
      fail_unsupported_at(at, "recursive call to '" + f.name + "': helper functions are inlined, so recursion is not "
                                                               "supported");
  auto cached = locals_cache_.find(&f);
  if (cached == locals_cache_.end()) cached = locals_cache_.emplace(&f, assigned_names(f)).first;
  Scope scope;
  scope.globals = &globals_;
  scope.locals = &cached->second;

  // Python's binding: positionals fill the non-keyword-only parameters in order.
  size_t positional_params = 0;
  for (const Param& p : f.params)
    if (!p.keyword_only) ++positional_params;
  if (args.positional.size() > positional_params) {
    std::string n = std::to_string(positional_params);
    fail_at(at, f.name + "() takes " + n + " positional argument" + (positional_params == 1 ? "" : "s") + " but " +
                    std::to_string(args.positional.size()) + (args.positional.size() == 1 ? " was" : " were") +
                    " given");
  }
  std::map<std::string, Value> bound;
  for (size_t k = 0; k < args.positional.size(); ++k) bound[f.params[k].name] = args.positional[k].value;
  for (const auto& [name, arg] : args.keywords) {
    bool known = false;
    for (const Param& p : f.params) known |= p.name == name;
    if (!known) fail_at(arg.keyword_loc(), f.name + "() got an unexpected keyword argument '" + name + "'");
    if (bound.count(name)) fail_at(arg.keyword_loc(), f.name + "() got multiple values for argument '" + name + "'");
    bound[name] = arg.value;
  }
  std::vector<std::string> missing;
  bool missing_keyword_only = false;
  for (const Param& p : f.params) {
    if (bound.count(p.name)) continue;
    if (p.default_value) {
      bound[p.name] = eval(*p.default_value, globals_);
    } else {
      missing.push_back("'" + p.name + "'");
      missing_keyword_only = p.keyword_only;
    }
  }
  if (!missing.empty()) {
    std::string names;
    for (size_t k = 0; k < missing.size(); ++k)
      names += (k == 0 ? "" : k + 1 == missing.size() ? (missing.size() > 2 ? ", and " : " and ") : ", ") + missing[k];
    fail_at(at, f.name + "() missing " + std::to_string(missing.size()) + " required " +
                    (missing_keyword_only ? "keyword-only" : "positional") + " argument" +
                    (missing.size() == 1 ? "" : "s") + ": " + names);
  }
  scope.vars = std::move(bound);

  stack_.push_back(&f);
  Value ret;
  SourceLoc where = f.loc;
  try {
    exec_block(f.body, scope, &ret, &where);
  } catch (const Diagnostic& d) {
    // An error inside a helper names the chain of calls that led to it.
    stack_.pop_back();
    if (stack_.empty()) throw;
    call_chain_.push_back(f.name + ", called at " + std::to_string(at.line) + ":" + std::to_string(at.col));
    if (stack_.size() > 1) throw;
    std::string chain;
    for (size_t k = 0; k < call_chain_.size(); ++k) chain += (k ? "; " : "") + call_chain_[k];
    call_chain_.clear();
    throw Diagnostic(d.loc(), d.message() + " (in " + chain + ")", d.unsupported());
  }
  stack_.pop_back();
  if (ret_loc) *ret_loc = where;
  return ret;
}

ir::Graph Lowerer::run(const std::string& entry) {
  Value unused;
  SourceLoc unused_loc;
  exec_block(module_.body, globals_, &unused, &unused_loc);

  const FuncDef* f = nullptr;
  const FuncDef* fallback = nullptr;
  std::vector<std::string> names;
  for (const auto& s : module_.body) {
    if (s->kind != StmtKind::FunctionDef) continue;
    const FuncDef& def = *s->func;
    names.push_back(def.name);
    if (!entry.empty()) {
      if (def.name == entry) f = &def;
      continue;
    }
    // An entry candidate: some string-annotated parameter, and every other parameter has a default.
    // Failing that, a function annotated otherwise (x: f32) is taken, to report its annotations.
    bool annotated = false, typed = false, complete = true, complete_any = true;
    for (const Param& p : def.params) {
      if (p.annotation && p.annotation->kind == ExprKind::Str) typed = true;
      else if (!p.default_value) complete = false;
      if (p.annotation) annotated = true;
      else if (!p.default_value) complete_any = false;
    }
    if (typed && complete) f = &def;
    if (annotated && complete_any && !fallback) fallback = &def;
  }
  if (!f) f = fallback;
  SourceLoc file_loc{module_.path, 0, 0};
  if (!f) {
    std::string list;
    for (size_t k = 0; k < names.size(); ++k) list += (k ? ", " : "") + names[k];
    if (!entry.empty())
      fail_at(file_loc, "entry function '" + entry + "' is not defined in the spec" +
                            (names.empty() ? std::string() : " (functions: " + list + ")"));
    fail_at(file_loc, "no entry function: no top-level function has all of its parameters annotated, e.g. "
                      "def f(x: \"f32[1024]\")" + (names.empty() ? std::string() : " (functions: " + list + ")"));
  }

  graph_.entry = f->name;
  CallArgs args;
  for (const Param& p : f->params) {
    bool typed = p.annotation && p.annotation->kind == ExprKind::Str;
    if (!typed && p.default_value) continue;  // bound to its default, like a helper's parameter
    if (!p.annotation)
      fail_at(p.loc, "parameter '" + p.name + "' of entry function '" + f->name +
                         "' needs a type annotation such as " + p.name + ": \"f32[1024, 1024]\"");
    if (!typed)
      fail_at(p.annotation->loc, "the annotation of parameter '" + p.name +
                                     "' must be a string such as \"f32[1024, 1024]\"");
    ir::Type t = parse_annotation(p.annotation->text, p.annotation->loc, dims_);
    graph_.params.push_back(ir::ParamInfo{p.name, t});
    NodeId id = ir::param(graph_, static_cast<int>(graph_.params.size()) - 1);
    graph_.note_loc(id, p.loc);
    if (p.keyword_only) args.keywords.push_back({p.name, Arg{Value::tensor(id), p.loc}});
    else args.positional.push_back(Arg{Value::tensor(id), p.loc});
  }
  SourceLoc ret_loc = f->loc;
  Value result = call_function(*f, args, f->loc, &ret_loc);

  std::vector<Value> outs = result.is_sequence() ? result.items : std::vector<Value>{result};
  if (result.is_sequence() && outs.empty()) fail_at(ret_loc, "the entry function returns an empty tuple");
  for (const Value& v : outs) {
    if (v.is_tensor()) {
      graph_.outputs.push_back(v.node);
    } else if (v.is_scalar()) {
      NodeId c = ab_.to_tensor(v, ab_.result_type({v}), ret_loc);
      graph_.outputs.push_back(c);
    } else {
      fail_at(ret_loc, "the entry function must return an array or a tuple of arrays, got " + describe(v, graph_));
    }
  }
  if (f->returns && f->returns->kind == ExprKind::Str && graph_.outputs.size() == 1) {
    ir::Type want = parse_annotation(f->returns->text, f->returns->loc, dims_);
    const ir::Type& got = graph_[graph_.outputs[0]].type;
    if (!(want == got))
      fail_at(f->returns->loc, "'" + f->name + "' returns " + ir::type_str(got) + " but its annotation says " +
                                   ir::type_str(want));
  }
  return std::move(graph_);
}

ir::Graph lower_module(const Module& module, const std::map<std::string, int64_t>& dims, const std::string& entry) {
  Lowerer l(module, dims);
  return l.run(entry);
}

}  // namespace axon::frontend
