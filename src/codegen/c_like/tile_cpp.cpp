#include "codegen/c_like/tile_cpp.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "codegen/c_like/c_index.h"
#include "codegen/c_like/c_scalar.h"
#include "codegen/c_like/float16_helpers.h"
#include "codegen/c_like/kernel_abi.h"
#include "codegen/cpu/register_transpose.h"
#include "codegen/cpu/vector_math.h"
#include "ir/real.h"
#include "support/diagnostic.h"
#include "tile/value_eval.h"

namespace axon::codegen {

using namespace axon::tile;
using ir::DType;

namespace {

// Scratch arrays up to this size live on the stack; larger ones on the heap.
constexpr int64_t kStackScratchBytes = 64 * 1024;

// A Vectorized loop that cannot be printed with explicit vectors (a dtype,
// an op or an access pattern the vector form does not take).
struct NotVectorizable {
  std::string why;
};

// The scalar type S of element_def.h for the explicit vector form: the text
// of a value of type V (__m256 or __m512), truth as 1.0f / 0.0f per lane.
struct VScalar {
  std::string s;
  bool lit = false;
  double v = 0;
};
VScalar vcall(const std::string& fn, const VScalar& a) { return {fn + "(" + a.s + ")"}; }
VScalar vcall(const std::string& fn, const VScalar& a, const VScalar& b) { return {fn + "(" + a.s + ", " + b.s + ")"}; }
VScalar operator+(const VScalar& a, const VScalar& b) { return {"(" + a.s + " + " + b.s + ")"}; }
VScalar operator-(const VScalar& a, const VScalar& b) { return {"(" + a.s + " - " + b.s + ")"}; }
VScalar operator*(const VScalar& a, const VScalar& b) { return {"(" + a.s + " * " + b.s + ")"}; }
VScalar operator/(const VScalar& a, const VScalar& b) { return {"(" + a.s + " / " + b.s + ")"}; }
VScalar operator-(const VScalar& a) { return {"(-" + a.s + ")"}; }
VScalar exp(const VScalar& a) { return vcall("axon_vexp", a); }
VScalar log(const VScalar& a) { return vcall("axon_vlog", a); }
VScalar sqrt(const VScalar& a) { return vcall("axon_vsqrt", a); }
VScalar tanh(const VScalar& a) { return vcall("axon_vtanh", a); }
VScalar sin(const VScalar& a) { return vcall("axon_tv_sin", a); }
VScalar cos(const VScalar& a) { return vcall("axon_tv_cos", a); }
VScalar floor(const VScalar& a) { return vcall("axon_tv_floor", a); }
VScalar abs_of(const VScalar& a) { return vcall("axon_tv_abs", a); }
// Vectors per value while a tuple body is printed (CppPrinter::vector_loop):
// 1 for one vector (axon_tv), N for a tuple of N (axon_tt<N>).
thread_local int tl_tuple = 1;
std::string splat_call() { return tl_tuple > 1 ? "axon_tt_splat<" + std::to_string(tl_tuple) + ">(" : "axon_tv_splat("; }
VScalar make_scalar(double v, const VScalar&) {
  VScalar r{splat_call() + CScalar::literal(v, DType::F32).expr() + ")"};
  r.lit = true;
  r.v = static_cast<float>(v);
  return r;
}
VScalar pow_of(const VScalar& a, const VScalar& b) {
  // A power of the literal 2 (tile/passes/exp2_scaled.h): the vector math's exp2.
  if (a.lit && a.v == 2) return vcall("axon_vexp2", b);
  // Small literal exponents as products, as the scalar printer writes them.
  if (b.lit && b.v == 1) return a;
  if (b.lit && b.v == 2) return a * a;
  if (b.lit && b.v == 3) return a * a * a;
  if (b.lit && b.v == 0.5) return sqrt(a);
  return vcall("axon_tv_pow", a, b);
}
VScalar lt(const VScalar& a, const VScalar& b) { return vcall("axon_tv_lt", a, b); }
VScalar le(const VScalar& a, const VScalar& b) { return vcall("axon_tv_le", a, b); }
VScalar gt(const VScalar& a, const VScalar& b) { return vcall("axon_tv_lt", b, a); }
VScalar ge(const VScalar& a, const VScalar& b) { return vcall("axon_tv_le", b, a); }
VScalar eq(const VScalar& a, const VScalar& b) { return vcall("axon_tv_eq", a, b); }
VScalar ne(const VScalar& a, const VScalar& b) { return vcall("axon_tv_ne", a, b); }
VScalar logical_and(const VScalar& a, const VScalar& b) { return vcall("axon_tv_and", a, b); }
VScalar logical_or(const VScalar& a, const VScalar& b) { return vcall("axon_tv_or", a, b); }
VScalar logical_not(const VScalar& a) { return vcall("axon_tv_not", a); }
VScalar is_nan(const VScalar& a) { return vcall("axon_tv_isnan", a); }
VScalar where(const VScalar& c, const VScalar& a, const VScalar& b) {
  return {"axon_tv_where(" + c.s + ", " + a.s + ", " + b.s + ")"};
}
VScalar cast_to(DType to, const VScalar& a) {
  if (to == DType::F32) return a;
  if (to == DType::Bool) return ne(a, make_scalar(0, a));
  throw NotVectorizable{std::string("a cast to ") + ir::dtype_name(to)};
}

// Horizontal steps of the vector form, per ISA (see the helpers below).
const char* kHorizontal512 = R"(#define AXON_TV_HSUM _mm512_reduce_add_ps
#define AXON_TV_HMAX _mm512_reduce_max_ps
#define AXON_TV_HMIN _mm512_reduce_min_ps
#define AXON_TVM_ANY(m) (_mm512_test_epi32_mask((__m512i)(m), (__m512i)(m)) != 0)
)";
// The scratch pool of TileCppOptions::scratch_pool: blocks given back are
// kept, by size, for the next request (a temporary of this call or of the
// next), under a lock; freed when the library is unloaded.
const char* kScratchPool = R"(namespace {
struct AxonPool {
  std::mutex mu;
  std::multimap<std::size_t, char*> free_blocks;  // by usable size; each block's size in its first 64 bytes
  ~AxonPool() {
    for (auto& b : free_blocks) std::free(b.second);
  }
};
AxonPool& axon_pool() {
  static AxonPool pool;
  return pool;
}
// A 64-byte aligned block of `bytes` bytes, a free one of that size if the pool holds one.
void* axon_pool_take(std::size_t bytes) {
  AxonPool& p = axon_pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    auto it = p.free_blocks.find(bytes);
    if (it != p.free_blocks.end()) {
      char* b = it->second;
      p.free_blocks.erase(it);
      return b + 64;
    }
  }
  char* b = static_cast<char*>(std::aligned_alloc(64, bytes + 64));
  if (!b) return nullptr;
  std::memcpy(b, &bytes, sizeof bytes);
  return b + 64;
}
void axon_pool_give(void* q) {
  if (!q) return;
  char* b = static_cast<char*>(q) - 64;
  std::size_t bytes;
  std::memcpy(&bytes, b, sizeof bytes);
  AxonPool& p = axon_pool();
  std::lock_guard<std::mutex> lock(p.mu);
  p.free_blocks.emplace(bytes, b);
}
}  // namespace

)";

const char* kHorizontal256 = R"(#ifndef AXON_TV_HORIZONTAL256
#define AXON_TV_HORIZONTAL256
static inline float axon_tv_hsum256(__m256 v) {
  __m256 m = _mm256_add_ps(v, _mm256_permute2f128_ps(v, v, 1));
  m = _mm256_add_ps(m, _mm256_permute_ps(m, 0x4E));
  return _mm256_cvtss_f32(_mm256_add_ps(m, _mm256_permute_ps(m, 0xB1)));
}
static inline float axon_tv_hmax256(__m256 v) {
  __m256 m = _mm256_max_ps(v, _mm256_permute2f128_ps(v, v, 1));
  m = _mm256_max_ps(m, _mm256_permute_ps(m, 0x4E));
  return _mm256_cvtss_f32(_mm256_max_ps(m, _mm256_permute_ps(m, 0xB1)));
}
static inline float axon_tv_hmin256(__m256 v) {
  __m256 m = _mm256_min_ps(v, _mm256_permute2f128_ps(v, v, 1));
  m = _mm256_min_ps(m, _mm256_permute_ps(m, 0x4E));
  return _mm256_cvtss_f32(_mm256_min_ps(m, _mm256_permute_ps(m, 0xB1)));
}
#endif
#define AXON_TV_HSUM axon_tv_hsum256
#define AXON_TV_HMAX axon_tv_hmax256
#define AXON_TV_HMIN axon_tv_hmin256
#define AXON_TVM_ANY(m) (!_mm256_testz_si256((__m256i)(m), (__m256i)(m)))
)";

// Helpers the vector form calls, generic over the vector type V (GCC vector
// operators; a comparison gives lanes of -1 / 0, made into 1.0f / 0.0f).
const char* kVectorHelpers = R"(
#ifndef AXON_TILE_VECTOR_HELPERS
#define AXON_TILE_VECTOR_HELPERS
typedef AXON_TV_NATIVE axon_tv;  // the target's native vector type: the vector math takes it as it is
static inline axon_tv axon_tv_splat(float c) { axon_tv r = {}; return r + c; }
static inline axon_tv axon_tv_load(const float* p) { axon_tv r; __builtin_memcpy(&r, p, sizeof r); return r; }
static inline void axon_tv_store(float* p, axon_tv x) { __builtin_memcpy(p, &x, sizeof x); }
static inline axon_tv axon_tv_load_bool(const bool* p) {
  axon_tv r;
  for (int i = 0; i < (int)(sizeof(axon_tv) / 4); ++i) r[i] = p[i] ? 1.f : 0.f;
  return r;
}
static inline void axon_tv_store_bool(bool* p, axon_tv x) {
  for (int i = 0; i < (int)(sizeof(axon_tv) / 4); ++i) p[i] = x[i] != 0.f;
}
// The lanes' sum, pairwise (AXON_TV_HSUM: halves added, then their halves).
static inline float axon_tv_sum(axon_tv x) { return AXON_TV_HSUM(x); }
// A max or min accumulator's lanes (never NaN: vector_loop tracks NaN lanes
// apart) folded into acc by the hardware's tree (AXON_TV_HMAX, _HMIN): the
// same value as lane by lane, up to which of +0 and -0 is kept; a NaN acc
// stays NaN.
static inline float axon_tv_fold_max(float acc, axon_tv v) {
  const float r = AXON_TV_HMAX(v);
  return r > acc ? r : acc;
}
static inline float axon_tv_fold_min(float acc, axon_tv v) {
  const float r = AXON_TV_HMIN(v);
  return r < acc ? r : acc;
}
// Lanes of a comparison (-1 or 0): the NaN lanes a vector max or min has seen.
typedef decltype(axon_tv{} < axon_tv{}) axon_tvm;
static inline axon_tvm axon_tv_nan_lanes(axon_tvm seen, axon_tv x) { return seen | (x != x); }
static inline bool axon_tvm_any(axon_tvm m) { return AXON_TVM_ANY(m); }
static inline axon_tv axon_tv_truth(decltype(axon_tv{} < axon_tv{}) m) { return __builtin_convertvector(-m, axon_tv); }
static inline axon_tv axon_tv_lt(axon_tv a, axon_tv b) { return axon_tv_truth(a < b); }
static inline axon_tv axon_tv_le(axon_tv a, axon_tv b) { return axon_tv_truth(a <= b); }
static inline axon_tv axon_tv_eq(axon_tv a, axon_tv b) { return axon_tv_truth(a == b); }
static inline axon_tv axon_tv_ne(axon_tv a, axon_tv b) { return axon_tv_truth(a != b); }
static inline axon_tv axon_tv_isnan(axon_tv a) { return axon_tv_truth(a != a); }
static inline axon_tv axon_tv_and(axon_tv a, axon_tv b) { return axon_tv_truth((a != axon_tv{}) & (b != axon_tv{})); }
static inline axon_tv axon_tv_or(axon_tv a, axon_tv b) { return axon_tv_truth((a != axon_tv{}) | (b != axon_tv{})); }
static inline axon_tv axon_tv_not(axon_tv a) { return axon_tv_truth(a == axon_tv{}); }
static inline axon_tv axon_tv_where(axon_tv c, axon_tv a, axon_tv b) { return c != axon_tv{} ? a : b; }
#define AXON_TV_LANES(name, f) \
  static inline axon_tv name(axon_tv x) { for (int i = 0; i < (int)(sizeof(axon_tv) / 4); ++i) x[i] = f(x[i]); return x; }
AXON_TV_LANES(axon_tv_sin, sinf)
AXON_TV_LANES(axon_tv_cos, cosf)
AXON_TV_LANES(axon_tv_floor, floorf)
AXON_TV_LANES(axon_tv_abs, fabsf)
static inline axon_tv axon_tv_pow(axon_tv x, axon_tv y) {
  for (int i = 0; i < (int)(sizeof(axon_tv) / 4); ++i) x[i] = powf(x[i], y[i]);
  return x;
}
// Tuples of N vectors (axon_t of the vector math): a vector loop's body
// printed once for N consecutive vectors, each step of a routine for all N
// before the next (docs/loop_ir.md, "Interleaved vectors"); the same
// instructions per lane, so the same bits.
template <int N> using axon_tt = axon_t<axon_tv, N>;
#define AXON_TT_OP(op) \
  template <int N> static inline __attribute__((always_inline)) axon_tt<N> operator op(axon_tt<N> a, axon_tt<N> b) { \
    AXON_T_EACH(a.v[i] = a.v[i] op b.v[i]) return a; \
  }
AXON_TT_OP(+) AXON_TT_OP(-) AXON_TT_OP(*) AXON_TT_OP(/)
template <int N> static inline axon_tt<N> operator-(axon_tt<N> a) { AXON_T_EACH(a.v[i] = -a.v[i]) return a; }
#define AXON_TT_FN1(name) \
  template <int N> static inline axon_tt<N> name(axon_tt<N> a) { AXON_T_EACH(a.v[i] = name(a.v[i])) return a; }
#define AXON_TT_FN2(name) \
  template <int N> static inline axon_tt<N> name(axon_tt<N> a, axon_tt<N> b) { AXON_T_EACH(a.v[i] = name(a.v[i], b.v[i])) return a; }
AXON_TT_FN2(axon_tv_lt) AXON_TT_FN2(axon_tv_le) AXON_TT_FN2(axon_tv_eq) AXON_TT_FN2(axon_tv_ne)
AXON_TT_FN2(axon_tv_and) AXON_TT_FN2(axon_tv_or) AXON_TT_FN2(axon_tv_pow)
AXON_TT_FN1(axon_tv_isnan) AXON_TT_FN1(axon_tv_not) AXON_TT_FN1(axon_tv_sin) AXON_TT_FN1(axon_tv_cos)
AXON_TT_FN1(axon_tv_floor) AXON_TT_FN1(axon_tv_abs)
template <int N> static inline axon_tt<N> axon_tv_where(axon_tt<N> c, axon_tt<N> a, axon_tt<N> b) {
  AXON_T_EACH(a.v[i] = axon_tv_where(c.v[i], a.v[i], b.v[i])) return a;
}
#define AXON_TT_LANES (int)(sizeof(axon_tv) / 4)
template <int N> static inline axon_tt<N> axon_tt_splat(float c) { axon_tt<N> r; AXON_T_EACH(r.v[i] = axon_tv_splat(c)) return r; }
template <int N> static inline axon_tt<N> axon_tt_load(const float* p) {
  axon_tt<N> r; AXON_T_EACH(r.v[i] = axon_tv_load(p + AXON_TT_LANES * i)) return r;
}
template <int N> static inline axon_tt<N> axon_tt_load_bool(const bool* p) {
  axon_tt<N> r; AXON_T_EACH(r.v[i] = axon_tv_load_bool(p + AXON_TT_LANES * i)) return r;
}
template <int N> static inline void axon_tt_store(float* p, axon_tt<N> x) { AXON_T_EACH(axon_tv_store(p + AXON_TT_LANES * i, x.v[i])) }
// A streaming store (tile/passes/stream_stores.h): non-temporal where the
// vector's address is aligned to it, a plain store elsewhere.
static inline void axon_tv_stream(float* p, axon_tv x) {
  if (reinterpret_cast<uintptr_t>(p) % sizeof(axon_tv) == 0) AXON_TV_STREAM(p, x);
  else axon_tv_store(p, x);
}
template <int N> static inline void axon_tt_stream(float* p, axon_tt<N> x) { AXON_T_EACH(axon_tv_stream(p + AXON_TT_LANES * i, x.v[i])) }
template <int N> static inline void axon_tt_store_bool(bool* p, axon_tt<N> x) {
  AXON_T_EACH(axon_tv_store_bool(p + AXON_TT_LANES * i, x.v[i]))
}
#endif
)";

class CppPrinter {
 public:
  // Parameters named by the graph's ABI (abi != nullptr) or after the buffers.
  CppPrinter(const Kernel& k, const KernelAbi* abi, const TileCppOptions& o, const std::string& prefix = "axon_")
      : k_(k), o_(o), prefix_(prefix) {
    for (const Buffer& b : k.buffers) {
      if (abi && b.scope == Scope::Input) names_.push_back(abi->param_names.at(b.param));
      else if (abi && b.scope == Scope::Output) names_.push_back(abi->output_names.at(b.output));
      else names_.push_back(b.name);
      if (b.scope == Scope::Shared) throw InternalError("the CPU printer has no shared memory (buffer " + b.name + ")");
    }
  }

  // The body's statements (indented one level), then what they need.
  void print_body() {
    std::set<int> used;
    visit(k_.body, [&](const Stmt& s) {
      if (s.kind() == StmtKind::Store || s.kind() == StmtKind::Accumulate || s.kind() == StmtKind::Rescale)
        s->value.visit_loads([&](const Value& l) { used.insert(l.buffer()); });
      if (s.kind() == StmtKind::Rescale) s->alpha.visit_loads([&](const Value& l) { used.insert(l.buffer()); });
      if (s.kind() == StmtKind::Copy || s.kind() == StmtKind::Matmul) used.insert(s->a.buffer);
      if (s.kind() == StmtKind::Matmul) used.insert(s->b.buffer);
    });
    for (size_t b = 0; b < k_.buffers.size(); ++b)
      if (k_.buffers[b].scope == Scope::Input && !used.count(static_cast<int>(b)))
        line(1, "(void)" + names_[b] + ";  // not needed by any output");
    stmt(k_.body, 1);
    if (fence_at_end_) line(1, "_mm_sfence();  // the streamed lines are visible before return");
  }

  // What the body needs at file scope (after print_body): the helpers
  // several kernels of one translation unit share.
  struct Needs {
    bool immintrin = false, half = false;
    std::map<int, bool> transposes;  // width: with streaming stores?
    int vector_bits = 0;             // > 0: the vector form's helpers
    bool pool = false;               // the scratch pool (TileCppOptions::scratch_pool)
    void merge(const Needs& o) {
      immintrin |= o.immintrin, half |= o.half, pool |= o.pool;
      for (const auto& [w, st] : o.transposes) transposes[w] |= st;
      vector_bits = std::max(vector_bits, o.vector_bits);
    }
  };
  Needs needs() const {
    Needs n;
    n.immintrin = !micro_kernels_.empty() || vector_loops_ > 0 || !transposes_.empty() || fence_at_end_ || streams(k_.body);
    n.half = std::any_of(k_.buffers.begin(), k_.buffers.end(),
                         [](const Buffer& b) { return b.dtype == DType::F16 || b.dtype == DType::BF16; });
    n.transposes = transposes_;
    n.vector_bits = vector_loops_ > 0 ? o_.vector_bits : 0;
    n.pool = o_.scratch_pool;
    return n;
  }
  // #include lines and helpers for `n`.
  static std::string helpers(const Needs& n) {
    std::string s = "#include <math.h>\n\n#include <cmath>\n#include <cstdint>\n#include <cstdlib>\n#include <cstring>\n#include <memory>\n";
    if (n.immintrin) s += "#include <immintrin.h>\n";
    if (n.pool) s += "#include <map>\n#include <mutex>\n";
    s += "\n";
    if (n.pool) s += kScratchPool;
    if (n.half) s += std::string(float16_helpers_source()) + "\n";
    for (const auto& [w, streaming] : n.transposes) s += register_transpose_source(w, streaming) + "\n";
    if (n.vector_bits > 0) {
      const bool wide = n.vector_bits == 512;
      s += vector_math_source(n.vector_bits);
      s += std::string("#define AXON_TV_NATIVE ") + (wide ? "__m512" : "__m256") + "\n";
      // The hardware max and min: x > acc ? x : acc (x < acc ? x : acc), the
      // accumulator kept when x is NaN (vector_loop tracks NaN lanes apart).
      s += std::string("#define AXON_TV_MAX ") + (wide ? "_mm512_max_ps" : "_mm256_max_ps") + "\n";
      s += std::string("#define AXON_TV_MIN ") + (wide ? "_mm512_min_ps" : "_mm256_min_ps") + "\n";
      // The max and min of a vector's lanes (none NaN) by a tree of the
      // hardware max and min, and whether a mask has a lane set.
      s += wide ? kHorizontal512 : kHorizontal256;
      s += std::string("#define AXON_TV_STREAM ") + (wide ? "_mm512_stream_ps" : "_mm256_stream_ps") + "\n";
      s += kVectorHelpers;
      s += "\n";
    }
    return s;
  }
  // The micro-kernels the body's Matmuls call (after print_body).
  std::string micro_kernels() const {
    std::string s;
    for (const auto& [key, text] : micro_kernels_) s += text + "\n";
    return s;
  }
  // #include lines and helpers the body needs (after print_body).
  std::string preamble() const { return helpers(needs()) + micro_kernels(); }

  std::string body() const { return out_.str(); }

 private:
  void line(int depth, const std::string& s) {
    if (s.empty()) out_ << "\n";
    else out_ << std::string(2 * depth, ' ') << s << "\n";
  }

  // ---- indices ----
  static bool has_min(const Index& e) {
    if (e.kind() == IndexKind::Min) return true;
    if (e.kind() == IndexKind::Const || e.kind() == IndexKind::Var) return false;
    return has_min(e.a()) || has_min(e.b());
  }
  std::string c_text(const Index& e) const {
    switch (e.kind()) {
      case IndexKind::Const: return std::to_string(e.value());
      case IndexKind::Var: return e.name();
      case IndexKind::Add: return "(" + c_text(e.a()) + " + " + c_text(e.b()) + ")";
      case IndexKind::Mul: return "(" + c_text(e.a()) + " * " + c_text(e.b()) + ")";
      case IndexKind::Div: return "(" + c_text(e.a()) + " / " + c_text(e.b()) + ")";
      case IndexKind::Mod: return "(" + c_text(e.a()) + " % " + c_text(e.b()) + ")";
      case IndexKind::Min: {
        std::string a = c_text(e.a()), b = c_text(e.b());
        return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
      }
    }
    return "0";
  }
  CIndex to_cindex(const Index& e) const {
    switch (e.kind()) {
      case IndexKind::Const: return CIndex(e.value());
      case IndexKind::Var: {
        auto it = ranges_.find(e.name());
        return it == ranges_.end() ? CIndex::var(e.name(), 0, 0) : CIndex::var(e.name(), it->second.lo, it->second.hi);
      }
      case IndexKind::Add: return to_cindex(e.a()) + to_cindex(e.b());
      case IndexKind::Mul: return to_cindex(e.a()) * to_cindex(e.b());
      case IndexKind::Div: return to_cindex(e.a()) / to_cindex(e.b());
      case IndexKind::Mod: return to_cindex(e.a()) % to_cindex(e.b());
      case IndexKind::Min: break;
    }
    return CIndex();
  }
  std::string offset_text(const Index& off) const { return has_min(off) ? c_text(off) : to_cindex(off).str(); }
  std::string index_text(const Index& e) const { return e.is_const() ? std::to_string(e.value()) : offset_text(e); }
  std::string element(int b, const std::vector<Index>& idx) const {
    const Buffer& buf = k_.buffers[b];
    if (buf.scope == Scope::Register && buf.shape.empty()) return names_[b];
    std::vector<int64_t> st = ir::row_major_strides(buf.shape);
    bool any_min = false;
    for (const Index& i : idx) any_min |= has_min(i);
    if (any_min) return names_[b] + "[" + c_text(flat_index(buf.shape, idx)) + "]";
    CIndex off;
    for (size_t d = 0; d < idx.size(); ++d) off = off + to_cindex(idx[d]) * CIndex(st[d]);
    return names_[b] + "[" + off.str() + "]";
  }
  std::string view_element(const View& v, const std::vector<std::string>& vars) const {
    CIndex off = has_min(v.offset) ? CIndex() : to_cindex(v.offset);
    for (size_t d = 0; d < vars.size(); ++d) {
      auto it = ranges_.find(vars[d]);
      off = off + CIndex::var(vars[d], 0, it == ranges_.end() ? 0 : it->second.hi) * CIndex(v.strides[d]);
    }
    std::string text = off.str();
    if (has_min(v.offset)) text = c_text(v.offset) + " + " + text;
    return names_[v.buffer] + "[" + text + "]";
  }

  // ---- values ----
  bool in_register(int b) const { return k_.buffers[b].scope == Scope::Register; }
  CScalar value(const Value& v) const {
    return evaluate<CScalar>(
        v, [](DType d) { return CScalar::literal(0, d); },
        [&](const Value& l) {
          const std::string e = element(l.buffer(), l.idx());
          return in_register(l.buffer()) ? CScalar(e, l.dtype()) : CScalar(load_conversion(l.dtype(), e), l.dtype());
        },
        [&](const Index& i) {
          if (i.is_const()) return CScalar::literal(static_cast<double>(i.value()), DType::I64);
          return CScalar("(int64_t)(" + offset_text(i) + ")", DType::I64);
        });
  }
  // "f(x)" -> "x" when the whole text is one call of f; otherwise unchanged.
  static std::string strip_call(const std::string& s, const std::string& f) {
    if (s.rfind(f, 0) != 0 || s.back() != ')') return s;
    int depth = 1;
    for (size_t i = f.size(); i < s.size(); ++i) {
      depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
      if (depth == 0) return i + 1 == s.size() ? s.substr(f.size(), i - f.size()) : s;
    }
    return s;
  }
  std::string stored(int b, const CScalar& v) const {
    const DType d = k_.buffers[b].dtype;
    if (in_register(b)) return v.expr();
    // A cast to f16/bf16 already rounded; storing its bits needs no second rounding call.
    std::string text = v.expr();
    if (d == DType::F16) text = strip_call(text, "axon_round_f16(");
    if (d == DType::BF16) text = strip_call(text, "axon_round_bf16(");
    return store_conversion(d, text);
  }
  CScalar current(int b, const std::vector<Index>& idx) const {
    return value(Value::load(b, idx, k_.buffers[b].dtype));
  }

  // ---- statements ----
  void declare(int b, int depth, const std::string& init) {
    const Buffer& buf = k_.buffers[b];
    const std::string& n = names_[b];
    const int64_t count = std::max<int64_t>(buf.numel(), 1);
    switch (buf.scope) {
      case Scope::Register: {
        std::string ct = compute_c_type(buf.dtype);
        if (buf.shape.empty()) line(depth, ct + " " + n + (init.empty() ? "" : " = " + init) + ";");
        else line(depth, ct + " " + n + "[" + std::to_string(count) + "];");
        return;
      }
      case Scope::Scratch:
        if (count * ir::dtype_bytes(buf.dtype) <= kStackScratchBytes) {
          line(depth, std::string("alignas(64) ") + ir::dtype_c_type(buf.dtype) + " " + n + "[" + std::to_string(count) + "];");
          return;
        }
        [[fallthrough]];
      case Scope::Memory: {
        // 64-byte aligned: vector loads of a packed panel never split a line.
        std::string ct = ir::dtype_c_type(buf.dtype);
        const int64_t bytes = (count * ir::dtype_bytes(buf.dtype) + 63) / 64 * 64;
        if (o_.scratch_pool)
          line(depth, "std::unique_ptr<" + ct + ", void (*)(void*)> " + n + "_buf(static_cast<" + ct +
                          "*>(axon_pool_take(" + std::to_string(bytes) + ")), axon_pool_give);");
        else
          line(depth, "std::unique_ptr<" + ct + ", void (*)(void*)> " + n + "_buf(static_cast<" + ct +
                          "*>(std::aligned_alloc(64, " + std::to_string(bytes) + ")), std::free);");
        line(depth, ct + "* __restrict " + n + " = " + n + "_buf.get();");
        return;
      }
      default: throw InternalError("tile_cpp: cannot allocate " + buf.name);
    }
  }


  // A prefetch of element idx of b, or with `ahead` of the line that many
  // bytes past it, non-temporal (locality 0) or `temporal` (3), its address an integer that
  // may pass the buffer's end.
  std::string prefetch_text(int b, const std::vector<Index>& idx, int64_t ahead, bool temporal) const {
    if (ahead <= 0) return "__builtin_prefetch(&" + element(b, idx) + ");";
    return "__builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(&" + element(b, idx) + ") + " +
           std::to_string(ahead) + "), 0, " + (temporal ? "3" : "0") + ");";
  }

  // ---- the explicit vector form of a Vectorized loop ----
  // The coefficient of `var` in the flat offset of buffer b at idx: 0 or 1
  // are the forms the vector body takes (a broadcast, a unit-stride access).
  // Terms of the sum that do not use `var` (a per-batch row of a bias,
  // (m / M) * N) may be anything: only the terms that use it must be affine.
  int64_t lane_stride(int b, const std::vector<Index>& idx, const std::string& var) const {
    const Index off = flat_index(k_.buffers[b].shape, idx);
    if (!off.uses(var)) return 0;
    Index varying(int64_t{0});
    std::function<void(const Index&)> split = [&](const Index& e) {
      if (e.kind() == IndexKind::Add) {
        split(e.a());
        split(e.b());
      } else if (e.uses(var)) {
        varying = varying + e;
      }
    };
    split(off);
    std::optional<Affine> a = as_affine(varying);
    if (!a) throw NotVectorizable{"a non-affine index of " + k_.buffers[b].name};
    auto it = a->coef.find(var);
    return it == a->coef.end() ? 0 : it->second;
  }
  VScalar vvalue(const Value& v, const std::string& var) const {
    return evaluate<VScalar>(
        v,
        [](DType d) {
          if (d != DType::F32 && d != DType::Bool) throw NotVectorizable{std::string("a value of ") + ir::dtype_name(d)};
          return VScalar{};
        },
        [&](const Value& l) -> VScalar {
          const Buffer& b = k_.buffers[l.buffer()];
          if (b.dtype != DType::F32 && b.dtype != DType::Bool)
            throw NotVectorizable{std::string("a load of ") + ir::dtype_name(b.dtype)};
          const std::string e = element(l.buffer(), l.idx());
          const int64_t stride = in_register(l.buffer()) ? 0 : lane_stride(l.buffer(), l.idx(), var);
          const bool truth = b.dtype == DType::Bool;
          if (stride == 0) return {splat_call() + (truth ? "(" + e + " ? 1.f : 0.f)" : e) + ")"};
          if (stride != 1) throw NotVectorizable{"a strided load of " + b.name};
          const std::string n = tl_tuple > 1 ? "<" + std::to_string(tl_tuple) + ">" : "";
          return {std::string(truth ? "axon_t" : "axon_t") + (tl_tuple > 1 ? "t" : "v") + (truth ? "_load_bool" : "_load") +
                  n + "(&" + e + ")"};
        },
        [](const Index&) -> VScalar { throw NotVectorizable{"an index used as a value"}; });
  }
  // `streaming`: a float32 store past the caches (axon_tv_stream).
  std::string vstore(int b, const std::vector<Index>& idx, const VScalar& v, const std::string& var,
                     bool streaming = false) const {
    const Buffer& buf = k_.buffers[b];
    if (in_register(b) || (buf.dtype != DType::F32 && buf.dtype != DType::Bool))
      throw NotVectorizable{"a store to " + buf.name};
    if (lane_stride(b, idx, var) != 1) throw NotVectorizable{"a store to " + buf.name + " that is not unit-stride"};
    const std::string what = buf.dtype == DType::Bool ? "store_bool" : streaming ? "stream" : "store";
    const std::string n = tl_tuple > 1 ? "t_" + what + "<" + std::to_string(tl_tuple) + ">" : "v_" + what;
    return "axon_t" + n + "(&" + element(b, idx) + ", " +
           v.s + ");";
  }
  // Prints the loop `s` in the vector form, with a scalar tail; false (and
  // nothing printed) when its body is outside that form. A loop holding a
  // reduction into a scalar Register steps over `chains` vectors at a time
  // (kVectorChains, fewer when the loop is shorter), each with its own
  // accumulator, combined pairwise after the loop and then the lanes pairwise: a
  // single chain would run at the adder's latency. Max and min give the
  // same value in any order; a sum of n terms adds at most ceil(n / (W
  // chains)) terms in each lane of each chain (docs/error_budget.md): the
  // vectors left after the main loop, fewer than `chains`, go one to each
  // chain, and the last n mod W terms to the scalar after the lanes.
  bool vector_loop(const Stmt& s, int depth) {
    const StmtNode& n = s.node();
    const std::string& var = n.var;
    const int lanes = o_.vector_bits / 32;
    std::vector<Stmt> body;
    Stmt b0 = n.body.at(0);
    if (b0.kind() == StmtKind::Seq) body = b0->body;
    else body = {b0};
    std::vector<std::pair<int, ir::Combine>> sums;  // scalar Register reductions: one partial per lane
    for (const Stmt& x : body)
      if (x.kind() == StmtKind::Accumulate && in_register(x->buffer) && k_.buffers[x->buffer].shape.empty() &&
          k_.buffers[x->buffer].dtype == DType::F32) {
        bool seen = false;
        for (const auto& [b, c] : sums) seen |= b == x->buffer;
        if (!seen) sums.push_back({x->buffer, x->combine});
      }
    int chains = 1;
    if (!sums.empty() && n.extent.is_const()) {
      chains = static_cast<int>(std::clamp<int64_t>(n.extent.value() / lanes, 1, int64_t{kVectorChains}));
      // Several sums side by side are independent chains already: about
      // kVectorChains in all, so that they stay in registers (4 dot
      // products of 4 chains each spill on 16 registers), but never fewer
      // than keep each lane's share of the terms within the 64 of the
      // error bound (docs/error_budget.md).
      if (sums.size() > 1) {
        const int64_t needed = (n.extent.value() + 64 * lanes - 1) / (64 * lanes);
        const int64_t side_by_side = std::max<int64_t>({1, kVectorChains / static_cast<int64_t>(sums.size()), needed});
        chains = static_cast<int>(std::min<int64_t>(chains, side_by_side));
      }
    }
    // Without a reduction, `unroll` vectors per step as one tuple.
    const int tuple = sums.empty() && n.extent.is_const() && n.extent.value() >= int64_t{o_.unroll} * lanes ? o_.unroll : 1;
    auto acc_name = [&](int b, int j) { return "axon_vacc_" + names_[b] + (j == 0 ? "" : "_" + std::to_string(j)); };
    // The vector body on chain `j`'s accumulators, the loop variable
    // advanced by `ahead` vectors.
    auto body_lines = [&](int j, int ahead) {
      std::vector<std::string> lines;
      auto shift = [&](const std::string& v) -> std::optional<Index> {
        if (ahead == 0 || v != var) return std::nullopt;
        return Index::var(var) + Index(static_cast<int64_t>(ahead) * lanes);
      };
      auto shifted = [&](const std::vector<Index>& idx) {
        std::vector<Index> out;
        for (const Index& i : idx) out.push_back(i.substitute(shift));
        return out;
      };
      for (const Stmt& x : body) {
        switch (x.kind()) {
          case StmtKind::Comment: break;
          case StmtKind::Prefetch:  // one per vector of a tuple
            for (int t = 0; t < tl_tuple; ++t) {
              std::vector<Index> idx;
              for (const Index& i : shifted(x->idx))
                idx.push_back(i.substitute([&](const std::string& v) -> std::optional<Index> {
                  if (t == 0 || v != var) return std::nullopt;
                  return Index::var(var) + Index(static_cast<int64_t>(t) * lanes);
                }));
              lines.push_back(prefetch_text(x->buffer, idx, x->ahead, x->temporal));
            }
            break;
          case StmtKind::Store:
            lines.push_back(vstore(x->buffer, shifted(x->idx), vvalue(x->value.substitute(shift), var), var, x->streaming));
            break;
          case StmtKind::Accumulate: {
            const Buffer& buf = k_.buffers[x->buffer];
            const Value v = x->value.substitute(shift);
            if (in_register(x->buffer) && buf.shape.empty() && buf.dtype == DType::F32) {
              const std::string acc = acc_name(x->buffer, j);
              if (x->combine == ir::Combine::Sum) {
                lines.push_back(acc + " = " + ir::combine_step<VScalar>(x->combine, VScalar{acc}, vvalue(v, var)).s + ";");
                break;
              }
              // Max and min: the hardware instruction (a tie keeps the
              // accumulator, as the definition's x > acc ? x : acc does),
              // and the lanes where x is NaN, which make the result NaN.
              lines.push_back("{ const axon_tv axon_x = " + vvalue(v, var).s + "; " + acc + " = AXON_TV_" +
                              (x->combine == ir::Combine::Max ? "MAX" : "MIN") + "(axon_x, " + acc + "); axon_vnan_" +
                              names_[x->buffer] + " = axon_tv_nan_lanes(axon_vnan_" + names_[x->buffer] + ", axon_x); }");
              break;
            }
            const std::vector<Index> idx = shifted(x->idx);
            VScalar cur = vvalue(Value::load(x->buffer, idx, buf.dtype), var);
            VScalar next = ir::combine_step<VScalar>(x->combine, cur, vvalue(v, var));
            lines.push_back(vstore(x->buffer, idx, next, var));
            break;
          }
          default: throw NotVectorizable{"a statement the vector form does not take"};
        }
      }
      return lines;
    };
    std::vector<std::vector<std::string>> steps, rest;  // per chain: in the main loop, one vector after it
    std::vector<std::string> tuple_step;
    try {
      for (int j = 0; j < chains; ++j) steps.push_back(body_lines(j, j));
      for (int j = 0; j + 1 < chains; ++j) rest.push_back(body_lines(j, 0));
      if (tuple > 1) {
        struct Restore {
          ~Restore() { tl_tuple = 1; }
        } restore;
        tl_tuple = tuple;
        tuple_step = body_lines(0, 0);
      }
    } catch (const NotVectorizable&) {
      return false;
    }
    // Streamed outside parallel loops: one fence ends the kernel.
    for (const Stmt& x : body) fence_at_end_ |= x.kind() == StmtKind::Store && x->streaming && parallel_depth_ == 0;
    const std::string ext = n.extent.is_const() ? std::to_string(n.extent.value()) : c_text(n.extent);
    const std::string w = std::to_string(lanes), step = std::to_string(lanes * chains);
    line(depth, "{  // " + var + ": " + (tuple > 1 ? "tuples of " + std::to_string(tuple) + " vectors, then " : "") +
                    "vectors of " + w + " lanes" +
                    (chains > 1 ? " (" + std::to_string(chains) + " accumulator chains)" : "") + ", then a scalar tail");
    for (const auto& [b, c] : sums) {
      const double identity = ir::combine_identity<ir::Real>(c, ir::Real{}).v;
      const std::string init = "axon_tv_splat(" + CScalar::literal(identity, DType::F32).expr() + ")";
      for (int j = 0; j < chains; ++j) line(depth + 1, "axon_tv " + acc_name(b, j) + " = " + init + ";");
      if (c != ir::Combine::Sum) line(depth + 1, "axon_tvm axon_vnan_" + names_[b] + " = {};");
    }
    line(depth + 1, "int64_t " + var + " = 0;");
    if (tuple > 1) {
      const std::string tstep = std::to_string(lanes * tuple);
      line(depth + 1, "for (; " + var + " + " + tstep + " <= " + ext + "; " + var + " += " + tstep + ") {");
      for (const std::string& l : tuple_step) line(depth + 2, l);
      line(depth + 1, "}");
    }
    line(depth + 1, "for (; " + var + " + " + step + " <= " + ext + "; " + var + " += " + step + ") {");
    for (const auto& chain : steps)
      for (const std::string& l : chain) line(depth + 2, l);
    line(depth + 1, "}");
    for (const auto& chain : rest) {  // fewer than `chains` vectors are left: one on each chain
      line(depth + 1, "if (" + var + " + " + w + " <= " + ext + ") {");
      for (const std::string& l : chain) line(depth + 2, l);
      line(depth + 2, var + " += " + w + ";");
      line(depth + 1, "}");
    }
    for (const auto& [b, c] : sums) {
      // Chains combined pairwise: (0, 1), (2, 3), then (0, 2); a max or
      // min by the hardware instruction, whose lanes hold no NaN (tracked
      // apart), keeping the first on a tie as the definition does.
      for (int gap = 1; gap < chains; gap *= 2)
        for (int j = 0; j + gap < chains; j += 2 * gap)
          line(depth + 1, acc_name(b, j) + " = " +
                              (c == ir::Combine::Sum
                                   ? ir::combine_step<VScalar>(c, VScalar{acc_name(b, j)}, VScalar{acc_name(b, j + gap)}).s
                                   : std::string("AXON_TV_") + (c == ir::Combine::Max ? "MAX" : "MIN") + "(" +
                                         acc_name(b, j + gap) + ", " + acc_name(b, j) + ")") +
                              ";");
      const std::string acc = acc_name(b, 0);
      if (c == ir::Combine::Sum) line(depth + 1, names_[b] + " = " + names_[b] + " + axon_tv_sum(" + acc + ");");
      else {
        line(depth + 1, names_[b] + " = axon_tv_fold_" + (c == ir::Combine::Max ? "max" : "min") + "(" + names_[b] + ", " + acc + ");");
        line(depth + 1, "if (axon_tvm_any(axon_vnan_" + names_[b] + ")) " + names_[b] + " = NAN;");
      }
    }
    line(depth + 1, "for (; " + var + " < " + ext + "; ++" + var + ") {");
    stmt(b0, depth + 2);
    line(depth + 1, "}");
    line(depth, "}");
    ++vector_loops_;
    return true;
  }

  // ---- the register-tiled form of a Matmul ----
  // A float32 Matmul whose B view is unit-stride along n is a call of a
  // micro-kernel: MR x NR accumulators (NR / W vectors per row, W lanes)
  // over its k steps, MR and NR the upper bounds of m and n, the operands'
  // strides template arguments. A tile cut by an edge (m < MR or n < NR at
  // run time) is computed in full into a local tile whose valid part is
  // merged into C; that reads MR rows of A and NR columns of B, so it is
  // printed only where those stay inside their buffers (a zero-padded
  // panel). False (nothing printed) for the scalar form.
  bool register_tiled_matmul(const StmtNode& n, int depth) {
    const int bits = o_.vector_bits;
    if (bits != 0 && bits != 256 && bits != 512) return false;
    const int W = bits == 0 ? 1 : bits / 32;
    for (const View* v : {&n.a, &n.b, &n.c})
      if (k_.buffers[v->buffer].dtype != DType::F32 || v->strides.size() != 2) return false;
    if (n.b.strides[1] != 1 || n.a.strides[0] < 0 || n.a.strides[1] < 0 || n.b.strides[0] < 0) return false;
    std::optional<Interval> mb = bounds(n.m, ranges_), nb = bounds(n.n, ranges_), kb = bounds(n.k, ranges_);
    if (!mb || !nb || !kb) return false;
    const int64_t MR = mb->hi, NR = W > 1 ? (nb->hi + W - 1) / W * W : nb->hi, NV = NR / W;
    // A tile narrower than a vector (a product with N = 8 at 16 lanes) is
    // computed a vector wide, where B's panel holds the columns it reads
    // past n (checked below), and merged as an edge tile.
    const bool padded = NR != nb->hi;
    if (MR < 1 || NR < 1 || NR % W != 0) return false;
    if (W > 1 ? MR * NV + NV + 1 > (W == 16 ? 32 : 16) : MR * NR > 64) return false;
    const bool whole = n.m.is_const() && n.n.is_const() && !padded;
    auto inside = [&](const View& v, const Index& end) {
      std::optional<int64_t> hi = upper_bound(end, ranges_);
      return hi && *hi < std::max<int64_t>(k_.buffers[v.buffer].numel(), 1);
    };
    // Only an extent that varies is read past: m along A's rows, n along B's columns.
    const int64_t K = std::max<int64_t>(kb->hi, 1);
    if (!n.m.is_const() && !inside(n.a, n.a.offset + Index((MR - 1) * n.a.strides[0] + (K - 1) * n.a.strides[1])))
      return false;
    if ((!n.n.is_const() || padded) && !inside(n.b, n.b.offset + Index((K - 1) * n.b.strides[0] + NR - 1))) return false;
    const bool prefetch = n.next.buffer >= 0;
    const std::string micro = micro_kernel(static_cast<int>(MR), static_cast<int>(NR), W, prefetch) + "<" +
                              std::to_string(n.a.strides[0]) + ", " + std::to_string(n.a.strides[1]) + ", " +
                              std::to_string(n.b.strides[0]) + ">";
    const std::string cs0 = std::to_string(n.c.strides[0]), cs1 = std::to_string(n.c.strides[1]);
    const bool keep_always = n.keep.is_const() && n.keep.value() != 0, keep_never = n.keep.is_const() && n.keep.value() == 0;
    const std::string keep = keep_always ? "true" : keep_never ? "false" : "(" + index_text(n.keep) + " != 0)";
    line(depth, "{  // matmul: a " + std::to_string(MR) + " x " + std::to_string(NR) + " register tile");
    line(depth + 1, "const float* mm_a = &" + view_element(n.a, {}) + ";");
    line(depth + 1, "const float* mm_b = &" + view_element(n.b, {}) + ";");
    line(depth + 1, "float* mm_c = &" + view_element(n.c, {}) + ";");
    line(depth + 1, "const float* mm_next = " + (prefetch ? "&" + view_element(n.next, {}) : std::string("mm_a")) + ";");
    line(depth + 1, "const int64_t mm_k = " + index_text(n.k) + ";");
    const std::string call_full = micro + "(mm_k, mm_a, mm_b, mm_c, " + cs0 + ", " + keep + ", mm_next);";
    if (whole && n.c.strides[1] == 1) {
      line(depth + 1, call_full);
      line(depth, "}");
      return true;
    }
    line(depth + 1, "const int64_t mm_m = " + index_text(n.m) + ", mm_n = " + index_text(n.n) + ";");
    if (n.c.strides[1] == 1) {
      line(depth + 1, "if (mm_m == " + std::to_string(MR) + " && mm_n == " + std::to_string(NR) + ") {");
      line(depth + 2, call_full);
      line(depth + 1, "} else {  // an edge tile: computed in full, its valid part merged");
    } else {
      line(depth + 1, "{  // C is strided: the tile is merged element by element");
    }
    line(depth + 2, "alignas(64) float mm_tile[" + std::to_string(MR * NR) + "];");
    line(depth + 2, micro + "(mm_k, mm_a, mm_b, mm_tile, " + std::to_string(NR) + ", false, mm_next);");
    line(depth + 2, "for (int64_t r = 0; r < mm_m; ++r)");
    line(depth + 3, "for (int64_t c = 0; c < mm_n; ++c) {");
    line(depth + 4, "float& out = mm_c[r * " + cs0 + " + c * " + cs1 + "];");
    line(depth + 4, "out = (" + keep + " ? out : 0.0f) + mm_tile[r * " + std::to_string(NR) + " + c];");
    line(depth + 3, "}");
    line(depth + 1, "}");
    line(depth, "}");
    return true;
  }

  // ---- float64 register tiles (the compiled reference) ----
  // A float64 Matmul whose C view is unit-stride along n, with m and n at
  // most MR and NR (NR a multiple of 4, MR x NR / 4 accumulators fitting 16
  // registers), is a call of a micro-kernel of 4-lane GCC vectors (no
  // intrinsics: any ISA; no FMA: `c = c + a * b` under -ffp-contract=off)
  // when the tile is whole, and scalar loops when an edge cuts it. Both
  // compute each element as one serial chain over k, from C when kept and
  // from +0 otherwise: the values of the i-k-j loops and of the dot product
  // they replace (tile/passes/matmul_nests.h), bit for bit.
  bool f64_register_tiled_matmul(const StmtNode& n, int depth) {
    for (const View* v : {&n.a, &n.b, &n.c})
      if (k_.buffers[v->buffer].dtype != DType::F64 || v->strides.size() != 2) return false;
    if (n.c.strides[1] != 1 || n.c.strides[0] < 0 || n.a.strides[0] < 0 || n.a.strides[1] < 0 || n.b.strides[0] < 0 ||
        n.b.strides[1] < 0)
      return false;
    std::optional<Interval> mb = bounds(n.m, ranges_), nb = bounds(n.n, ranges_);
    if (!mb || !nb) return false;
    const int64_t MR = mb->hi, NR = nb->hi;
    if (MR < 1 || NR < 4 || NR % 4 != 0 || MR * (NR / 4) + NR / 4 + 2 > 16) return false;
    const std::string micro = f64_micro_kernel(static_cast<int>(MR), static_cast<int>(NR)) + "<" +
                              std::to_string(n.a.strides[0]) + ", " + std::to_string(n.a.strides[1]) + ", " +
                              std::to_string(n.b.strides[0]) + ", " + std::to_string(n.b.strides[1]) + ">";
    const bool keep_always = n.keep.is_const() && n.keep.value() != 0, keep_never = n.keep.is_const() && n.keep.value() == 0;
    const std::string keep = keep_always ? "true" : keep_never ? "false" : "(" + index_text(n.keep) + " != 0)";
    const std::string as0 = std::to_string(n.a.strides[0]), as1 = std::to_string(n.a.strides[1]);
    const std::string bs0 = std::to_string(n.b.strides[0]), bs1 = std::to_string(n.b.strides[1]);
    const std::string cs0 = std::to_string(n.c.strides[0]);
    line(depth, "{  // matmul: a " + std::to_string(MR) + " x " + std::to_string(NR) + " register tile of doubles");
    line(depth + 1, "const double* mm_a = &" + view_element(n.a, {}) + ";");
    line(depth + 1, "const double* mm_b = &" + view_element(n.b, {}) + ";");
    line(depth + 1, "double* mm_c = &" + view_element(n.c, {}) + ";");
    line(depth + 1, "const int64_t mm_m = " + index_text(n.m) + ", mm_n = " + index_text(n.n) + ", mm_k = " +
                        index_text(n.k) + ";");
    line(depth + 1, "const bool mm_keep = " + keep + ";");
    line(depth + 1, "if (mm_m == " + std::to_string(MR) + " && mm_n == " + std::to_string(NR) + ") {");
    line(depth + 2, micro + "(mm_k, mm_a, mm_b, mm_c, " + cs0 + ", mm_keep);");
    line(depth + 1, "} else {  // an edge tile: each element's chain in scalar code");
    line(depth + 2, "for (int64_t r = 0; r < mm_m; ++r)");
    line(depth + 3, "for (int64_t c = 0; c < mm_n; ++c) {");
    line(depth + 4, "double s = mm_keep ? mm_c[r * " + cs0 + " + c] : 0.0;");
    line(depth + 4, "for (int64_t l = 0; l < mm_k; ++l) s = s + mm_a[r * " + as0 + " + l * " + as1 + "] * mm_b[l * " + bs0 +
                        " + c * " + bs1 + "];");
    line(depth + 4, "mm_c[r * " + cs0 + " + c] = s;");
    line(depth + 3, "}");
    line(depth + 1, "}");
    line(depth, "}");
    return true;
  }

  // The float64 micro-kernel for MR x NR tiles (NR / 4 vectors of 4 lanes per row); its name.
  std::string f64_micro_kernel(int MR, int NR) {
    const std::string name = prefix_ + "dmm" + std::to_string(MR) + "x" + std::to_string(NR);
    if (micro_kernels_.count(name)) return name;
    const int NV = NR / 4;
    std::ostringstream o;
    o << "// " << name << ": a " << MR << " x " << NR << " tile of doubles, C[r * ldc + c] = s with s from\n"
      << "// (keep ? C[r * ldc + c] : +0) then s = s + A(r, k) * B(k, c) for k = 0 .. kb - 1 in order, A(r, k) at\n"
      << "// Ap[r * A_RS + k * A_KS], B(k, c) at Bp[k * B_KS + c * B_NS]: one lane per element, a product and a sum\n"
      << "// per step as the serial loop rounds them (no FMA under -ffp-contract=off).\n"
      << "template <int64_t A_RS, int64_t A_KS, int64_t B_KS, int64_t B_NS>\n"
      << "__attribute__((noinline)) static void " << name
      << "(int64_t kb, const double* __restrict Ap, const double* __restrict Bp, double* __restrict Cp, int64_t ldc,"
      << " bool keep) {\n"
      << "  typedef double v4d __attribute__((vector_size(32)));\n"
      << "  typedef double v4du __attribute__((vector_size(32), aligned(8), may_alias));\n";
    auto acc = [](int r, int v) { return "c" + std::to_string(r) + "_" + std::to_string(v); };
    for (int r = 0; r < MR; ++r) {
      o << "  v4d ";
      for (int v = 0; v < NV; ++v)
        o << acc(r, v) << " = keep ? *(const v4du*)(Cp + " << r << " * ldc + " << 4 * v << ") : v4d{}"
          << (v + 1 < NV ? ", " : ";\n");
    }
    o << "  for (int64_t k = 0; k < kb; ++k) {\n";
    for (int v = 0; v < NV; ++v) {
      o << "    const v4d b" << v << " = B_NS == 1 ? *(const v4du*)(Bp + k * B_KS + " << 4 * v << ") : v4d{";
      for (int l = 0; l < 4; ++l) o << "Bp[k * B_KS + " << 4 * v + l << " * B_NS]" << (l < 3 ? ", " : "};\n");
    }
    for (int r = 0; r < MR; ++r) {
      o << "    { const double s = Ap[" << r << " * A_RS + k * A_KS]; const v4d a = {s, s, s, s};";
      for (int v = 0; v < NV; ++v) o << " " << acc(r, v) << " = " << acc(r, v) << " + a * b" << v << ";";
      o << " }\n";
    }
    o << "  }\n";
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) o << "  *(v4du*)(Cp + " << r << " * ldc + " << 4 * v << ") = " << acc(r, v) << ";\n";
    o << "}\n";
    micro_kernels_[name] = o.str();
    return name;
  }

  // The micro-kernel for MR x NR tiles of W-lane vectors; its name.
  std::string micro_kernel(int MR, int NR, int W, bool prefetch) {
    const std::string name = prefix_ + "mm" + std::to_string(MR) + "x" + std::to_string(NR) + (prefetch ? "p" : "");
    if (micro_kernels_.count(name)) return name;
    std::ostringstream o;
    o << "// " << name << ": a " << MR << " x " << NR << " tile of C from kb steps of an A panel (element (r, k) at\n"
      << "// Ap[r * A_RS + k * A_KS]) and a B panel (" << NR << " contiguous floats per k, row k at Bp + k * B_KS):\n"
      << "// C[r * ldc + c] = (keep ? C[r * ldc + c] : 0) + sum_k A(r, k) * B(k, c). Kept out of line: inlined\n"
      << "// into its caller, the compiler has spilled accumulators of the larger tiles.\n"
      << "template <int64_t A_RS, int64_t A_KS, int64_t B_KS>\n"
      << "__attribute__((noinline)) static void " << name
      << "(int64_t kb, const float* __restrict Ap, const float* __restrict Bp, float* __restrict Cp, int64_t ldc,"
      << " bool keep, const float* next_A) {\n";
    if (W == 1) {
      o << "  float acc[" << MR * NR << "] = {};\n"
        << "  for (int64_t k = 0; k < kb; ++k)\n    for (int r = 0; r < " << MR << "; ++r)\n      for (int c = 0; c < " << NR
        << "; ++c) acc[r * " << NR << " + c] += Ap[r * A_RS + k * A_KS] * Bp[k * B_KS + c];\n"
        << "  (void)next_A;\n  for (int r = 0; r < " << MR << "; ++r)\n    for (int c = 0; c < " << NR
        << "; ++c) Cp[r * ldc + c] = (keep ? Cp[r * ldc + c] : 0.0f) + acc[r * " << NR << " + c];\n}\n";
      micro_kernels_[name] = o.str();
      return name;
    }
    const std::string V = W == 16 ? "__m512" : "__m256", P = W == 16 ? "_mm512_" : "_mm256_";
    const int NV = NR / W;
    auto acc = [](int r, int v) { return "c" + std::to_string(r) + "_" + std::to_string(v); };
    for (int r = 0; r < MR; ++r) {
      o << "  " << V << " ";
      for (int v = 0; v < NV; ++v) o << acc(r, v) << " = " << P << "setzero_ps()" << (v + 1 < NV ? ", " : ";\n");
    }
    if (prefetch) o << "  for (int r = 0; r < " << MR << "; ++r) _mm_prefetch((const char*)(Cp + r * ldc), _MM_HINT_T0);\n";
    o << "#pragma GCC unroll 4\n  for (int64_t k = 0; k < kb; ++k) {\n";
    if (prefetch) o << "    _mm_prefetch((const char*)(next_A + k * " << MR << "), _MM_HINT_T0);\n";
    for (int v = 0; v < NV; ++v) o << "    const " << V << " b" << v << " = " << P << "loadu_ps(Bp + k * B_KS + " << v * W << ");\n";
    for (int r = 0; r < MR; ++r) {
      o << "    { const " << V << " a = " << P << "set1_ps(Ap[" << r << " * A_RS + k * A_KS]);";
      for (int v = 0; v < NV; ++v) o << " " << acc(r, v) << " = " << P << "fmadd_ps(a, b" << v << ", " << acc(r, v) << ");";
      o << " }\n";
    }
    o << "  }\n  if (keep) {\n";
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v)
        o << "    " << acc(r, v) << " = " << P << "add_ps(" << P << "loadu_ps(Cp + " << r << " * ldc + " << v * W << "), " << acc(r, v) << ");\n";
    o << "  }\n";
    if (!prefetch) o << "  (void)next_A;\n";
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) o << "  " << P << "storeu_ps(Cp + " << r << " * ldc + " << v * W << ", " << acc(r, v) << ");\n";
    o << "}\n";
    micro_kernels_[name] = o.str();
    return name;
  }

  // Whether a vectorised loop folds a max or min into a scalar register:
  // `omp simd` has no reduction with combine_step's NaN rule, so outside the
  // vector form such a loop runs as a plain loop.
  bool carries_extremum(const Stmt& loop) const {
    bool found = false;
    visit(loop, [&](const Stmt& s) {
      found |= s.kind() == StmtKind::Accumulate && s->combine != ir::Combine::Sum && in_register(s->buffer) &&
               k_.buffers[s->buffer].shape.empty();
    });
    return found;
  }

  // Scalar Sum accumulators a vectorised loop folds into (declared outside it).
  std::vector<int> simd_reductions(const Stmt& loop) const {
    std::set<int> inside, sums;
    visit(loop, [&](const Stmt& s) {
      if (s.kind() == StmtKind::Alloc) inside.insert(s->buffer);
      if (s.kind() == StmtKind::Accumulate && s->combine == ir::Combine::Sum && in_register(s->buffer) &&
          k_.buffers[s->buffer].shape.empty())
        sums.insert(s->buffer);
    });
    std::vector<int> r;
    for (int b : sums)
      if (!inside.count(b)) r.push_back(b);
    return r;
  }

  // ---- in-register transposes and streaming stores ----
  // A W x W Copy of 4-byte elements (W 8 with 256-bit vectors, 16 with
  // 512-bit ones) that reads along one axis and writes along the other:
  // printed as a call of register_transpose.h's axon_transpose<W>. The
  // source's row stride ss and the destination's ds; width 0 otherwise.
  struct Transpose {
    int width = 0;
    int64_t ss = 0, ds = 0;
    bool streaming = false;  // stores past the caches (rows aligned to the vector)
  };
  Transpose transpose_of(const StmtNode& n) const {
    Transpose t;
    if (n.kind != StmtKind::Copy || n.extents.size() != 2 || n.extents[0] != n.extents[1]) return t;
    const int w = static_cast<int>(n.extents[0]);
    if (!((w == 8 && o_.vector_bits >= 256) || (w == 16 && o_.vector_bits >= 512))) return t;
    const DType d = k_.buffers[n.c.buffer].dtype;
    if (ir::dtype_bytes(d) != 4 || k_.buffers[n.a.buffer].dtype != d || d == DType::Bool) return t;
    const std::vector<int64_t>&cs = n.c.strides, &as = n.a.strides;
    if (as[0] == 1 && cs[1] == 1 && as[1] != 1) t = {w, as[1], cs[0], false};
    else if (as[1] == 1 && cs[0] == 1 && as[0] != 1) t = {w, as[0], cs[1], false};
    else return t;
    t.streaming = n.streaming && t.ds % w == 0;
    return t;
  }
  // Whether `s` holds streaming stores: transposes, or Stores of the vector form.
  bool streams(const Stmt& s) const {
    bool found = false;
    visit(s, [&](const Stmt& x) {
      found |= (x.kind() == StmtKind::Copy && transpose_of(x.node()).streaming) ||
               (x.kind() == StmtKind::Store && x->streaming && o_.vector_bits > 0);
    });
    return found;
  }
  // The OpenMP schedule of a Parallel loop: an even static split, or chunks dealt in turn.
  static std::string omp_schedule(const StmtNode& n) {
    return n.chunk > 0 ? "schedule(static, " + std::to_string(n.chunk) + ")" : "schedule(static)";
  }
  void transpose(const StmtNode& n, const Transpose& t, int depth) {
    const std::string w = std::to_string(t.width);
    const std::string src = "reinterpret_cast<const float*>(&" + view_element(n.a, {}) + ")";
    const std::string dst = "reinterpret_cast<float*>(&" + view_element(n.c, {}) + ")";
    const std::string args = ", " + std::to_string(t.ss) + ", ";
    transposes_[t.width] |= t.streaming;
    if (!t.streaming) {
      line(depth, "axon_transpose" + w + "(" + src + args + dst + ", " + std::to_string(t.ds) + ");");
      return;
    }
    // Streamed where the block's rows are aligned to the vector (whole lines
    // for 16 x 16), stored normally where the caller's buffer is not.
    if (parallel_depth_ == 0) fence_at_end_ = true;
    line(depth, "{");
    line(depth + 1, "float* axon_d = " + dst + ";");
    line(depth + 1, "if (reinterpret_cast<uintptr_t>(axon_d) % " + std::to_string(4 * t.width) + " == 0) axon_transpose" + w +
                        "_nt(" + src + args + "axon_d, " + std::to_string(t.ds) + ");");
    line(depth + 1, "else axon_transpose" + w + "(" + src + args + "axon_d, " + std::to_string(t.ds) + ");");
    line(depth, "}");
  }
  // How many Parallel loops, `s` first, are perfectly nested with constant
  // extents and the same threads: printed as one `collapse` loop.
  static int collapsible(const Stmt& s) {
    int k = 1;
    for (Stmt x = s; x->body.at(0).kind() == StmtKind::For; x = x->body.at(0), ++k) {
      const Stmt& in = x->body.at(0);
      if (in->loop != LoopKind::Parallel || in->threads != s->threads || !in->extent.is_const() || !x->extent.is_const()) break;
    }
    return k;
  }

  // A Parallel loop whose body starts by allocating Scratch buffers: one
  // parallel region in which each thread allocates them once, then shares
  // the iterations (`omp for`). Each iteration writes the scratch before
  // reading it (tile/verify.h), so reusing it across iterations is safe.
  // With streaming stores inside, each thread fences its own after its
  // share (`nowait`, then the fence before the region's barrier).
  bool parallel_with_scratch(const Stmt& s, int depth, const std::string& ext) {
    const StmtNode& n = s.node();
    const Stmt& b = n.body.at(0);
    if (b.kind() != StmtKind::Seq) return false;
    size_t lead = 0;
    while (lead < b->body.size() && b->body[lead].kind() == StmtKind::Alloc &&
           k_.buffers[b->body[lead]->buffer].scope == Scope::Scratch)
      ++lead;
    if (lead == 0) return false;
    line(depth, "#pragma omp parallel" + (n.threads > 0 ? " num_threads(" + std::to_string(n.threads) + ")" : std::string()));
    line(depth, "{");
    for (size_t i = 0; i < lead; ++i) declare(b->body[i]->buffer, depth + 1, "");
    const bool fence = streams(s);
    line(depth + 1, "#pragma omp for " + omp_schedule(n) + (fence ? " nowait" : ""));
    line(depth + 1, "for (int64_t " + n.var + " = 0; " + n.var + " < " + ext + "; ++" + n.var + ") {");
    for (size_t i = lead; i < b->body.size(); ++i) stmt(b->body[i], depth + 2);
    line(depth + 1, "}");
    if (fence) line(depth + 1, "_mm_sfence();  // this thread's streamed stores, before the region's barrier");
    line(depth, "}");
    return true;
  }

  void stmt(const Stmt& s, int depth) {
    const StmtNode& n = s.node();
    switch (n.kind) {
      case StmtKind::Seq: {
        // Every Seq but the kernel's body is a C++ block when it allocates:
        // its buffers end with it (as tile/verify.h has it), so a sibling
        // may allocate the same buffer again.
        bool scope = &n != &k_.body.node() && std::any_of(n.body.begin(), n.body.end(), [](const Stmt& c) {
                       return c.kind() == StmtKind::Alloc;
                     });
        if (scope) line(depth++, "{");
        for (size_t i = 0; i < n.body.size(); ++i) {
          const Stmt& c = n.body[i];
          // alloc of a scalar register + its first store: one declaration.
          if (c.kind() == StmtKind::Alloc && in_register(c->buffer) && k_.buffers[c->buffer].shape.empty() &&
              i + 1 < n.body.size() && n.body[i + 1].kind() == StmtKind::Store && n.body[i + 1]->buffer == c->buffer &&
              !n.body[i + 1]->value.uses_buffer(c->buffer)) {
            declare(c->buffer, depth, value(n.body[i + 1]->value).expr());
            ++i;
            continue;
          }
          stmt(c, depth);
        }
        if (scope) line(--depth, "}");
        return;
      }
      case StmtKind::For: {
        if (n.loop == LoopKind::GpuBlock || n.loop == LoopKind::GpuThread)
          throw InternalError(std::string("the CPU printer cannot run a ") + loop_kind_name(n.loop) + " loop (" + n.var + ")");
        std::optional<Interval> e = bounds(n.extent, ranges_);
        ranges_[n.var] = Interval{0, e ? std::max<int64_t>(e->hi - 1, 0) : 0};
        const std::string ext = n.extent.is_const() ? std::to_string(n.extent.value()) : c_text(n.extent);
        if (n.loop == LoopKind::Parallel && collapsed_ > 0) {
          // An inner loop of a collapsed nest: the outermost's pragma covers it.
          --collapsed_;
          line(depth, "for (int64_t " + n.var + " = 0; " + n.var + " < " + ext + "; ++" + n.var + ") {");
          stmt(n.body.at(0), depth + 1);
          line(depth, "}");
          ranges_.erase(n.var);
          return;
        }
        if (n.loop == LoopKind::Parallel) {
          ++parallel_depth_;
          const bool done = parallel_with_scratch(s, depth, ext);
          --parallel_depth_;
          if (done) {
            ranges_.erase(n.var);
            return;
          }
        }
        if (n.loop == LoopKind::Parallel) {
          const int k = collapsible(s);
          collapsed_ = k - 1;
          const std::string threads = n.threads > 0 ? " num_threads(" + std::to_string(n.threads) + ")" : "";
          const std::string collapse = k > 1 ? " collapse(" + std::to_string(k) + ")" : "";
          ++parallel_depth_;
          if (streams(s)) {
            // Each thread fences its own streaming stores before the
            // region's closing barrier (a fence orders only its thread's).
            line(depth, "#pragma omp parallel" + threads);
            line(depth, "{");
            line(depth, "#pragma omp for " + omp_schedule(n) + collapse + " nowait");
            line(depth, "for (int64_t " + n.var + " = 0; " + n.var + " < " + ext + "; ++" + n.var + ") {");
            stmt(n.body.at(0), depth + 1);
            line(depth, "}");
            line(depth, "_mm_sfence();");
            line(depth, "}");
          } else {
            line(depth, "#pragma omp parallel for " + omp_schedule(n) + collapse + threads);
            line(depth, "for (int64_t " + n.var + " = 0; " + n.var + " < " + ext + "; ++" + n.var + ") {");
            stmt(n.body.at(0), depth + 1);
            line(depth, "}");
          }
          --parallel_depth_;
          ranges_.erase(n.var);
          return;
        }
        if (n.loop == LoopKind::Vectorized && o_.vector_bits > 0 && vector_loop(s, depth)) {
          ranges_.erase(n.var);
          return;
        }
        if (n.loop == LoopKind::Vectorized && !carries_extremum(s)) {
          std::string clause;
          for (int b : simd_reductions(s)) clause += (clause.empty() ? " reduction(+:" : ", ") + names_[b];
          line(depth, "#pragma omp simd" + clause + (clause.empty() ? "" : ")"));
        }
        if (n.loop == LoopKind::Unrolled) line(depth, "#pragma GCC unroll " + std::string(n.extent.is_const() && n.extent.value() <= 16 ? std::to_string(n.extent.value()) : "4"));
        line(depth, "for (int64_t " + n.var + " = 0; " + n.var + " < " + ext + "; ++" + n.var + ") {");
        stmt(n.body.at(0), depth + 1);
        line(depth, "}");
        ranges_.erase(n.var);
        return;
      }
      case StmtKind::Store:
        line(depth, element(n.buffer, n.idx) + " = " + stored(n.buffer, value(n.value)) + ";" +
                        (n.streaming ? "  // streaming" : ""));
        return;
      case StmtKind::Accumulate: {
        CScalar next = ir::combine_step<CScalar>(n.combine, current(n.buffer, n.idx), value(n.value));
        line(depth, element(n.buffer, n.idx) + " = " + stored(n.buffer, next) + ";");
        return;
      }
      case StmtKind::Rescale: {
        CScalar next = current(n.buffer, n.idx) * value(n.alpha) + value(n.value);
        line(depth, element(n.buffer, n.idx) + " = " + stored(n.buffer, next) + ";");
        return;
      }
      case StmtKind::Matmul: {
        for (const View* v : {&n.a, &n.b, &n.c}) {
          DType d = k_.buffers[v->buffer].dtype;
          if (d != DType::F32 && d != DType::F64)
            throw InternalError("tile_cpp: a Matmul of " + std::string(ir::dtype_name(d)) + " values has no C++ form yet");
        }
        if (register_tiled_matmul(n, depth) || f64_register_tiled_matmul(n, depth)) return;
        // The scalar form.
        const std::string i = "mm_i", j = "mm_j", l = "mm_l";
        auto hi = [&](const Index& e) { std::optional<Interval> r = bounds(e, ranges_); return r ? r->hi : 0; };
        const std::string m = index_text(n.m), nn = index_text(n.n), kk = index_text(n.k);
        ranges_[i] = {0, std::max<int64_t>(hi(n.m) - 1, 0)};
        ranges_[j] = {0, std::max<int64_t>(hi(n.n) - 1, 0)};
        ranges_[l] = {0, std::max<int64_t>(hi(n.k) - 1, 0)};
        const bool overwrite = !(n.keep.is_const() && n.keep.value() != 0);
        if (overwrite) {
          line(depth, "if (" + index_text(n.keep) + " == 0)");
          line(depth + 1, "for (int64_t " + i + " = 0; " + i + " < " + m + "; ++" + i + ")");
          line(depth + 2, "for (int64_t " + j + " = 0; " + j + " < " + nn + "; ++" + j + ") " + view_element(n.c, {i, j}) + " = 0;");
        }
        line(depth, "for (int64_t " + i + " = 0; " + i + " < " + m + "; ++" + i + ")");
        line(depth + 1, "for (int64_t " + l + " = 0; " + l + " < " + kk + "; ++" + l + ")");
        line(depth + 2, "for (int64_t " + j + " = 0; " + j + " < " + nn + "; ++" + j + ")");
        line(depth + 3, view_element(n.c, {i, j}) + " += " + view_element(n.a, {i, l}) + " * " + view_element(n.b, {l, j}) + ";");
        ranges_.erase(i);
        ranges_.erase(j);
        ranges_.erase(l);
        return;
      }
      case StmtKind::Copy: {
        const DType d = k_.buffers[n.c.buffer].dtype;
        if (Transpose t = transpose_of(n); t.width > 0) return transpose(n, t, depth);
        if (n.extents.size() == 1 && n.c.strides[0] == 1 && n.a.strides[0] == 1) {
          line(depth, "std::memcpy(&" + view_element(n.c, {}) + ", &" + view_element(n.a, {}) + ", " +
                          std::to_string(n.extents[0]) + " * sizeof(" + ir::dtype_c_type(d) + "));");
          return;
        }
        std::vector<std::string> vars;
        for (size_t a = 0; a < n.extents.size(); ++a) {
          vars.push_back("cp" + std::to_string(a));
          ranges_[vars.back()] = {0, n.extents[a] - 1};
          line(depth + static_cast<int>(a), "for (int64_t " + vars.back() + " = 0; " + vars.back() + " < " +
                                                std::to_string(n.extents[a]) + "; ++" + vars.back() + ")");
        }
        line(depth + static_cast<int>(vars.size()), view_element(n.c, vars) + " = " + view_element(n.a, vars) + ";");
        for (const std::string& v : vars) ranges_.erase(v);
        return;
      }
      case StmtKind::Prefetch: line(depth, prefetch_text(n.buffer, n.idx, n.ahead, n.temporal)); return;
      case StmtKind::Alloc: declare(n.buffer, depth, ""); return;
      case StmtKind::Free:
        if (k_.buffers[n.buffer].scope == Scope::Memory) line(depth, names_[n.buffer] + "_buf.reset();");
        return;
      case StmtKind::Comment: line(depth, "// " + comment_text(n.text)); return;
    }
  }

  const Kernel& k_;
  TileCppOptions o_;
  int vector_loops_ = 0;  // loops printed in the vector form (they need the vector helpers)
  std::map<int, bool> transposes_;  // widths of the register transposes printed: with streaming stores?
  int collapsed_ = 0;       // inner loops of a collapsed parallel nest still to print
  int parallel_depth_ = 0;  // parallel loops around the statement printed
  bool fence_at_end_ = false;  // streaming stores outside parallel loops
  std::map<std::string, std::string> micro_kernels_;  // by name: the definitions Matmuls call
  std::string prefix_ = "axon_";                       // of the helpers' names
  std::vector<std::string> names_;
  std::map<std::string, Interval> ranges_;
  std::ostringstream out_;
};

// kernel.cpp: the description, kernel.h's include, what the body needs, and
// the entry with the ABI's definition.
KernelSource compose(const Kernel& k, const KernelAbi& abi, const std::string& what, const TileCppOptions& o) {
  CppPrinter p(k, &abi, o);
  p.print_body();
  KernelSource ks;
  ks.entry = abi.entry;
  ks.header = abi.header;
  std::string s;
  s += "// kernel.cpp: " + abi.entry + ", " + what + " generated by axon from its tile program.\n";
  s += "// Plain C++ with OpenMP pragmas; it needs nothing but kernel.h and the\n";
  s += "// C++ standard library.\n";
  s += "#include \"kernel.h\"\n\n";
  s += p.preamble();
  s += abi.definition + " {\n" + p.body() + "}\n";
  ks.source = std::move(s);
  return ks;
}

// The ABI of a kernel that is no graph's: made from its Input and Output
// buffers (names, dtypes, shapes), its name the entry.
KernelAbi buffers_abi(const Kernel& k) {
  std::vector<ir::ParamInfo> params(static_cast<size_t>(std::count_if(k.buffers.begin(), k.buffers.end(), [](const Buffer& b) {
    return b.scope == Scope::Input;
  })));
  std::vector<ir::Type> outputs(static_cast<size_t>(std::count_if(k.buffers.begin(), k.buffers.end(), [](const Buffer& b) {
    return b.scope == Scope::Output;
  })));
  for (const Buffer& b : k.buffers) {
    if (b.scope == Scope::Input) params.at(static_cast<size_t>(b.param)) = {b.name, ir::Type{b.dtype, b.shape}};
    if (b.scope == Scope::Output) outputs.at(static_cast<size_t>(b.output)) = ir::Type{b.dtype, b.shape};
  }
  return make_kernel_abi(k.name.empty() ? "run" : k.name, params, outputs);
}


}  // namespace

KernelSource print_tile_cpp(const Kernel& k, const ir::Graph& g, const std::string& what, const TileCppOptions& o) {
  return compose(k, make_kernel_abi(g), what, o);
}

KernelSource print_tile_cpp(const Kernel& k, const std::string& what, const TileCppOptions& o) {
  return compose(k, buffers_abi(k), what, o);
}

KernelSource print_tile_unit(const KernelAbi& abi, const std::vector<UnitKernel>& kernels,
                             const std::vector<UnitBuffer>& temps, const std::vector<UnitCopy>& copies,
                             const std::string& what) {
  CppPrinter::Needs needs;
  std::string defs;
  std::ostringstream calls;
  for (const UnitKernel& u : kernels) {
    const KernelAbi own = buffers_abi(u.program);
    AXON_CHECK(u.args.size() == own.param_names.size() + own.output_names.size())
        << u.title << ": " << u.args.size() << " arguments for " << own.param_names.size() << " inputs and "
        << own.output_names.size() << " outputs";
    CppPrinter p(u.program, &own, u.options);
    p.print_body();
    needs.merge(p.needs());
    defs += "\n// ---- " + comment_text(u.title) + " ----\nnamespace " + u.ns + " {\n" + p.micro_kernels() +
            "static void run(" + own.parameters + ") {\n" + p.body() + "}\n}  // namespace " + u.ns + "\n";
    calls << "  // " << comment_text(u.title) << "\n  " << u.ns << "::run(";
    for (size_t i = 0; i < u.args.size(); ++i) calls << (i ? ", " : "") << u.args[i];
    calls << ");\n";
  }
  std::ostringstream body;
  for (const std::string& n : abi.param_names) body << "  (void)" << n << ";\n";
  for (const UnitBuffer& t : temps) {
    const std::string ct = ir::dtype_c_type(t.dtype);
    body << "  " << ct << "* " << t.name << " = static_cast<" << ct << "*>(axon_alloc("
         << t.elements * ir::dtype_bytes(t.dtype) << "));\n";
  }
  body << calls.str();
  for (const UnitCopy& c : copies) body << "  std::memcpy(" << c.dst << ", " << c.src << ", " << c.bytes << ");\n";
  for (const UnitBuffer& t : temps) body << "  std::free(" << t.name << ");\n";
  KernelSource ks;
  ks.entry = abi.entry;
  ks.header = abi.header;
  std::string src = "// kernel.cpp: " + abi.entry + ", " + what + " generated by axon: " + std::to_string(kernels.size()) +
                    " kernel(s) of the tile IR, each in its own namespace, called in order by the entry at the end.\n";
  src += "#include \"kernel.h\"\n\n";
  src += CppPrinter::helpers(needs);
  src += "namespace {\n// A 64-byte aligned buffer for a value between kernels.\n"
         "void* axon_alloc(std::size_t bytes) {\n"
         "  return std::aligned_alloc(64, (bytes + 63) / 64 * 64);\n}\n}  // namespace\n";
  src += defs;
  src += "\n" + abi.definition + " {\n" + body.str() + "}\n";
  ks.source = std::move(src);
  return ks;
}

std::string print_tile_function(const Kernel& k, const std::string& fn, const TileCppOptions& o) {
  CppPrinter p(k, nullptr, o, fn + "_");
  p.print_body();
  std::vector<std::string> ins, outs;
  for (const Buffer& b : k.buffers) {
    std::vector<std::string>* list = b.scope == Scope::Input ? &ins : b.scope == Scope::Output ? &outs : nullptr;
    if (!list) continue;
    const size_t pos = static_cast<size_t>(b.scope == Scope::Input ? b.param : b.output);
    if (pos >= list->size()) list->resize(pos + 1);
    (*list)[pos] = std::string(b.scope == Scope::Input ? "const " : "") + ir::dtype_c_type(b.dtype) + "* " + b.name;
  }
  std::string decl;
  ins.insert(ins.end(), outs.begin(), outs.end());
  for (size_t i = 0; i < ins.size(); ++i) decl += (i ? ", " : "") + ins[i];
  return p.preamble() + "static void " + fn + "(" + decl + ") {\n" + p.body() + "}\n";
}

}  // namespace axon::codegen
