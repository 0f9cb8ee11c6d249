#include "codegen/c_like/kernel_abi.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

namespace axon::codegen {

using namespace axon::ir;

namespace {

// Keywords of C and C++, and the library names kernel.cpp calls unqualified:
// a parameter spelled like one of them would either not compile or shadow it.
const std::set<std::string>& taken_names() {
  static const std::set<std::string> names = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
      "catch", "char", "char8_t", "char16_t", "char32_t", "class", "co_await", "co_return", "co_yield",
      "compl", "concept", "const", "consteval", "constexpr", "constinit", "const_cast", "continue",
      "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit",
      "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
      "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq",
      "private", "protected", "public", "register", "reinterpret_cast", "requires", "restrict", "return",
      "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
      "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      "_Bool", "_Complex", "_Imaginary", "main", "std",
      // <stdint.h>, <math.h>, <string.h> names used by generated code
      "int32_t", "int64_t", "uint16_t", "uint32_t", "size_t", "INFINITY", "NAN", "INT32_MIN",
      "INT32_MAX", "INT64_MIN", "INT64_MAX", "memcpy", "exp", "expf", "log", "logf", "sqrt", "sqrtf",
      "tanh", "tanhf", "sin", "sinf", "cos", "cosf", "floor", "floorf", "fabs", "fabsf", "pow", "powf",
      "isnan", "nextafter", "nearbyint",
      // short names of locals and helpers in generated code and its headers
      "i", "acc", "x", "r", "c", "m", "w", "cols", "lanes", "acc_s", "tile_rows", "src", "dst", "in", "out",
      "in_off", "out_off", "idx", "rem", "ib", "jb", "ie", "je", "ii", "j", "nt", "rg", "rg_n", "rg_lead", "c_",
      "c_end", "nan"};
  return names;
}

bool all_digits(const std::string& s, size_t from) {
  return from < s.size() && std::all_of(s.begin() + from, s.end(), [](char c) { return std::isdigit(c); });
}

// Names of the form the kernels use for their own buffers and loops.
bool is_generated_name(const std::string& s) {
  if (s.rfind("axon_", 0) == 0 || s.rfind("AXON_", 0) == 0) return true;
  if (s.size() >= 2 && s[0] == '_' && (s[1] == '_' || std::isupper(static_cast<unsigned char>(s[1]))))
    return true;  // reserved for the implementation
  if (s.rfind("out", 0) == 0 && all_digits(s, 3)) return true;
  // Accumulators and NaN masks: acc1, acc_s_2, acc1_3, nan_0
  // (never ending in '_', so that appending one makes a name free).
  static const std::regex accumulator(R"((acc|nan)[0-9]*(_s)?(_[0-9]+)?)");
  if (std::regex_match(s, accumulator)) return true;
  // t<N>, i<N>, r<N>: buffers and loops of the tile programs; s<N>, v<N>: scalars and vectors.
  if ((s[0] == 't' || s[0] == 'i' || s[0] == 'r' || s[0] == 's' || s[0] == 'v') && all_digits(s, 1)) return true;
  if (s[0] == 't' && s.size() > 5 && s.compare(s.size() - 4, 4, "_buf") == 0 &&
      all_digits(s.substr(0, s.size() - 4), 1))
    return true;
  return false;
}

std::string unique_identifier(const std::string& name, const std::set<std::string>& used) {
  std::string s = c_identifier(name);
  while (used.count(s)) s += "_";
  return s;
}

}  // namespace

std::string c_identifier(const std::string& name) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (s.empty()) s = "p";
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "p_" + s;
  // Names reserved by their prefix stay reserved whatever follows: a letter
  // in front frees them (appending, below, frees the others).
  if (s[0] == '_' || s.rfind("axon_", 0) == 0 || s.rfind("AXON_", 0) == 0) s = "p" + s;
  while (taken_names().count(s) || is_generated_name(s)) s += "_";
  return s;
}

std::string comment_text(const std::string& text) {
  std::string s = text;
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  while (!s.empty() && s.back() == '\\') s.back() = ' ';
  return s;
}

KernelAbi make_kernel_abi(const Graph& g) {
  std::vector<Type> outputs;
  for (NodeId o : g.outputs) outputs.push_back(g[o].type);
  return make_kernel_abi(g.entry, g.params, outputs);
}

KernelAbi make_kernel_abi(const std::string& entry, const std::vector<ParamInfo>& params, const std::vector<Type>& outputs) {
  KernelAbi abi;
  abi.entry = c_identifier(entry.empty() ? "kernel" : entry);
  std::set<std::string> used;
  for (const ParamInfo& p : params) {
    abi.param_names.push_back(unique_identifier(p.name, used));
    used.insert(abi.param_names.back());
  }
  for (size_t k = 0; k < outputs.size(); ++k) abi.output_names.push_back("out" + std::to_string(k));

  // One list of (C type, name, type, role) drives the comment, the
  // declaration and the definition, so they cannot disagree.
  struct Buffer {
    std::string ctype, name, type, role;
    bool is_const;
  };
  std::vector<Buffer> bufs;
  for (size_t i = 0; i < params.size(); ++i)
    bufs.push_back({dtype_c_type(params[i].type.dtype), abi.param_names[i], type_str(params[i].type),
                    "input " + std::to_string(i) + " (" + params[i].name + ")", true});
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Type& t = outputs[k];
    bufs.push_back({dtype_c_type(t.dtype), abi.output_names[k], type_str(t), "output " + std::to_string(k), false});
  }

  size_t wname = 0, wtype = 0;
  for (const Buffer& b : bufs) {
    wname = std::max(wname, b.name.size());
    wtype = std::max(wtype, b.type.size());
  }
  auto pad = [](std::string s, size_t w) { return s + std::string(w - std::min(w, s.size()), ' '); };

  std::string decl, defn;
  for (size_t i = 0; i < bufs.size(); ++i) {
    const Buffer& b = bufs[i];
    std::string qual = (b.is_const ? "const " : "") + b.ctype + "*";
    decl += (i ? ", " : "") + qual + " " + b.name;
    defn += (i ? ", " : "") + qual + " __restrict " + b.name;
  }
  if (bufs.empty()) decl = defn = "void";

  std::string guard = "AXON_KERNEL_" + abi.entry + "_H";
  std::transform(guard.begin(), guard.end(), guard.begin(), [](char c) { return std::toupper(c); });
  std::string h;
  h += "// kernel.h: " + abi.entry + ", generated by axon.\n";
  h += "//\n";
  h += "// Buffers are dense, row-major and allocated by the caller; inputs come in\n";
  h += "// the spec's parameter order, then outputs in return order. A 0-d value is\n";
  h += "// a pointer to one element. Outputs must not overlap each other or inputs.\n";
  h += "// f16 and bf16 elements are IEEE half / bfloat16 bit patterns in uint16_t.\n";
  h += "// Any alignment of the element type is correct; 64-byte aligned buffers are\n";
  h += "// the fast case (numpy's default of 16 bytes halved a 2048^2 transpose).\n";
  h += "// Build kernel.cpp without floating-point contraction (GCC and Clang:\n";
  h += "// -ffp-contract=off), as axon checked it: it rounds each operation as the\n";
  h += "// spec writes it, and GCC by default fuses a * b + c into one FMA.\n";
  h += "// The function is reentrant: called at the same time from several threads\n";
  h += "// on distinct buffers, each call returns what it returns alone. Its result\n";
  h += "// depends only on its inputs: not on what the outputs held before the call\n";
  h += "// (it never reads them), nor on how many calls came before.\n";
  h += "//\n";
  for (const Buffer& b : bufs) h += "//   " + pad(b.name, wname) + "  " + pad(b.type, wtype) + "  " + comment_text(b.role) + "\n";
  h += "#ifndef " + guard + "\n#define " + guard + "\n\n";
  h += "#include <stdbool.h>\n#include <stdint.h>\n\n";
  h += "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  h += "void " + abi.entry + "(" + decl + ");\n\n";
  h += "#ifdef __cplusplus\n}  // extern \"C\"\n#endif\n\n";
  h += "#endif  // " + guard + "\n";
  abi.header = h;
  abi.parameters = defn;
  abi.definition = "extern \"C\" void " + abi.entry + "(" + defn + ")";
  return abi;
}

}  // namespace axon::codegen
