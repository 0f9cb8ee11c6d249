// emit_row_kernel_cpp: instantiates element_def.h's body with VExpr, a
// symbolic scalar that prints ISA-generic C++ (GCC vector operators for
// + - * /, overloaded axon_* helpers for the rest), once per loop flavour:
// the full-vector loop, the masked AVX-512 tail, and scalar code for
// per-row values and AVX2/scalar tails. A step over several vectors (the
// reductions' four chains, the output pass's unroll) prints VExprs of a
// tuple type, axon_t<V, N>, whose instructions interleave (docs/loop_ir.md,
// "Interleaved vectors").
#include "codegen/cpu/row_kernel_cpp.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "codegen/c_like/kernel_abi.h"
#include "codegen/cpu/vector_math.h"
#include "ir/element_def.h"
#include "ir/printer.h"
#include "support/diagnostic.h"

namespace axon::codegen {

using namespace axon::ir;
using loop::Level;

namespace {

// How a loop body reads, writes and broadcasts.
enum class Flavor { V512, V512Masked, V256, Scalar };

// n > 1: a tuple of n vectors of flavour f (V256 or V512), one value that the
// tuple helpers below and vector_math.h's axon_t overloads act on lane by lane.
std::string vtype(Flavor f, int n = 1) {
  const std::string v = f == Flavor::Scalar ? "float" : f == Flavor::V256 ? "__m256" : "__m512";
  return n > 1 ? "axon_t<" + v + ", " + std::to_string(n) + ">" : v;
}
// The tuple helpers' suffix: the vector width, and the tuple size.
std::string tsuffix(Flavor f, int n) { return std::string(f == Flavor::V256 ? "256" : "512") + "<" + std::to_string(n) + ">"; }
int lanes(Flavor f) { return f == Flavor::Scalar ? 1 : f == Flavor::V256 ? 8 : 16; }
std::string splat(Flavor f, const std::string& x, int n = 1) {
  if (n > 1) return "axon_tsplat" + tsuffix(f, n) + "(" + x + ")";
  switch (f) {
    case Flavor::V512:
    case Flavor::V512Masked: return "_mm512_set1_ps(" + x + ")";
    case Flavor::V256: return "_mm256_set1_ps(" + x + ")";
    default: return x;
  }
}
std::string load(Flavor f, const std::string& p, int n = 1) {
  if (n > 1) return "axon_tloadu" + tsuffix(f, n) + "(" + p + ")";
  switch (f) {
    case Flavor::V512: return "_mm512_loadu_ps(" + p + ")";
    case Flavor::V512Masked: return "_mm512_maskz_loadu_ps(m, " + p + ")";
    case Flavor::V256: return "_mm256_loadu_ps(" + p + ")";
    default: return "(" + p + ")[0]";
  }
}

// A bool buffer read as the truth values 1.0f / 0.0f.
std::string load_bool(Flavor f, const std::string& p, int n = 1) {
  if (n > 1) return "axon_tload_bool" + tsuffix(f, n) + "(" + p + ")";
  const std::string bytes = "reinterpret_cast<const __m128i*>(" + p + ")";
  switch (f) {
    case Flavor::V512: return "_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(" + bytes + ")))";
    case Flavor::V512Masked: return "_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, " + p + ")))";
    case Flavor::V256: return "_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(" + bytes + ")))";
    default: return "static_cast<float>((" + p + ")[0])";
  }
}

std::string float_literal(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) return "NAN";
  if (std::isinf(f)) return f > 0 ? "INFINITY" : "(-INFINITY)";
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", static_cast<double>(f));
  std::string s = b;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return "(" + s + "f)";
}

// A value of the loop body being printed: C++ text of type vtype(f).
struct VExpr {
  std::string s;
  Flavor f = Flavor::Scalar;
  bool lit = false;
  double v = 0;
  int n = 1;  // > 1: a tuple of n vectors
};
VExpr mk(const VExpr& like, std::string s) { return VExpr{std::move(s), like.f, false, 0, like.n}; }
VExpr call(const char* fn, const VExpr& a) { return mk(a, std::string(fn) + "(" + a.s + ")"); }
VExpr call(const char* fn, const VExpr& a, const VExpr& b) { return mk(a, std::string(fn) + "(" + a.s + ", " + b.s + ")"); }

VExpr operator+(const VExpr& a, const VExpr& b) { return mk(a, "(" + a.s + " + " + b.s + ")"); }
VExpr operator-(const VExpr& a, const VExpr& b) { return mk(a, "(" + a.s + " - " + b.s + ")"); }
VExpr operator*(const VExpr& a, const VExpr& b) { return mk(a, "(" + a.s + " * " + b.s + ")"); }
VExpr operator/(const VExpr& a, const VExpr& b) { return mk(a, "(" + a.s + " / " + b.s + ")"); }
VExpr operator-(const VExpr& a) { return mk(a, "(-" + a.s + ")"); }
VExpr exp(const VExpr& a) { return call("axon_vexp", a); }
VExpr log(const VExpr& a) { return call("axon_vlog", a); }
VExpr sqrt(const VExpr& a) { return call("axon_vsqrt", a); }
VExpr tanh(const VExpr& a) { return call("axon_vtanh", a); }
VExpr sin(const VExpr& a) { return call("axon_lsin", a); }
VExpr cos(const VExpr& a) { return call("axon_lcos", a); }
VExpr floor(const VExpr& a) { return call("axon_lfloor", a); }
VExpr abs_of(const VExpr& a) { return call("axon_labs", a); }
VExpr make_scalar(double v, const VExpr& like) {
  VExpr e = mk(like, splat(like.f, float_literal(v), like.n));
  e.lit = true;
  e.v = static_cast<float>(v);
  return e;
}
VExpr pow_of(const VExpr& a, const VExpr& b) {
  // Small literal exponents as products: what numpy's x**2 means, exactly rounded the same way.
  if (b.lit && b.v == 1) return a;
  if (b.lit && b.v == 2) return a * a;
  if (b.lit && b.v == 3) return a * a * a;
  if (b.lit && b.v == 0.5) return sqrt(a);
  if (b.lit && b.v == -1) return make_scalar(1, a) / a;
  return call("axon_lpow", a, b);
}
VExpr lt(const VExpr& a, const VExpr& b) { return call("axon_lt", a, b); }
VExpr le(const VExpr& a, const VExpr& b) { return call("axon_le", a, b); }
VExpr gt(const VExpr& a, const VExpr& b) { return call("axon_gt", a, b); }
VExpr ge(const VExpr& a, const VExpr& b) { return call("axon_ge", a, b); }
VExpr eq(const VExpr& a, const VExpr& b) { return call("axon_eq", a, b); }
VExpr ne(const VExpr& a, const VExpr& b) { return call("axon_ne", a, b); }
VExpr logical_and(const VExpr& a, const VExpr& b) { return call("axon_land", a, b); }
VExpr logical_or(const VExpr& a, const VExpr& b) { return call("axon_lor", a, b); }
VExpr logical_not(const VExpr& a) { return call("axon_lnot", a); }
VExpr is_nan(const VExpr& a) { return call("axon_lisnan", a); }
VExpr where(const VExpr& c, const VExpr& a, const VExpr& b) {
  return mk(a, "axon_lwhere(" + c.s + ", " + a.s + ", " + b.s + ")");
}
VExpr cast_to(DType to, const VExpr& a) {
  // Truth is 1.0f / 0.0f in every flavour, so f32 <-> bool casts are compares.
  if (to == DType::Bool) return ne(a, make_scalar(0, a));
  AXON_CHECK(to == DType::F32) << "row kernels are f32";
  return a;
}

// Helpers the printed bodies call, per vector type; the generic ones work lane by lane.
const char* kHelpersScalar = R"(
static inline float axon_lt(float a, float b) { return a < b ? 1.f : 0.f; }
static inline float axon_le(float a, float b) { return a <= b ? 1.f : 0.f; }
static inline float axon_gt(float a, float b) { return a > b ? 1.f : 0.f; }
static inline float axon_ge(float a, float b) { return a >= b ? 1.f : 0.f; }
static inline float axon_eq(float a, float b) { return a == b ? 1.f : 0.f; }
static inline float axon_ne(float a, float b) { return a != b ? 1.f : 0.f; }
static inline float axon_lisnan(float a) { return std::isnan(a) ? 1.f : 0.f; }
static inline float axon_land(float a, float b) { return (a != 0.f && b != 0.f) ? 1.f : 0.f; }
static inline float axon_lor(float a, float b) { return (a != 0.f || b != 0.f) ? 1.f : 0.f; }
static inline float axon_lnot(float a) { return a != 0.f ? 0.f : 1.f; }
static inline float axon_lwhere(float c, float a, float b) { return c != 0.f ? a : b; }
// Lane-wise fallbacks for ops without a vector routine (rare in row kernels).
template <class V, class F> static inline V axon_lanes(V x, F f) {
  float t[sizeof(V) / sizeof(float)];
  std::memcpy(t, &x, sizeof x);
  for (float& e : t) e = f(e);
  std::memcpy(&x, t, sizeof x);
  return x;
}
template <class V> static inline V axon_lsin(V x) { return axon_lanes(x, [](float a) { return std::sin(a); }); }
template <class V> static inline V axon_lcos(V x) { return axon_lanes(x, [](float a) { return std::cos(a); }); }
template <class V> static inline V axon_lfloor(V x) { return axon_lanes(x, [](float a) { return std::floor(a); }); }
template <class V> static inline V axon_labs(V x) { return axon_lanes(x, [](float a) { return std::fabs(a); }); }
template <class V> static inline V axon_lpow(V x, V y) {
  float a[sizeof(V) / sizeof(float)], b[sizeof(V) / sizeof(float)];
  std::memcpy(a, &x, sizeof x);
  std::memcpy(b, &y, sizeof y);
  for (size_t i = 0; i < sizeof(V) / sizeof(float); ++i) a[i] = std::pow(a[i], b[i]);
  std::memcpy(&x, a, sizeof x);
  return x;
}
)";

const char* kHelpers256 = R"(
#define AXON_CMP256(name, pred) \
  static inline __m256 name(__m256 a, __m256 b) { return _mm256_and_ps(_mm256_cmp_ps(a, b, pred), _mm256_set1_ps(1.f)); }
AXON_CMP256(axon_lt, _CMP_LT_OQ)
AXON_CMP256(axon_le, _CMP_LE_OQ)
AXON_CMP256(axon_gt, _CMP_GT_OQ)
AXON_CMP256(axon_ge, _CMP_GE_OQ)
AXON_CMP256(axon_eq, _CMP_EQ_OQ)
AXON_CMP256(axon_ne, _CMP_NEQ_UQ)
static inline __m256 axon_truth(__m256 c) { return _mm256_cmp_ps(c, _mm256_setzero_ps(), _CMP_NEQ_UQ); }
static inline __m256 axon_lisnan(__m256 a) { return _mm256_and_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_set1_ps(1.f)); }
static inline __m256 axon_land(__m256 a, __m256 b) { return _mm256_and_ps(_mm256_and_ps(axon_truth(a), axon_truth(b)), _mm256_set1_ps(1.f)); }
static inline __m256 axon_lor(__m256 a, __m256 b) { return _mm256_and_ps(_mm256_or_ps(axon_truth(a), axon_truth(b)), _mm256_set1_ps(1.f)); }
static inline __m256 axon_lnot(__m256 a) { return _mm256_andnot_ps(axon_truth(a), _mm256_set1_ps(1.f)); }
static inline __m256 axon_lwhere(__m256 c, __m256 a, __m256 b) { return _mm256_blendv_ps(b, a, axon_truth(c)); }
)";

const char* kHelpers512 = R"(
#define AXON_CMP512(name, pred) \
  static inline __m512 name(__m512 a, __m512 b) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(a, b, pred), _mm512_set1_ps(1.f)); }
AXON_CMP512(axon_lt, _CMP_LT_OQ)
AXON_CMP512(axon_le, _CMP_LE_OQ)
AXON_CMP512(axon_gt, _CMP_GT_OQ)
AXON_CMP512(axon_ge, _CMP_GE_OQ)
AXON_CMP512(axon_eq, _CMP_EQ_OQ)
AXON_CMP512(axon_ne, _CMP_NEQ_UQ)
static inline __mmask16 axon_truth(__m512 c) { return _mm512_cmp_ps_mask(c, _mm512_setzero_ps(), _CMP_NEQ_UQ); }
static inline __m512 axon_lisnan(__m512 a) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), _mm512_set1_ps(1.f)); }
static inline __m512 axon_land(__m512 a, __m512 b) { return _mm512_maskz_mov_ps(axon_truth(a) & axon_truth(b), _mm512_set1_ps(1.f)); }
static inline __m512 axon_lor(__m512 a, __m512 b) { return _mm512_maskz_mov_ps(axon_truth(a) | axon_truth(b), _mm512_set1_ps(1.f)); }
static inline __m512 axon_lnot(__m512 a) { return _mm512_maskz_mov_ps((__mmask16)~axon_truth(a), _mm512_set1_ps(1.f)); }
static inline __m512 axon_lwhere(__m512 c, __m512 a, __m512 b) { return _mm512_mask_blend_ps(axon_truth(c), b, a); }
)";

const char* kHelpersTuple = R"(
// Tuples of vectors (axon_t and AXON_T_EACH, defined with the vector math):
// arithmetic and the helpers above lane by lane. The loops have a constant
// trip count and unroll, so a tuple is N registers and each step is printed
// N times.
#define AXON_T_OP(op)                                                                     \
  template <class V, int N> static inline __attribute__((always_inline)) axon_t<V, N> operator op(axon_t<V, N> a, axon_t<V, N> b) { \
    AXON_T_EACH(a.v[i] = a.v[i] op b.v[i]) return a;                                      \
  }
AXON_T_OP(+) AXON_T_OP(-) AXON_T_OP(*) AXON_T_OP(/)
template <class V, int N> static inline axon_t<V, N> operator-(axon_t<V, N> a) { AXON_T_EACH(a.v[i] = -a.v[i]) return a; }
#define AXON_T_FN1(name) \
  template <class V, int N> static inline axon_t<V, N> name(axon_t<V, N> a) { AXON_T_EACH(a.v[i] = name(a.v[i])) return a; }
#define AXON_T_FN2(name)                                                                   \
  template <class V, int N> static inline axon_t<V, N> name(axon_t<V, N> a, axon_t<V, N> b) { \
    AXON_T_EACH(a.v[i] = name(a.v[i], b.v[i])) return a;                                   \
  }
AXON_T_FN2(axon_lt) AXON_T_FN2(axon_le) AXON_T_FN2(axon_gt) AXON_T_FN2(axon_ge) AXON_T_FN2(axon_eq) AXON_T_FN2(axon_ne)
AXON_T_FN2(axon_land) AXON_T_FN2(axon_lor) AXON_T_FN1(axon_lisnan) AXON_T_FN1(axon_lnot)
template <class V, int N> static inline axon_t<V, N> axon_lwhere(axon_t<V, N> c, axon_t<V, N> a, axon_t<V, N> b) {
  AXON_T_EACH(a.v[i] = axon_lwhere(c.v[i], a.v[i], b.v[i])) return a;
}
)";

// The tuple loads, stores (streamed where aligned) and splat of one vector
// width: N consecutive vectors at p.
std::string tuple_memory_helpers(int bits) {
  const std::string w = std::to_string(bits), t = "axon_t<__m" + w + ", N>", mm = "_mm" + w;
  const std::string at = "p + " + std::to_string(bits / 32) + " * i", align = std::to_string(bits / 8 - 1);
  const std::string widen = bits == 256 ? "_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64("
                                        : "_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(";
  const std::string head = "template <int N> static inline ";
  std::string s = head + t + " axon_tsplat" + w + "(float x) { " + t + " r; AXON_T_EACH(r.v[i] = " + mm +
                  "_set1_ps(x)) return r; }\n";
  for (const std::string kind : {"loadu", "load"})
    s += head + t + " axon_t" + kind + w + "(const float* p) { " + t + " r; AXON_T_EACH(r.v[i] = " + mm + "_" + kind +
         "_ps(" + at + ")) return r; }\n";
  s += "template <int N, class P> static inline " + t + " axon_tload_bool" + w + "(const P* p) { " + t +
       " r; AXON_T_EACH(r.v[i] = " + widen + "reinterpret_cast<const __m128i*>(" + at + "))))) return r; }\n";
  for (const std::string kind : {"storeu", "store"})
    s += head + "void axon_t" + kind + w + "(float* p, " + t + " v) { AXON_T_EACH(" + mm + "_" + kind + "_ps(" + at +
         ", v.v[i])) }\n";
  s += head + "void axon_tstream" + w + "(float* p, " + t + " v) {\n  AXON_T_EACH(if ((reinterpret_cast<uintptr_t>(" + at +
       ") & " + align + ") == 0) " + mm + "_stream_ps(" + at + ", v.v[i]); else " + mm + "_storeu_ps(" + at +
       ", v.v[i]))\n}\n";
  return s;
}

class Emitter {
 public:
  Emitter(const Graph& g, const loop::RowKernel& k, const RowKernelOptions& o)
      : g_(g), k_(k), o_(o), abi_(make_kernel_abi(g)) {
    vec_ = o.vector_bits == 512 ? Flavor::V512 : o.vector_bits == 256 ? Flavor::V256 : Flavor::Scalar;
  }

  KernelSource emit() {
    std::ostringstream b;
    b << "  const int64_t cols = " << k_.cols << ";\n";
    b << "  (void)cols;\n";
    if (k_.tile_rows > 0) b << "  const int64_t tile_rows = " << k_.tile_rows << ";  // rows of the broadcast [1, R, C] inputs\n";
    for (size_t i = 0; i < g_.params.size(); ++i) b << "  (void)" << abi_.param_names[i] << ";\n";
    // Values that are the same everywhere, once per call.
    for (NodeId i = 0; i < g_.size(); ++i)
      if (k_.live[i] && k_.level[i] == Level::Uniform && g_[i].op != Op::Constant && g_[i].op != Op::Param)
        b << "  const float s" << i << " = " << node_value(i, Flavor::Scalar, nullptr, &b, "  ").s << ";\n";
    const int G = o_.row_group > 1 && k_.leads_with_reduction ? o_.row_group : 1;
    group_ = G;
    const NodeId lead = G > 1 ? loop::leading_reduction(g_, k_) : -1;
    // Streamed rows are fenced once per thread, after its last row: an
    // sfence per row waited for the write-combining buffers to drain every
    // 4 KiB (s2 softmax, same schedule: 1.040 ms with it, 0.857 ms without,
    // interleaved in one process). So with nt_store the loop is a worksharing loop without
    // its barrier inside a parallel region, each thread fencing its own
    // stores before the region's closing barrier.
    const bool fence_per_thread = o_.nt_store && o_.threads > 1;
    if (o_.threads > 1) {
      const int chunk = o_.row_block > 0 ? (o_.row_block + G - 1) / G : 0;  // in iterations of the row loop
      const std::string schedule = "schedule(static" + (chunk > 0 ? ", " + std::to_string(chunk) : std::string()) + ")";
      if (fence_per_thread)
        b << "#pragma omp parallel num_threads(" << o_.threads << ")\n  {\n#pragma omp for " << schedule << " nowait\n";
      else
        b << "#pragma omp parallel for num_threads(" << o_.threads << ") " << schedule << "\n";
    }
    plan_reuse();
    if (G > 1) {
      // Groups of G rows: the first reduction of all G in one interleaved
      // pass (a short last group one row at a time), then each row's other
      // passes while its data is in cache. The group pass keeps no row
      // scratch, so a value it binds is stored by the next pass that does.
      b << "  for (int64_t r0 = 0; r0 < " << k_.rows << "; r0 += " << G << ") {\n";
      b << "    const int64_t rg_n = std::min<int64_t>(" << G << ", " << k_.rows << " - r0);\n";
      b << "    float rg_lead[" << G << "];  // %" << lead << " of each row of the group\n";
      b << "    // " << comment_text(print_node(g_, lead)) << "\n";
      std::set<NodeId> reuse;
      std::swap(reuse, reuse_);
      b << "    if (rg_n == " << G << ") {\n";
      ind_ = "      ";
      stream_now_ = true;
      emit_group_reduction(lead, G, b);
      stream_now_ = false;
      b << "    } else {\n";
      b << "      for (int64_t rg = 0; rg < rg_n; ++rg) {\n        const int64_t r = r0 + rg;\n";
      ind_ = "        ";
      emit_reduction(lead, b);
      b << ind_ << "rg_lead[rg] = s" << lead << ";\n      }\n    }\n";
      std::swap(reuse, reuse_);
      b << "    for (int64_t rg = 0; rg < rg_n; ++rg) {\n      const int64_t r = r0 + rg;\n";
      ind_ = "      ";
    } else {
      b << "  for (int64_t r = 0; r < " << k_.rows << "; ++r) {\n";
    }
    const std::string in = ind_;
    int pass = G > 1 ? 1 : 0;  // passes are numbered in the order they run; the group pass is 0
    for (NodeId t : reuse_)
      b << in << "alignas(64) float t" << t << "[" << padded_cols() << "];  // %" << t
        << " of this row, computed in one pass and read by the later ones\n";
    for (NodeId i = 0; i < g_.size(); ++i) {
      if (!k_.live[i] || k_.level[i] != Level::PerRow || g_[i].op == Op::Param || g_[i].op == Op::Constant) continue;
      if (i == lead) {  // computed by the group pass
        b << in << "const float s" << i << " = rg_lead[rg];\n";
      } else if (is_reduction(g_[i].op)) {
        b << in << "// " << comment_text(print_node(g_, i)) << "\n";
        prefetch_now_ = o_.prefetch_pass > 0 && o_.prefetch_pass == pass;
        stream_now_ = pass == 0;
        emit_reduction(i, b);
        prefetch_now_ = stream_now_ = false;
        ++pass;
      } else {
        b << in << "// " << comment_text(print_node(g_, i)) << "\n";
        b << in << "const float s" << i << " = " << node_value(i, Flavor::Scalar, nullptr, &b, in).s << ";\n";
      }
      for (size_t k = 0; k < g_.outputs.size(); ++k)
        if (g_.outputs[k] == i) b << in << abi_.output_names[k] << "[r] = s" << i << ";\n";
    }
    if (!k_.row_outputs.empty()) {
      prefetch_now_ = o_.prefetch_pass > 0 && o_.prefetch_pass == pass;
      stream_now_ = pass == 0;
      emit_pass(-1, b);
      prefetch_now_ = stream_now_ = false;
    }
    if (G > 1) b << "    }\n";
    b << "  }\n";
    if (o_.nt_store) b << "  _mm_sfence();  // this thread's streamed rows are visible before it returns\n";
    if (fence_per_thread) b << "  }\n";

    KernelSource ks;
    ks.entry = abi_.entry;
    ks.header = abi_.header;
    std::string s;
    s += "// kernel.cpp: " + abi_.entry + ", a fused row kernel generated by axon.\n";
    s += "// One parallel loop over " + std::to_string(k_.rows) + " rows of " + std::to_string(k_.cols) +
         " elements; " + std::to_string(k_.passes()) + " vectorised pass(es) over each row (" +
         std::to_string(o_.vector_bits) + "-bit vectors).\n";
    s += "#include \"kernel.h\"\n\n#include <immintrin.h>\n#include <math.h>\n\n#include <cmath>\n#include <cstdint>\n#include <cstring>\n";
    s += vector_math_source(o_.vector_bits);
    s += kHelpersScalar;
    if (o_.vector_bits >= 256) s += kHelpers256;
    if (o_.vector_bits == 512) s += kHelpers512;
    if (o_.vector_bits >= 256) s += kHelpersTuple + tuple_memory_helpers(o_.vector_bits);
    s += "\n" + abi_.definition + " {\n" + b.str() + "}\n";
    ks.source = std::move(s);
    return ks;
  }

 private:
  // The Level operand `idx` of `consumer` is read at (for Params, which can be read at several).
  Level edge_level(NodeId consumer, int idx) const {
    const Node& nd = g_[consumer];
    NodeId a = nd.args[idx];
    if (g_[a].op != Op::Param && g_[a].op != Op::Constant) return k_.level[a];
    if (is_reduction(nd.op)) return Level::Row;
    const Level l = k_.level[consumer];
    if (nd.op == Op::Broadcast) {
      const Type& t = g_[a].type;
      if (t.numel() == nd.type.numel()) return l;
      if (t.numel() == 1) return Level::Uniform;
      bool per_row = t.shape.back() == 1, per_col = t.shape.back() == k_.cols;
      for (int x = 0; x + 1 < t.rank(); ++x) {
        per_row = per_row && t.shape[x] == nd.type.shape[x];
        per_col = per_col && t.shape[x] == 1;
      }
      if (per_row) return Level::PerRow;
      if (per_col) return Level::PerCol;
      return Level::RowTile;  // plan_row_kernel admits no other broadcast
    }
    return l;
  }

  std::string param_ptr(NodeId p) const { return abi_.param_names[g_[p].attrs.ints[0]]; }

  // The value of `id` read at Level `l` in flavour f. Row/PerCol nodes are bound
  // to `const V vN` lines in `body` (memo per loop body); PerRow/Uniform nodes are
  // the scalars s<N> defined earlier.
  VExpr leaf_or_scalar(NodeId id, Level l, Flavor f) const {
    const VExpr like = named("", f);
    const int n = like.n;
    const Node& nd = g_[id];
    if (nd.op == Op::Constant) return make_scalar(nd.attrs.value, like);
    if (nd.op == Op::Param) {
      const std::string p = param_ptr(id);
      if (nd.type.dtype == DType::Bool) {
        switch (l) {
          case Level::Row: return mk(like, load_bool(f, p + " + r * cols + c", n));
          case Level::RowTile: return mk(like, load_bool(f, p + " + (r % tile_rows) * cols + c", n));
          case Level::PerCol: return mk(like, load_bool(f, p + " + c", n));
          case Level::PerRow: return mk(like, splat(f, "static_cast<float>(" + p + "[r])", n));
          default: return mk(like, splat(f, "static_cast<float>(" + p + "[0])", n));
        }
      }
      switch (l) {
        case Level::Row: return mk(like, load(f, p + " + r * cols + c", n));
        case Level::RowTile: return mk(like, load(f, p + " + (r % tile_rows) * cols + c", n));
        case Level::PerCol: return mk(like, load(f, p + " + c", n));
        case Level::PerRow: return mk(like, splat(f, p + "[r]", n));
        default: return mk(like, splat(f, p + "[0]", n));
      }
    }
    return mk(like, splat(f, "s" + std::to_string(id), n));
  }

  VExpr node_value(NodeId id, Flavor f, std::map<NodeId, std::string>* memo, std::ostringstream* body,
                   const std::string& in) {
    const Node& nd = g_[id];
    if (nd.op == Op::Exp) {
      VExpr folded;
      if (exp_of_scaled(id, f, memo, body, in, &folded)) return folded;
    }
    std::vector<VExpr> args;
    for (size_t a = 0; a < nd.args.size(); ++a) args.push_back(operand(id, static_cast<int>(a), f, memo, body, in));
    if (nd.op == Op::Div && f != Flavor::Scalar) {
      // A divisor that is one scalar per row or per call: multiply by its
      // reciprocal, which the compiler hoists out of the loop (a vector
      // division per element costs more than the rest of a softmax pass;
      // the extra rounding, under 1.5 ulp, is inside every budget).
      VExpr d;
      if (scalar_operand(id, 1, &d)) return args[0] * mk(args[0], splat(f, "(1.0f / " + d.s + ")", n_of(f)));
    }
    return body_of(nd, args, f);
  }
  // exp(c * v) with c one scalar for the whole vector, as exp2(v * fl(c log2 e)):
  // the multiply by c folds into exp2's input, and exp2 (a table of 16
  // powers, degree 2) is cheaper than exp's range reduction (s5 GELU,
  // bench/RESULTS.md). Within the error budget wherever the IR's product
  // rounds: its rule gives exp an input error Ea >= u|c v| (docs/
  // error_budget.md), and the folded input errs by at most 2u|c v| (the
  // constant's rounding and the product's) against the gate's 2 Ea, with
  // exp2's own 1 ulp inside exp's 4u. exp(-v) is not a product in the IR and
  // its budget has no such slack, so it keeps exp.
  bool exp_of_scaled(NodeId id, Flavor f, std::map<NodeId, std::string>* memo, std::ostringstream* body,
                     const std::string& in, VExpr* out) {
    const NodeId m = g_[id].args[0];
    if (g_[m].op != Op::Mul || scalar_level(id, 0)) return false;
    for (int idx : {0, 1}) {
      VExpr c, other;
      if (!scalar_operand(m, idx, &c) || scalar_operand(m, 1 - idx, &other)) continue;
      const std::string scale = c.lit ? float_literal(c.v * 1.4426950408889634)
                                      : "static_cast<float>(static_cast<double>(" + c.s + ") * 1.4426950408889634)";
      const VExpr v = operand(m, 1 - idx, f, memo, body, in);
      *out = call("axon_vexp2", v * mk(v, splat(f, scale, n_of(f))));
      return true;
    }
    return false;
  }
  // Operand idx of `consumer` is one scalar for the whole vector, perhaps
  // behind broadcasts: *value is it as a Scalar-flavour expression.
  bool scalar_operand(NodeId consumer, int idx, VExpr* value) const {
    while (g_[g_[consumer].args[idx]].op == Op::Broadcast && !scalar_level(consumer, idx))
      consumer = g_[consumer].args[idx], idx = 0;
    if (!scalar_level(consumer, idx)) return false;
    *value = leaf_or_scalar(g_[consumer].args[idx], edge_level(consumer, idx), Flavor::Scalar);
    return true;
  }
  // Operand idx of `consumer` is one scalar for the whole vector.
  bool scalar_level(NodeId consumer, int idx) const {
    const Level l = edge_level(consumer, idx);
    return l == Level::PerRow || l == Level::Uniform;
  }
  VExpr body_of(const Node& nd, const std::vector<VExpr>& args, Flavor f) const {
    return ir::body<VExpr>(nd, args, named("", f));
  }
  VExpr operand(NodeId consumer, int idx, Flavor f, std::map<NodeId, std::string>* memo, std::ostringstream* body,
                const std::string& in) {
    NodeId a = g_[consumer].args[idx];
    Level l = edge_level(consumer, idx);
    const bool vector_level = l == Level::Row || l == Level::PerCol || l == Level::RowTile;
    if (g_[a].op == Op::Param || g_[a].op == Op::Constant || !vector_level) return leaf_or_scalar(a, l, f);
    return bound(a, f, memo, body, in);
  }
  VExpr bound(NodeId a, Flavor f, std::map<NodeId, std::string>* memo, std::ostringstream* body,
              const std::string& in) {
    auto it = memo->find(a);
    if (it != memo->end()) return named(it->second, f);
    if (bound_log_) bound_log_->insert(a);
    if (stored_.count(a)) {  // an earlier pass left this row of %a in its scratch
      std::string name = "v" + std::to_string(a);
      *body << in << "const " << vtype(f, n_of(f)) << " " << name << " = " << scratch_load(f, a) << ";\n";
      (*memo)[a] = name;
      return named(name, f);
    }
    VExpr v = node_value(a, f, memo, body, in);
    if (g_[a].op == Op::Reshape || g_[a].op == Op::Broadcast) {  // a new name for the same value
      (*memo)[a] = v.s;
      return v;
    }
    std::string name = "v" + std::to_string(a);
    *body << in << "const " << vtype(f, n_of(f)) << " " << name << " = " << v.s << ";\n";
    (*memo)[a] = name;
    if (reuse_.count(a)) {
      *body << in << scratch_store(f, a, name) << "\n";
      storing_.insert(a);
    }
    return named(name, f);
  }
  // The tuple size of flavour f in the body being printed: n_ for the
  // kernel's vector flavour, 1 for masked and scalar code.
  int n_of(Flavor f) const { return f == vec_ && f != Flavor::Scalar ? n_ : 1; }
  VExpr named(std::string s, Flavor f) const { return VExpr{std::move(s), f, false, 0, n_of(f)}; }

  // Row-level values worth keeping between passes: bound in two or more
  // passes, and their recomputation would evaluate a transcendental or a
  // division (softmax's exp(x - max) is summed in one pass and normalised in
  // the next). Each gets a row-sized scratch on the stack, which stays in L1.
  void plan_reuse() {
    if (vec_ == Flavor::Scalar || k_.passes() < 2) return;
    std::map<NodeId, int> passes_binding;
    std::vector<NodeId> passes(k_.reductions.begin(), k_.reductions.end());
    if (!k_.row_outputs.empty()) passes.push_back(-1);
    for (NodeId p : passes) {
      std::set<NodeId> log;
      bound_log_ = &log;
      std::ostringstream sink;
      emit_loops(p, sink, "");
      bound_log_ = nullptr;
      for (NodeId a : log) ++passes_binding[a];
    }
    int64_t bytes = 0;
    for (auto [a, n] : passes_binding) {
      if (n < 2 || k_.level[a] != Level::Row || !costly(a)) continue;
      if (bytes + padded_cols() * 4 > (int64_t{48} << 10)) break;  // keep the scratch in L1 and L2
      reuse_.insert(a);
      bytes += padded_cols() * 4;
    }
    storing_.clear();
  }
  // Whether evaluating %a at Row level runs a transcendental or a division.
  bool costly(NodeId a) const {
    const Node& nd = g_[a];
    if (nd.op == Op::Param || nd.op == Op::Constant || k_.level[a] != Level::Row) return false;
    if (has_property(nd.op, Transcendental) || nd.op == Op::Div) return true;
    for (NodeId x : nd.args)
      if (costly(x)) return true;
    return false;
  }
  int64_t padded_cols() const { return (k_.cols + 15) / 16 * 16; }
  std::string scratch_load(Flavor f, NodeId a) const {
    const std::string p = "t" + std::to_string(a) + " + c";
    if (n_of(f) > 1) return "axon_tload" + tsuffix(f, n_of(f)) + "(" + p + ")";
    switch (f) {
      case Flavor::V512: return "_mm512_load_ps(" + p + ")";
      case Flavor::V512Masked: return "_mm512_maskz_load_ps(m, " + p + ")";
      case Flavor::V256: return "_mm256_load_ps(" + p + ")";
      default: return "(" + p + ")[0]";
    }
  }
  std::string scratch_store(Flavor f, NodeId a, const std::string& v) const {
    const std::string p = "t" + std::to_string(a) + " + c";
    if (n_of(f) > 1) return "axon_tstore" + tsuffix(f, n_of(f)) + "(" + p + ", " + v + ");";
    switch (f) {
      case Flavor::V512: return "_mm512_store_ps(" + p + ", " + v + ");";
      case Flavor::V512Masked: return "_mm512_mask_store_ps(" + p + ", m, " + v + ");";
      case Flavor::V256: return "_mm256_store_ps(" + p + ", " + v + ");";
      default: return "(" + p + ")[0] = " + v + ";";
    }
  }

  // The pointers of the parameters read a whole row at a time
  // (RowKernel::row_params): what a row brings in from memory.
  std::vector<std::string> row_params() const {
    std::vector<std::string> ps;
    for (NodeId i : k_.row_params) ps.push_back(param_ptr(i));
    return ps;
  }

  // One step of a pass at column c (of row r) in flavour f: a reduction
  // folding into `vacc` (its vector accumulator; the scalar one in scalar
  // code), or, for red == -1, the stores of the row outputs. Accumulator
  // names carry sfx_, so that the rows of a group keep theirs apart.
  // With n > 1 the body is one step over n vectors (a tuple; vacc names
  // one too), with a prefetch per 64-byte line of the step.
  std::string loop_body(NodeId red, Flavor f, const std::string& in2, const std::string& vacc, int n = 1) {
    n_ = n;
    struct OneVectorAfter {  // n_ is 1 outside a loop body
      int& n;
      ~OneVectorAfter() { n = 1; }
    } one_vector_after{n_};
    std::map<NodeId, std::string> memo;
    std::ostringstream body;
    const int lines = std::max(1, n * lanes(f) * 4 / 64);
    auto line = [&](int i) { return i == 0 ? std::string() : " + " + std::to_string(16 * i); };
    if (prefetch_now_ && f == vec_ && f != Flavor::Scalar) {
      // The rows the next group's first pass will read, fetched while this
      // pass computes from cache (the last row fetches itself again).
      for (const std::string& p : row_params())
        for (int i = 0; i < lines; ++i)
          body << in2 << "_mm_prefetch(reinterpret_cast<const char*>(" << p << " + std::min<int64_t>(r + " << group_ << ", "
               << k_.rows - 1 << ") * cols + c" << line(i) << "), _MM_HINT_T0);\n";
    }
    if (stream_now_ && o_.stream_prefetch > 0 && f == vec_ && f != Flavor::Scalar) {
      // This pass brings the rows in from memory: fetch further ahead,
      // with the hint that the lines are read once. The address is an
      // integer past the element being loaded and may pass the buffer's
      // end, where a prefetch is dropped (it never faults); clamping it
      // cost s7 7% (0.524 -> 0.563 ms interleaved).
      for (const std::string& p : row_params())
        for (int i = 0; i < lines; ++i)
          body << in2 << "_mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(" << p
               << " + r * cols + c" << line(i) << ") + " << o_.stream_prefetch << "), _MM_HINT_NTA);\n";
    }
    if (red >= 0) {
      VExpr x = operand(red, 0, f, &memo, &body, in2);
      const Combine c = reduction_domain(g_, g_[red]).combine;
      const std::string acc = f == Flavor::Scalar ? "acc_s" + sfx_ : vacc;
      if ((c == Combine::Max || c == Combine::Min) && f != Flavor::Scalar) {
        const int vectors = n_of(f);
        body << in2 << "const " << vtype(f, vectors) << " x = " << x.s << ";\n";
        for (int i = 0; i < vectors; ++i) {  // each vector of a tuple in turn
          const std::string m = vectors == 1 ? "" : ".v[" + std::to_string(i) + "]";
          body << in2 << extremum_step(c, f, acc + m, "x" + m) << "\n";
        }
        return body.str();
      }
      VExpr step = combine_step<VExpr>(c, named(acc, f), x);
      if (f == Flavor::V512Masked) body << in2 << acc << " = _mm512_mask_mov_ps(" << acc << ", m, " << step.s << ");\n";
      else body << in2 << acc << " = " << step.s << ";\n";
    } else {
      for (NodeId o : k_.row_outputs) {
        VExpr v = bound(o, f, &memo, &body, in2);
        std::string p;
        for (size_t k = 0; k < g_.outputs.size(); ++k)
          if (g_.outputs[k] == o) p = abi_.output_names[k] + " + r * cols + c";
        body << in2 << store(f, p, v.s) << "\n";
      }
    }
    return body.str();
  }

  // The loops over c of one pass, in every flavour it needs. `red` >= 0: a
  // reduction folding into acc; -1: the pass that stores the row outputs.
  void emit_loops(NodeId red, std::ostringstream& b, const std::string& in) {
    const int w = lanes(vec_);
    b << in << "int64_t c = 0;\n";
    if (red >= 0 && vec_ != Flavor::Scalar && k_.cols >= kAccumulators * w) {
      // kAccumulators independent chains, so that the loop runs at the
      // adder's throughput, not its latency (the fold is not reassociated
      // by the compiler); emit_reduction combines them after the loop.
      // The chains are one tuple step (chain a takes the vector at c + a w),
      // so that their instructions interleave (kHelpersTuple).
      const std::string t = "acc_t" + sfx_;
      std::ostringstream body;
      std::vector<std::string> accs;
      body << in << "  " << vtype(vec_, kAccumulators) << " " << t << " = {{";
      for (int a = 0; a < kAccumulators; ++a) body << (a ? ", " : "") << accumulator(a), accs.push_back(accumulator(a));
      body << "}};\n";
      body << loop_body(red, vec_, in + "  ", t, kAccumulators);
      for (int a = 0; a < kAccumulators; ++a) body << in << "  " << accumulator(a) << " = " << t << ".v[" << a << "];\n";
      emit_steps(red, kAccumulators * w, accs, vec_, body.str(), b, in);
    }
    emit_tail_loops(red, b, in);
  }

  // `for (; c + step <= cols; c += step) { body }` from c = 0, where `body`
  // folds one step into each accumulator of `accs` (of flavour f). For a sum
  // whose chains would run longer than kBlock steps, the steps go in blocks
  // of kBlock: each block's sums, started from 0, are added into a partial
  // of level 1 and 0 again; every kBlock blocks the level-1 partials are
  // added into level 2, and so on, as many levels as cols needs; after the
  // loop every level is added back into the accumulator. Each value is then
  // added into at most kBlock others at each level: the error of the sum
  // grows with the number of levels, log_64 n, not with n
  // (docs/error_budget.md, "The summation order kernels use").
  void emit_steps(NodeId red, int64_t step, const std::vector<std::string>& accs, Flavor f, const std::string& body,
                  std::ostringstream& b, const std::string& in) {
    const std::string loop = "for (; c + " + std::to_string(step) + " <= cols; c += " + std::to_string(step) + ") {\n";
    const int64_t steps = k_.cols / step, blocks = steps / kBlock;
    if (reduction_domain(g_, g_[red]).combine != Combine::Sum || steps <= kBlock) {
      b << in << loop << body << in << "}\n";
      return;
    }
    int levels = 1;
    for (int64_t cap = kBlock; cap < blocks; cap *= kBlock) ++levels;
    const std::string zero = splat(f, combine_identity<VExpr>(Combine::Sum, VExpr{"", Flavor::Scalar}).s);
    auto partial = [](const std::string& acc, int level) { return acc + "_b" + std::to_string(level); };
    auto add = [&](const std::string& into, const std::string& x) {
      return into + " = " + combine_step<VExpr>(Combine::Sum, VExpr{into, f}, VExpr{x, f}).s + ";";
    };
    const std::string in2 = in + "  ", in3 = in2 + "  ";
    b << in << "{  // blocks of " << kBlock << " steps, their sums added in blocks of " << kBlock << " (" << levels
      << " level" << (levels > 1 ? "s" : "") << ")\n";
    for (const std::string& a : accs) {
      b << in2 << vtype(f) << " " << partial(a, 1) << " = " << zero;
      for (int l = 2; l <= levels; ++l) b << ", " << partial(a, l) << " = " << zero;
      b << ";\n";
    }
    if (levels > 1) b << in2 << "int64_t blocks = 0;\n";
    b << in2 << "while (c + " << kBlock * step << " <= cols) {\n";
    b << in3 << "for (const int64_t c_end = c + " << kBlock * step << "; c < c_end; c += " << step << ") {\n"
      << indent(body, "    ") << in3 << "}\n";
    for (const std::string& a : accs) b << in3 << add(partial(a, 1), a) << " " << a << " = " << zero << ";\n";
    std::string in_l = in3;
    int64_t period = 1;
    for (int l = 2; l <= levels; ++l) {
      period *= kBlock;
      b << in_l << "if (" << (l == 2 ? "++blocks" : "blocks") << " % " << period << " == 0) {\n";
      for (const std::string& a : accs)
        b << in_l << "  " << add(partial(a, l), partial(a, l - 1)) << " " << partial(a, l - 1) << " = " << zero << ";\n";
      in_l += "  ";
    }
    for (int l = levels; l >= 2; --l) {
      in_l.resize(in_l.size() - 2);
      b << in_l << "}\n";
    }
    b << in2 << "}\n";
    b << in2 << loop << indent(body, "  ") << in2 << "}\n";
    for (const std::string& a : accs)
      for (int l = 1; l <= levels; ++l) b << in2 << add(a, partial(a, l)) << "\n";
    b << in << "}\n";
  }
  // `text` with `more` inserted at the start of each line.
  static std::string indent(const std::string& text, const std::string& more) {
    std::string out;
    size_t at = 0;
    while (at < text.size()) {
      size_t nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size() - 1;
      out += more + text.substr(at, nl - at + 1);
      at = nl + 1;
    }
    return out;
  }

  // From column c on: the one-vector loop, then the masked (AVX-512) or
  // scalar tail.
  void emit_tail_loops(NodeId red, std::ostringstream& b, const std::string& in) {
    const int w = lanes(vec_);
    if (vec_ != Flavor::Scalar) {
      if (red < 0 && o_.unroll > 1) {
        // The output pass unrolls as a tuple step of `unroll` vectors, whose
        // instructions interleave (kHelpersTuple); then one vector at a time.
        b << in << "for (; c + " << o_.unroll * w << " <= cols; c += " << o_.unroll * w << ") {\n"
          << loop_body(red, vec_, in + "  ", accumulator(0), o_.unroll) << in << "}\n";
      } else if (o_.unroll > 1) {
        b << "#pragma GCC unroll " << o_.unroll << "\n";
      }
      b << in << "for (; c + " << w << " <= cols; c += " << w << ") {\n"
        << loop_body(red, vec_, in + "  ", accumulator(0)) << in << "}\n";
      if (k_.cols % w != 0 && vec_ == Flavor::V512) {
        b << in << "if (c < cols) {\n";
        b << in << "  const __mmask16 m = (__mmask16)((1u << (cols - c)) - 1u);\n";
        b << loop_body(red, Flavor::V512Masked, in + "  ", accumulator(0)) << in << "}\n";
        return;
      }
    }
    if (vec_ == Flavor::Scalar && red >= 0)  // every column, from c = 0
      emit_steps(red, 1, {"acc_s" + sfx_}, Flavor::Scalar, loop_body(red, Flavor::Scalar, in + "  ", accumulator(0)), b, in);
    else if (vec_ == Flavor::Scalar || k_.cols % w != 0)
      b << in << "for (; c < cols; ++c) {\n" << loop_body(red, Flavor::Scalar, in + "  ", accumulator(0)) << in << "}\n";
  }

  // combine_step's max (min) for vectors, as two cheap instructions: the
  // hardware max keeps acc when x is NaN, so NaN lanes are counted in
  // `nan` and make the result NaN after the loop; ties keep acc, as the
  // definition's gt(x, acc) ? x : acc does.
  std::string extremum_step(Combine c, Flavor f, const std::string& acc, const std::string& x) const {
    const std::string op = c == Combine::Max ? "max" : "min";
    const std::string nan = "nan" + sfx_;
    switch (f) {
      case Flavor::V512:
        return acc + " = _mm512_" + op + "_ps(" + x + ", " + acc + "); " + nan + " |= _mm512_cmp_ps_mask(" + x + ", " + x +
               ", _CMP_UNORD_Q);";
      case Flavor::V512Masked:
        return acc + " = _mm512_mask_" + op + "_ps(" + acc + ", m, " + x + ", " + acc + "); " + nan +
               " |= _mm512_mask_cmp_ps_mask(m, " + x + ", " + x + ", _CMP_UNORD_Q);";
      default:
        return acc + " = _mm256_" + op + "_ps(" + x + ", " + acc + "); " + nan + " = _mm256_or_ps(" + nan +
               ", _mm256_cmp_ps(" + x + ", " + x + ", _CMP_UNORD_Q));";
    }
  }
  static constexpr int kAccumulators = 4;
  static constexpr int kBlock = 64;  // steps of a sum's chain before its partial moves up a level (emit_steps)
  // The accumulators' suffix for row gi of a group (appended, not "_" + ...:
  // GCC 12 warns -Wrestrict, wrongly, on that concatenation here).
  static std::string row_suffix(int gi) {
    std::string s = "_";
    s += std::to_string(gi);
    return s;
  }
  std::string accumulator(int a) const { return (a == 0 ? "acc" : "acc" + std::to_string(a)) + sfx_; }

  std::string store(Flavor f, const std::string& p, const std::string& v) const {
    if (n_of(f) > 1) return std::string(o_.nt_store ? "axon_tstream" : "axon_tstoreu") + tsuffix(f, n_of(f)) + "(" + p + ", " + v + ");";
    switch (f) {
      case Flavor::V512:
        if (o_.nt_store)
          return "if ((reinterpret_cast<uintptr_t>(" + p + ") & 63) == 0) _mm512_stream_ps(" + p + ", " + v +
                 "); else _mm512_storeu_ps(" + p + ", " + v + ");";
        return "_mm512_storeu_ps(" + p + ", " + v + ");";
      case Flavor::V512Masked: return "_mm512_mask_storeu_ps(" + p + ", m, " + v + ");";
      case Flavor::V256:
        if (o_.nt_store)
          return "if ((reinterpret_cast<uintptr_t>(" + p + ") & 31) == 0) _mm256_stream_ps(" + p + ", " + v +
                 "); else _mm256_storeu_ps(" + p + ", " + v + ");";
        return "_mm256_storeu_ps(" + p + ", " + v + ");";
      default: return "(" + p + ")[0] = " + v + ";";
    }
  }

  // The accumulators of a reduction pass: `chains` vector ones (none in
  // scalar code) and the scalar one of the tails.
  void declare_accumulators(NodeId red, int chains, std::ostringstream& b, const std::string& in) {
    const Combine c = reduction_domain(g_, g_[red]).combine;
    const std::string id = combine_identity<VExpr>(c, VExpr{"", Flavor::Scalar}).s;
    if (vec_ != Flavor::Scalar) {
      b << in << vtype(vec_) << " " << accumulator(0) << " = " << splat(vec_, id);
      for (int a = 1; a < chains; ++a) b << ", " << accumulator(a) << " = " << accumulator(0);
      b << ";\n";
      if (c == Combine::Max || c == Combine::Min)
        b << in << (vec_ == Flavor::V256 ? "__m256 nan" + sfx_ + " = _mm256_setzero_ps();" : "__mmask16 nan" + sfx_ + " = 0;") << "\n";
    }
    b << in << "float acc_s" << sfx_ << " = " << id << ";\n";
  }

  // After the loops: the chains folded pairwise into acc, acc's lanes and
  // the scalar accumulator folded into the float `s`.
  void fold_accumulators(NodeId red, int chains, const std::string& s, std::ostringstream& b, const std::string& in) {
    const Combine c = reduction_domain(g_, g_[red]).combine;
    for (int step = 1; step < chains; step *= 2)
      for (int a = 0; a + step < chains; a += 2 * step)
        b << in << accumulator(a) << " = "
          << combine_step<VExpr>(c, VExpr{accumulator(a), vec_}, VExpr{accumulator(a + step), vec_}).s << ";\n";
    VExpr sv{s, Flavor::Scalar};
    if (vec_ != Flavor::Scalar) {
      const int w = lanes(vec_);
      b << in << "{\n";
      b << in << "  float lanes[" << w << "];\n";
      b << in << "  std::memcpy(lanes, &" << accumulator(0) << ", sizeof lanes);\n";
      b << in << "  for (int i = 0; i < " << w << "; ++i) " << s << " = "
        << combine_step<VExpr>(c, sv, VExpr{"lanes[i]", Flavor::Scalar}).s << ";\n";
      b << in << "}\n";
    }
    b << in << s << " = " << combine_step<VExpr>(c, sv, VExpr{"acc_s" + sfx_, Flavor::Scalar}).s << ";\n";
    if ((c == Combine::Max || c == Combine::Min) && vec_ != Flavor::Scalar)
      b << in << "if (" << (vec_ == Flavor::V256 ? "_mm256_movemask_ps(nan" + sfx_ + ")" : "nan" + sfx_) << ") " << s
        << " = NAN;\n";
  }

  void emit_reduction(NodeId red, std::ostringstream& b) {
    const std::string& in = ind_;
    const Combine c = reduction_domain(g_, g_[red]).combine;
    const std::string id = combine_identity<VExpr>(c, VExpr{"", Flavor::Scalar}).s;
    const std::string s = "s" + std::to_string(red);
    b << in << "float " << s << " = " << id << ";\n";
    b << in << "{\n";
    const std::string in2 = in + "  ";
    const int chains = vec_ != Flavor::Scalar && k_.cols >= kAccumulators * lanes(vec_) ? kAccumulators : 1;
    declare_accumulators(red, chains, b, in2);
    emit_loops(red, b, in2);
    end_pass();
    fold_accumulators(red, chains, s, b, in2);
    b << in << "}\n";
  }

  // The first reduction of G rows r0 .. r0 + G - 1 in one loop over c, the
  // rows' steps interleaved, into rg_lead[g]. Several rows read at once are
  // several streams of memory in flight (docs/loop_ir.md, "Row groups",
  // has what that measured: on s7 little, so the search decides).
  void emit_group_reduction(NodeId red, int G, std::ostringstream& b) {
    const std::string& in = ind_;
    const int w = lanes(vec_);
    const int chains = vec_ != Flavor::Scalar && k_.cols >= 2 * w ? 2 : 1;
    b << in << "{\n";
    const std::string in2 = in + "  ";
    for (int gi = 0; gi < G; ++gi) {
      sfx_ = row_suffix(gi);
      declare_accumulators(red, chains, b, in2);
    }
    const int step = vec_ == Flavor::Scalar ? 1 : chains * w;
    b << in2 << "int64_t c = 0;\n";
    std::ostringstream body;
    std::vector<std::string> accs;
    body << in2 << "  const int64_t c_ = c;\n";
    for (int a = 0; a < (vec_ == Flavor::Scalar ? 1 : chains); ++a)
      for (int gi = 0; gi < G; ++gi) {
        sfx_ = row_suffix(gi);
        accs.push_back(vec_ == Flavor::Scalar ? "acc_s" + sfx_ : accumulator(a));
        body << in2 << "  {\n" << in2 << "    const int64_t r = r0 + " << gi << ", c = c_ + " << a * w << ";\n";
        body << loop_body(red, vec_, in2 + "    ", accumulator(a)) << in2 << "  }\n";
      }
    emit_steps(red, step, accs, vec_, body.str(), b, in2);
    b << in2 << "const int64_t c_end = c;\n";
    for (int gi = 0; gi < G; ++gi) {
      sfx_ = row_suffix(gi);
      b << in2 << "{\n" << in2 << "  const int64_t r = r0 + " << gi << ";\n" << in2 << "  int64_t c = c_end;\n";
      if (vec_ != Flavor::Scalar) emit_tail_loops(red, b, in2 + "  ");
      b << in2 << "  (void)r;\n";
      b << in2 << "  rg_lead[" << gi << "] = " << combine_identity<VExpr>(reduction_domain(g_, g_[red]).combine, VExpr{"", Flavor::Scalar}).s << ";\n";
      fold_accumulators(red, chains, "rg_lead[" + std::to_string(gi) + "]", b, in2 + "  ");
      b << in2 << "}\n";
    }
    sfx_.clear();
    end_pass();
    b << in << "}\n";
  }

  void end_pass() {
    stored_.insert(storing_.begin(), storing_.end());
    storing_.clear();
  }

  void emit_pass(NodeId red, std::ostringstream& b) {
    const std::string& in = ind_;
    b << in << "// the pass that writes the row outputs\n" << in << "{\n";
    emit_loops(red, b, in + "  ");
    end_pass();
    b << in << "}\n";
  }

  const Graph& g_;
  const loop::RowKernel& k_;
  RowKernelOptions o_;
  KernelAbi abi_;
  Flavor vec_;
  std::set<NodeId> reuse_;    // Row values kept in a scratch row between passes
  std::set<NodeId> stored_;   // ... already stored by a finished pass
  std::set<NodeId> storing_;  // ... stored by the pass being emitted
  std::set<NodeId>* bound_log_ = nullptr;  // plan_reuse's record of the values a pass binds
  int group_ = 1;            // rows per group of the row loop
  int n_ = 1;                // vectors per step of the loop body being printed (a tuple when > 1)
  bool prefetch_now_ = false;  // the pass being emitted prefetches the next rows (RowKernelOptions::prefetch_pass)
  bool stream_now_ = false;    // the pass being emitted reads the rows from memory (RowKernelOptions::stream_prefetch)
  std::string sfx_;          // suffix of the accumulators being emitted (a row of a group)
  std::string ind_ = "    ";  // indentation of the row body
};

}  // namespace

KernelSource emit_row_kernel_cpp(const Graph& g, const loop::RowKernel& k, const RowKernelOptions& opts) {
  AXON_CHECK(k.ok) << "emit_row_kernel_cpp on a graph outside the row-kernel form: " << k.why;
  return Emitter(g, k, opts).emit();
}

}  // namespace axon::codegen
