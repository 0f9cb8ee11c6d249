#include "codegen/cpu/vector_math.h"

#include <cmath>
#include <limits>

#include "support/diagnostic.h"

namespace axon::codegen {

namespace {

// Each traits struct gives the algorithms below the same small vocabulary:
// float lanes V, int32 lanes I, lane masks M. Comparisons are ordered
// (false on NaN) except not_ge. min_nan(a, hi) and max_nan(a, lo) clamp and
// keep a NaN of `a` (MINPS returns its second operand on NaN).
constexpr const char* kScalarTraits = R"AXON(
// ---- axon vector math (docs/vector_math.md) ----
struct axon_vm_f32 {
  using V = float; using I = std::int32_t; using M = bool;
  static V set(float c) { return c; }
  static I iset(std::int32_t c) { return c; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V div(V a, V b) { return a / b; }
  static V fma(V a, V b, V c) { return std::fma(a, b, c); }
  static V fnma(V a, V b, V c) { return std::fma(-a, b, c); }
  static V fms(V a, V b, V c) { return std::fma(a, b, -c); }
  static V sqrt(V a) { return std::sqrt(a); }
  static I as_int(V a) { I i; __builtin_memcpy(&i, &a, 4); return i; }
  static V as_float(I i) { V a; __builtin_memcpy(&a, &i, 4); return a; }
  static I iadd(I a, I b) { return static_cast<I>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b)); }
  static I isub(I a, I b) { return static_cast<I>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b)); }
  static I iand(I a, I b) { return a & b; }
  static I sra23(I a) { return a >> 23; }
  static V i2f(I a) { return static_cast<V>(a); }
  static V abs(V a) { return as_float(as_int(a) & 0x7fffffff); }
  static V copysign(V mag, V s) { return as_float(as_int(mag) | (as_int(s) & static_cast<I>(0x80000000u))); }
  static V min_nan(V a, V hi) { return hi < a ? hi : a; }
  static V max_nan(V a, V lo) { return lo > a ? lo : a; }
  static M lt(V a, V b) { return a < b; }
  static M ge(V a, V b) { return a >= b; }
  static M eq(V a, V b) { return a == b; }
  static M not_ge(V a, V b) { return !(a >= b); }
  static V select(M m, V a, V b) { return m ? a : b; }
  // p * 2^n for integral n in [-150, 128] in two exact-or-rounding-once steps.
  static V scale2(V p, V n) {
    I ni = n == n ? static_cast<I>(n) : 0;
    I n1 = ni >> 1, n2 = ni - n1;
    return p * as_float((n1 + 127) << 23) * as_float((n2 + 127) << 23);
  }
  static V rsqrt_estimate(V a) { return 1.0f / std::sqrt(a); }
  static M pos_finite(V a) { return a > 0.0f && a < __builtin_huge_valf(); }
  // exp2's steps (axon_vm_exp2): whether reduce16 gives its fraction, the
  // table entry of the low 4 mantissa bits of u, and p * 2^floor(k).
  static constexpr bool has_reduce16 = false;
  // exp's and exp2's fast path (see axon_vm_exp): not worth a branch per element.
  static constexpr bool has_exponent_add = false;
  static V table16(const float* tab, V u) { return tab[as_int(u) & 15]; }
  static V scale2_floor(V p, V k) { return scale2(p, std::floor(k)); }
};
)AXON";

constexpr const char* kAvx2Traits = R"AXON(
struct axon_vm_avx2 {
  using V = __m256; using I = __m256i; using M = __m256;
  static V set(float c) { return _mm256_set1_ps(c); }
  static I iset(std::int32_t c) { return _mm256_set1_epi32(c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V fms(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }
  static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  static I as_int(V a) { return _mm256_castps_si256(a); }
  static V as_float(I i) { return _mm256_castsi256_ps(i); }
  static I iadd(I a, I b) { return _mm256_add_epi32(a, b); }
  static I isub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I iand(I a, I b) { return _mm256_and_si256(a, b); }
  static I sra23(I a) { return _mm256_srai_epi32(a, 23); }
  static V i2f(I a) { return _mm256_cvtepi32_ps(a); }
  static V abs(V a) { return _mm256_and_ps(a, as_float(iset(0x7fffffff))); }
  static V copysign(V mag, V s) { return _mm256_or_ps(mag, _mm256_and_ps(s, set(-0.0f))); }
  static V min_nan(V a, V hi) { return _mm256_min_ps(hi, a); }
  static V max_nan(V a, V lo) { return _mm256_max_ps(lo, a); }
  static M lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M ge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static M eq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M not_ge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_NGE_UQ); }
  static V select(M m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
  static V scale2(V p, V n) {
    I ni = _mm256_cvtps_epi32(n);
    I n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    V s1 = as_float(_mm256_slli_epi32(_mm256_add_epi32(n1, iset(127)), 23));
    V s2 = as_float(_mm256_slli_epi32(_mm256_add_epi32(n2, iset(127)), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }
  static V rsqrt_estimate(V a) { return _mm256_div_ps(set(1.0f), _mm256_sqrt_ps(a)); }
  static M pos_finite(V a) {
    return _mm256_and_ps(_mm256_cmp_ps(a, set(0.0f), _CMP_GT_OQ), _mm256_cmp_ps(a, set(__builtin_huge_valf()), _CMP_LT_OQ));
  }
  static constexpr bool has_reduce16 = false;
  // exp's and exp2's fast path (see axon_vm_exp): whether every lane has
  // |a| <= c (false for NaN), and p * 2^n as an integer add of n << 23 to
  // p's bits, exact while p * 2^n is normal.
  static constexpr bool has_exponent_add = true;
  static bool all_abs_le(V a, float c) { return _mm256_movemask_ps(_mm256_cmp_ps(abs(a), set(c), _CMP_NLE_UQ)) == 0; }
  static I shl(I a, int s) { return _mm256_slli_epi32(a, s); }
  static V add_exponent(V p, I n_shl23) { return as_float(_mm256_add_epi32(as_int(p), n_shl23)); }
  // Two 8-entry permutes, chosen between by bit 3 (moved to the sign bit).
  static V table16(const float* tab, V u) {
    I j = as_int(u);
    V lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab), j);
    V hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab + 8), j);
    return _mm256_blendv_ps(lo, hi, as_float(_mm256_slli_epi32(j, 28)));
  }
  static V scale2_floor(V p, V k) { return scale2(p, _mm256_floor_ps(k)); }
};
)AXON";

constexpr const char* kAvx512Traits = R"AXON(
struct axon_vm_avx512 {
  using V = __m512; using I = __m512i; using M = __mmask16;
  static V set(float c) { return _mm512_set1_ps(c); }
  static I iset(std::int32_t c) { return _mm512_set1_epi32(c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V fms(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }
  static V sqrt(V a) { return _mm512_sqrt_ps(a); }
  static I as_int(V a) { return _mm512_castps_si512(a); }
  static V as_float(I i) { return _mm512_castsi512_ps(i); }
  static I iadd(I a, I b) { return _mm512_add_epi32(a, b); }
  static I isub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I iand(I a, I b) { return _mm512_and_si512(a, b); }
  static I sra23(I a) { return _mm512_srai_epi32(a, 23); }
  static V i2f(I a) { return _mm512_cvtepi32_ps(a); }
  static V abs(V a) { return as_float(_mm512_and_si512(as_int(a), iset(0x7fffffff))); }
  static V copysign(V mag, V s) {
    return as_float(_mm512_or_si512(as_int(mag), _mm512_and_si512(as_int(s), iset(static_cast<std::int32_t>(0x80000000u)))));
  }
  static V min_nan(V a, V hi) { return _mm512_min_ps(hi, a); }
  static V max_nan(V a, V lo) { return _mm512_max_ps(lo, a); }
  static M lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static M eq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M not_ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_NGE_UQ); }
  static V select(M m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }
  // One rounding, subnormal results included.
  static V scale2(V p, V n) { return _mm512_scalef_ps(p, n); }
  static V rsqrt_estimate(V a) { return _mm512_rsqrt14_ps(a); }  // relative error < 2^-14
  static M pos_finite(V a) {
    return _mm512_cmp_ps_mask(a, set(0.0f), _CMP_GT_OQ) & _mm512_cmp_ps_mask(a, set(__builtin_huge_valf()), _CMP_LT_OQ);
  }
#ifdef __AVX512DQ__
  // t minus t rounded to the 1/16 grid, in one step, and 0 for infinite t.
  static constexpr bool has_reduce16 = true;
  static V reduce16(V t) { return _mm512_reduce_ps(t, (4 << 4) | _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
#else
  static constexpr bool has_reduce16 = false;
#endif
  static constexpr bool has_exponent_add = false;  // scalef is one instruction already
  static V table16(const float* tab, V u) { return _mm512_permutexvar_ps(as_int(u), _mm512_loadu_ps(tab)); }
  static V scale2_floor(V p, V k) { return _mm512_scalef_ps(p, k); }  // scalef scales by 2^floor(k)
};
)AXON";

constexpr const char* kTupleTraits = R"AXON(
// N vectors of one ISA as one value. The algorithms run on axon_vm_tuple<B, N>
// print each step for all N vectors before the next step, and take exp's
// fast path when all N qualify (one branch), so the compiler sees N
// independent chains in one basic block and interleaves them: on AVX2, a
// branch per vector kept 4 unrolled exps in sequence, and their long
// dependency chains filled the scheduler (docs/loop_ir.md, "Interleaved
// vectors"). Each lane gets the instructions B gives it, so the bits are B's.
template <class V, int N> struct axon_t { V v[N]; };
// stmt for each vector i of a tuple of N (also the tile printer's tuple helpers').
#define AXON_T_EACH(stmt) _Pragma("GCC unroll 16") for (int i = 0; i < N; ++i) stmt;
#define AXON_T_MAP(R, expr) \
  R r_;                     \
  AXON_T_EACH(r_.v[i] = (expr)) return r_;
template <class B, int N> struct axon_vm_tuple {
  using V = axon_t<typename B::V, N>; using I = axon_t<typename B::I, N>; using M = axon_t<typename B::M, N>;
  // LIFTn(R, name, A1, ...): R name(A1 a, ...) applying B::name vector by vector.
#define AXON_T_LIFT1(R, name, A) static R name(A a) { AXON_T_MAP(R, B::name(a.v[i])) }
#define AXON_T_LIFT2(R, name, A, B2) static R name(A a, B2 b) { AXON_T_MAP(R, B::name(a.v[i], b.v[i])) }
#define AXON_T_LIFT3(R, name, A) static R name(A a, V b, V c) { AXON_T_MAP(R, B::name(a.v[i], b.v[i], c.v[i])) }
  static V set(float c) { AXON_T_MAP(V, B::set(c)) }
  static I iset(std::int32_t c) { AXON_T_MAP(I, B::iset(c)) }
  AXON_T_LIFT2(V, add, V, V) AXON_T_LIFT2(V, sub, V, V) AXON_T_LIFT2(V, mul, V, V) AXON_T_LIFT2(V, div, V, V)
  AXON_T_LIFT3(V, fma, V) AXON_T_LIFT3(V, fnma, V) AXON_T_LIFT3(V, fms, V) AXON_T_LIFT3(V, select, M)
  AXON_T_LIFT1(V, sqrt, V) AXON_T_LIFT1(I, as_int, V) AXON_T_LIFT1(V, as_float, I) AXON_T_LIFT1(I, sra23, I)
  AXON_T_LIFT1(V, i2f, I) AXON_T_LIFT1(V, abs, V) AXON_T_LIFT1(V, rsqrt_estimate, V)
  AXON_T_LIFT1(M, pos_finite, V) AXON_T_LIFT1(V, reduce16, V)
  AXON_T_LIFT2(I, iadd, I, I) AXON_T_LIFT2(I, isub, I, I) AXON_T_LIFT2(I, iand, I, I)
  AXON_T_LIFT2(V, copysign, V, V) AXON_T_LIFT2(V, min_nan, V, V) AXON_T_LIFT2(V, max_nan, V, V)
  AXON_T_LIFT2(M, lt, V, V) AXON_T_LIFT2(M, ge, V, V) AXON_T_LIFT2(M, eq, V, V) AXON_T_LIFT2(M, not_ge, V, V)
  AXON_T_LIFT2(V, scale2, V, V) AXON_T_LIFT2(V, add_exponent, V, I) AXON_T_LIFT2(V, scale2_floor, V, V)
  static constexpr bool has_reduce16 = B::has_reduce16;
  static constexpr bool has_exponent_add = B::has_exponent_add;
  static bool all_abs_le(V a, float c) {  // every vector's test, then one branch on the conjunction
    bool ok = true;
    AXON_T_EACH(ok &= B::all_abs_le(a.v[i], c))
    return ok;
  }
  static I shl(I a, int s) { AXON_T_MAP(I, B::shl(a.v[i], s)) }
  static V table16(const float* tab, V u) { AXON_T_MAP(V, B::table16(tab, u.v[i])) }
#undef AXON_T_LIFT1
#undef AXON_T_LIFT2
#undef AXON_T_LIFT3
};
#undef AXON_T_MAP
)AXON";

// The algorithms, once for every ISA. Coefficients: tools/fit_vector_math.py.
constexpr const char* kAlgorithms = R"AXON(
// Every routine is inlined into its caller: on a tuple (axon_vm_tuple) it is
// N times the code, past what GCC inlines on its own, and a call would take
// the tuples through memory (s6 SiLU ran 2x slower so).
#define AXON_VM_INLINE __attribute__((always_inline))
// exp: x = n ln2 + r, |r| <= ln2/2; e^r = 1 + r + r^2 P(r); result r-part * 2^n.
template <class T> static inline AXON_VM_INLINE typename T::V axon_vm_exp_of_reduced(typename T::V x, typename T::V n) {
  using V = typename T::V;
  V r = T::fnma(n, T::set(0x1.62e43p-1f), x);
  r = T::fnma(n, T::set(-0x1.05c61p-29f), r);
  V p = T::set(0x1.6a2256p-10f);
  p = T::fma(p, r, T::set(0x1.123b02p-7f));
  p = T::fma(p, r, T::set(0x1.5558f8p-5f));
  p = T::fma(p, r, T::set(0x1.55549p-3f));
  p = T::fma(p, r, T::set(0x1.fffffcp-2f));
  p = T::fma(T::mul(r, r), p, r);
  return T::add(p, T::set(1.0f));
}

// n is x log2 e rounded to the nearest integer (ties to even), from the
// exact product: the FMA adds 1.5 * 2^23, which rounds there and leaves n in
// the low mantissa bits of u (|x log2 e| < 2^22 after the clamp). Every ISA
// and both paths take n so; rounding the product fl(x log2 e) instead can
// give the other neighbour near a half-integer, and the bits would depend on
// whether the compiler fused a multiply and an add.
//
// The fast path, where a traits has_exponent_add (AVX2, whose two-step
// scale2 costs ten instructions): when every lane has |x| <= 86, n is in
// [-124, 124] and needs no clamp, the r-part in [0.7, 1.42] times 2^n is
// normal, so adding n to its exponent field is the exact product, and u << 23
// is n << 23. Same bits as the general path; a vector with any lane out of
// range (or NaN) takes that.
template <class T> static inline AXON_VM_INLINE typename T::V axon_vm_exp(typename T::V x) {
  using V = typename T::V;
  if constexpr (T::has_exponent_add) {
    if (T::all_abs_le(x, 86.0f)) {
      V u = T::fma(x, T::set(0x1.715476p+0f), T::set(0x1.8p23f));
      V n = T::sub(u, T::set(0x1.8p23f));
      return T::add_exponent(axon_vm_exp_of_reduced<T>(x, n), T::shl(T::as_int(u), 23));
    }
  }
  x = T::max_nan(T::min_nan(x, T::set(88.8f)), T::set(-104.0f));  // n in [-150, 128]
  V n = T::sub(T::fma(x, T::set(0x1.715476p+0f), T::set(0x1.8p23f)), T::set(0x1.8p23f));
  return T::scale2(axon_vm_exp_of_reduced<T>(x, n), n);
}

// exp2: t = k + f with k the nearest multiple of 1/16 and |f| <= 1/32;
// 2^t = 2^floor(k) * 2^(j/16) * 2^f, j = 16 (k - floor(k)), with 2^(j/16)
// from a 16-entry table and 2^f = 1 + f Q(f), Q of degree 2. Adding 1.5 * 2^19
// rounds t to the 1/16 grid and leaves 16 k in the low mantissa bits of u
// (j in the low 4). This part returns 2^(j/16) 2^f, in [0.97, 2).
template <class T> static inline AXON_VM_INLINE typename T::V axon_vm_exp2_fraction(typename T::V t, typename T::V u, typename T::V k) {
  using V = typename T::V;
  static const float tab[16] = {
      0x1p+0f,       0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f, 0x1.306fep+0f,  0x1.3dea64p+0f,
      0x1.4bfdaep+0f, 0x1.5ab07ep+0f, 0x1.6a09e6p+0f, 0x1.7a1148p+0f, 0x1.8ace54p+0f, 0x1.9c4918p+0f,
      0x1.ae89fap+0f, 0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f};
  V f;
  if constexpr (T::has_reduce16) f = T::reduce16(t);
  else f = T::sub(t, k);  // exact
  V tj = T::table16(tab, u);
  V q = T::set(0x1.c6ac6ap-5f);
  q = T::fma(q, f, T::set(0x1.ebfff4p-3f));
  q = T::fma(q, f, T::set(0x1.62e43p-1f));
  return T::fma(T::mul(tj, f), q, tj);
}

// Fast path (has_exponent_add, as for exp): |t| <= 125 gives floor(k) in
// [-125, 125] and a normal result. (16 k) << 19 is floor(k) << 23 plus j << 19
// (the 1.5 * 2^19 in u's high bits shifts out), so masking the low 23 bits
// leaves floor(k) << 23: the floor of a two's-complement fixed-point number.
template <class T> static inline AXON_VM_INLINE typename T::V axon_vm_exp2(typename T::V t) {
  using V = typename T::V;
  if constexpr (T::has_exponent_add) {
    if (T::all_abs_le(t, 125.0f)) {
      V u = T::add(t, T::set(0x1.8p19f));
      V k = T::sub(u, T::set(0x1.8p19f));
      typename T::I floor_k = T::iand(T::shl(T::as_int(u), 19), T::iset(static_cast<std::int32_t>(0xff800000u)));
      return T::add_exponent(axon_vm_exp2_fraction<T>(t, u, k), floor_k);
    }
  }
  // Without reduce16, t - k needs t finite: clamp to [-151, 129], past which
  // the result is 0 or inf anyway. With it, reduce16(+-inf) = 0 and scalef
  // takes any k (inf, NaN, huge), so there is no clamp.
  if constexpr (!T::has_reduce16) t = T::max_nan(T::min_nan(t, T::set(129.0f)), T::set(-151.0f));
  V u = T::add(t, T::set(0x1.8p19f));
  V k = T::sub(u, T::set(0x1.8p19f));
  return T::scale2_floor(axon_vm_exp2_fraction<T>(t, u, k), k);
}

// log: x = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact);
// log(1+f) = f - f^2/2 + f^3 P(f); result e ln2 + log(1+f).
template <class T> static inline AXON_VM_INLINE typename T::V axon_vm_log(typename T::V x) {
  using V = typename T::V; using I = typename T::I;
  auto sub = T::lt(x, T::set(0x1p-126f));  // subnormals: scale into the normal range
  V xs = T::select(sub, T::mul(x, T::set(0x1p23f)), x);
  V eadj = T::select(sub, T::set(-23.0f), T::set(0.0f));
  I ix = T::isub(T::as_int(xs), T::iset(0x3f3504f3));
  V e = T::add(T::i2f(T::sra23(ix)), eadj);
  V m = T::as_float(T::iadd(T::iand(ix, T::iset(0x007fffff)), T::iset(0x3f3504f3)));
  V f = T::sub(m, T::set(1.0f));
  V p = T::set(-0x1.38b576p-4f);
  p = T::fma(p, f, T::set(0x1.055b68p-3f));
  p = T::fma(p, f, T::set(-0x1.0d8542p-3f));
  p = T::fma(p, f, T::set(0x1.22da1ep-3f));
  p = T::fma(p, f, T::set(-0x1.547244p-3f));
  p = T::fma(p, f, T::set(0x1.99a008p-3f));
  p = T::fma(p, f, T::set(-0x1.000226p-2f));
  p = T::fma(p, f, T::set(0x1.555554p-2f));
  p = T::fma(p, f, T::set(-0.5f));
  V y = T::fma(T::mul(f, f), p, f);
  y = T::fma(e, T::set(-0x1.05c61p-29f), y);
  y = T::fma(e, T::set(0x1.62e43p-1f), y);
  V inf = T::set(__builtin_huge_valf());
  y = T::select(T::eq(x, inf), inf, y);
  y = T::select(T::not_ge(x, T::set(0.0f)), T::set(__builtin_nanf("")), y);  // x < 0 or NaN
  return T::select(T::eq(x, T::set(0.0f)), T::set(-__builtin_huge_valf()), y);
}

// tanh: |x| < 0.625: x + x^3 P(x^2); else 1 - 2/(e^{2|x|} + 1) with the sign of x.
template <class T> static inline AXON_VM_INLINE typename T::V axon_vm_tanh(typename T::V x) {
  using V = typename T::V;
  V a = T::abs(x);  // tanh(|x|), then the sign of x (so that tanh(-0) = -0)
  V x2 = T::mul(a, a);
  V p = T::set(0x1.18e1ep-9f);
  p = T::fma(p, x2, T::set(-0x1.0bf4fep-7f));
  p = T::fma(p, x2, T::set(0x1.638b58p-6f));
  p = T::fma(p, x2, T::set(-0x1.b9ee9p-5f));
  p = T::fma(p, x2, T::set(0x1.111066p-3f));
  p = T::fma(p, x2, T::set(-0x1.555554p-2f));
  V small = T::fma(a, T::mul(x2, p), a);
  V e = axon_vm_exp<T>(T::add(T::min_nan(a, T::set(9.5f)), T::min_nan(a, T::set(9.5f))));
  V big = T::sub(T::set(1.0f), T::div(T::set(2.0f), T::add(e, T::set(1.0f))));
  return T::copysign(T::select(T::lt(a, T::set(0.625f)), small, big), x);
}

// sigmoid: e = exp(-|x|); x >= 0: 1/(1+e), else e/(1+e) (no overflow, and
// subnormal results for x < -87.3 come out of exp itself).
template <class T> static inline AXON_VM_INLINE typename T::V axon_vm_sigmoid(typename T::V x) {
  using V = typename T::V;
  V e = axon_vm_exp<T>(T::sub(T::set(0.0f), T::abs(x)));
  V num = T::select(T::ge(x, T::set(0.0f)), T::set(1.0f), e);
  return T::div(num, T::add(T::set(1.0f), e));
}

// rsqrt: an estimate y0 (AVX-512: the 14-bit rsqrt14; AVX2 and scalar:
// 1/sqrt, within 1.5 ulp) and one Newton step y0 + y0 (1 - x y0^2) / 2 whose
// residual is computed almost exactly (x y0 split into t + te by an FMA).
// Lanes that are not positive finite keep the estimate, which is exact there
// (+0 -> +inf, -0 -> -inf, inf -> 0, negative or NaN -> NaN).
template <class T> static inline AXON_VM_INLINE typename T::V axon_vm_rsqrt(typename T::V x) {
  using V = typename T::V;
  V y0 = T::rsqrt_estimate(x);
  V t = T::mul(x, y0);
  V te = T::fms(x, y0, t);
  V e = T::fnma(t, y0, T::set(1.0f));
  e = T::fnma(te, y0, e);
  V y1 = T::fma(T::mul(y0, T::set(0.5f)), e, y0);
  return T::select(T::pos_finite(x), y1, y0);
}

// erf: |x| < 1: x + x P(x^2); else 1 - exp(R(|x| - 2.5)) with R ~ log erfc,
// |x| clamped to 3.95 where erf rounds to 1, with the sign of x.
template <class T> static inline AXON_VM_INLINE typename T::V axon_vm_erf(typename T::V x) {
  using V = typename T::V;
  V a = T::abs(x);
  V x2 = T::mul(x, x);
  V p = T::set(0x1.496aaep-14f);
  p = T::fma(p, x2, T::set(-0x1.a3f732p-11f));
  p = T::fma(p, x2, T::set(0x1.5405bap-8f));
  p = T::fma(p, x2, T::set(-0x1.b7f90ep-6f));
  p = T::fma(p, x2, T::set(0x1.ce2cf8p-4f));
  p = T::fma(p, x2, T::set(-0x1.81273ep-2f));
  p = T::fma(p, x2, T::set(0x1.06eba8p-3f));
  V small = T::fma(x, p, x);
  V t = T::sub(T::min_nan(a, T::set(3.95f)), T::set(2.5f));
  V q = T::set(-0x1.3922ecp-22f);
  q = T::fma(q, t, T::set(-0x1.1d32e2p-20f));
  q = T::fma(q, t, T::set(0x1.a9ca46p-21f));
  q = T::fma(q, t, T::set(-0x1.a2084cp-17f));
  q = T::fma(q, t, T::set(0x1.493e38p-14f));
  q = T::fma(q, t, T::set(-0x1.b85466p-12f));
  q = T::fma(q, t, T::set(0x1.1bd48ap-9f));
  q = T::fma(q, t, T::set(-0x1.63ce6ap-7f));
  q = T::fma(q, t, T::set(-0x1.e3460ep-1f));
  q = T::fma(q, t, T::set(-0x1.569252p+2f));
  q = T::fma(q, t, T::set(-0x1.f3a2dcp+2f));
  V big = T::sub(T::set(1.0f), axon_vm_exp<T>(q));
  return T::select(T::lt(a, T::set(1.0f)), small, T::copysign(big, x));
}
)AXON";

// The public names, one overload set per ISA, and one for tuples of its vectors.
std::string overloads(const char* vtype, const char* traits) {
  std::string out;
  const char* names[] = {"exp", "log", "tanh", "sigmoid", "rsqrt", "erf", "exp2"};
  for (const char* n : names)
    out += std::string("static inline ") + vtype + " axon_v" + n + "(" + vtype + " x) { return axon_vm_" + n + "<" +
           traits + ">(x); }\n";
  out += std::string("static inline ") + vtype + " axon_vsqrt(" + vtype + " x) { return " + traits + "::sqrt(x); }\n";
  if (std::string(vtype) == "float") return out;
  const std::string tv = std::string("axon_t<") + vtype + ", N>", tt = std::string("axon_vm_tuple<") + traits + ", N>";
  for (const char* n : names)
    out += "template <int N> static inline AXON_VM_INLINE " + tv + " axon_v" + n + "(" + tv + " x) { return axon_vm_" + n +
           "<" + tt + ">(x); }\n";
  out += "template <int N> static inline AXON_VM_INLINE " + tv + " axon_vsqrt(" + tv + " x) { return " + tt +
         "::sqrt(x); }\n";
  return out;
}

}  // namespace

std::string vector_math_source(int vector_bits) {
  AXON_CHECK(vector_bits == 0 || vector_bits == 256 || vector_bits == 512)
      << "vector_math_source: vector_bits must be 0, 256 or 512, not " << vector_bits;
  // Each part is guarded, so pasting the text twice into one translation
  // unit (even for different widths) defines everything once.
  std::string s = "#ifndef AXON_VM_SCALAR\n#define AXON_VM_SCALAR\n";
  s += kScalarTraits;
  s += kAlgorithms;
  s += kTupleTraits;
  s += overloads("float", "axon_vm_f32");
  s += "#endif\n";
  if (vector_bits >= 256) {
    s += "#ifndef AXON_VM_AVX2\n#define AXON_VM_AVX2\n";
    s += kAvx2Traits;
    s += overloads("__m256", "axon_vm_avx2");
    s += "#endif\n";
  }
  if (vector_bits == 512) {
    s += "#ifndef AXON_VM_AVX512\n#define AXON_VM_AVX512\n";
    s += kAvx512Traits;
    s += overloads("__m512", "axon_vm_avx512");
    s += "#endif\n";
  }
  s += "// ---- end of axon vector math ----\n";
  return s;
}

const std::vector<std::string>& vector_math_functions() {
  static const std::vector<std::string> names = {"exp", "log", "tanh", "sigmoid", "sqrt", "rsqrt", "erf", "exp2"};
  return names;
}

KernelSource vector_math_sweep_kernel(int vector_bits) {
  KernelSource k;
  k.entry = "axon_vm_apply";
  k.header = "#pragma once\n#include <cstdint>\nextern \"C\" void axon_vm_apply(const std::int32_t* fn, const float* in, float* out, const std::int64_t* n);\n";
  std::string s = "#include <immintrin.h>\n#include <cmath>\n#include <cstdint>\n#include \"kernel.h\"\n";
  s += vector_math_source(vector_bits);
  // One loop per function, the vector body first, then the scalar tail.
  const char* load = vector_bits == 512 ? "_mm512_loadu_ps" : "_mm256_loadu_ps";
  const char* store = vector_bits == 512 ? "_mm512_storeu_ps" : "_mm256_storeu_ps";
  int lanes = vector_bits / 32;
  s += "extern \"C\" void axon_vm_apply(const std::int32_t* fn, const float* in, float* out, const std::int64_t* n) {\n";
  s += "  std::int64_t i = 0, count = *n;\n  switch (*fn) {\n";
  const auto& names = vector_math_functions();
  for (size_t f = 0; f < names.size(); ++f) {
    s += "    case " + std::to_string(f) + ":\n";
    if (vector_bits > 0)
      s += "      for (; i + " + std::to_string(lanes) + " <= count; i += " + std::to_string(lanes) + ") " + store +
           "(out + i, axon_v" + names[f] + "(" + load + "(in + i)));\n";
    s += "      for (; i < count; ++i) out[i] = axon_v" + names[f] + "(in[i]);\n      break;\n";
  }
  s += "  }\n}\n";
  k.source = s;
  return k;
}

std::vector<std::string> vector_math_flags(int vector_bits) {
  std::vector<std::string> f = {"-O2", "-ffp-contract=off"};
  if (vector_bits == 512) f.insert(f.end(), {"-mavx512f", "-mavx512dq", "-mavx2", "-mfma"});
  if (vector_bits == 256) f.insert(f.end(), {"-mavx2", "-mfma"});
  if (vector_bits == 0) f.push_back("-mfma");
  f.insert(f.end(), {"-fPIC", "-shared"});
  return f;
}

double vector_math_reference(int fn, float xf) {
  double x = xf;
  switch (fn) {
    case 0: return std::exp(x);
    case 1: return std::log(x);
    case 2: return std::tanh(x);
    case 3: return 1.0 / (1.0 + std::exp(-x));
    case 4: return std::sqrt(x);
    case 5: return 1.0 / std::sqrt(x);
    case 6: return std::erf(x);
    case 7: return std::exp2(x);
  }
  AXON_CHECK(false) << "vector_math_reference: no function " << fn;
  return 0;
}

double ulp_error(float got, double exact) {
  float rounded = static_cast<float>(exact);
  bool got_special = std::isnan(got) || std::isinf(got);
  bool exact_special = std::isnan(rounded) || std::isinf(rounded);
  if (got_special || exact_special) {
    if (std::isnan(got) && std::isnan(rounded)) return 0;
    if (got == rounded) return 0;
    return std::numeric_limits<double>::infinity();
  }
  double a = std::fabs(exact);
  int e = a > 0 ? std::ilogb(a) : -127;
  double ulp = std::ldexp(1.0, (e < -126 ? -126 : e) - 23);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

const std::vector<VectorMathAccuracy>& vector_math_accuracy() {
  // Exhaustive maxima over every float32 input, all three ISAs
  // (docs/vector_math.md), rounded up.
  static const std::vector<VectorMathAccuracy> table = {
      {"exp", 1.05, "all float32"},
      {"log", 1.0, "all float32"},
      {"tanh", 1.4, "all float32"},
      {"sigmoid", 2.45, "all float32"},
      {"sqrt", 0.5, "all float32"},
      {"rsqrt", 0.6, "all float32"},
      {"erf", 1.9, "all float32"},
      {"exp2", 1.0, "all float32"},
  };
  return table;
}

}  // namespace axon::codegen
