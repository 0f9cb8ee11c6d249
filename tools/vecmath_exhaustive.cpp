// axon_vecmath_exhaustive: the accuracy evidence for the vector math of
// generated CPU kernels (src/codegen/cpu/vector_math.h).
//
// Compiles the emitted source once per ISA (runtime::compile_shared), runs
// every function on every float32 bit pattern (or every --stride'th one),
// compares with the float64 libm rounded nowhere, and prints the maximum
// error in ulps per function and ISA. --write-doc replaces the table between
// the markers in docs/vector_math.md. --bench times each function against
// the std:: float loop, one thread.
//
//   build/axon_vecmath_exhaustive [--threads 2] [--stride 1] [--isa 512,256,0]
//                                 [--write-doc docs/vector_math.md [--section accuracy]] [--bench]
//                                 [--only exp2,log]
// (--write-doc replaces the section "<!-- begin NAME -->" ... "<!-- end NAME -->"
// with the accuracy table only after a full sweep, --stride 1.)
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen/cpu/vector_math.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "runtime/time_calls.h"

using namespace axon;

namespace {

struct Worst {
  double ulp = 0;
  float input = 0, got = 0;
  double exact = 0;
};

struct Isa {
  int bits;
  const char* name;
};

constexpr int kChunk = 1 << 16;

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void apply(const runtime::LoadedKernel& k, int32_t fn, const float* in, float* out, int64_t n) {
  k.call({&fn, const_cast<float*>(in), out, &n});
}

// One thread's share: chunks t, t + threads, ... of the 2^32 patterns.
void sweep(const std::vector<const runtime::LoadedKernel*>& kernels, const std::vector<bool>& picked, uint64_t stride,
           int t, int threads, std::vector<std::vector<Worst>>& worst /* [isa][fn] */) {
  size_t nf = codegen::vector_math_functions().size();
  std::vector<float> in(kChunk), out(kChunk);
  std::vector<double> ref(kChunk);
  uint64_t total = (uint64_t{1} << 32) / stride;
  for (uint64_t c = t; c * kChunk < total; c += threads) {
    int64_t n = static_cast<int64_t>(std::min<uint64_t>(kChunk, total - c * kChunk));
    for (int64_t i = 0; i < n; ++i) in[i] = from_bits(static_cast<uint32_t>((c * kChunk + i) * stride));
    for (size_t f = 0; f < nf; ++f) {
      if (!picked[f]) continue;
      for (int64_t i = 0; i < n; ++i) ref[i] = codegen::vector_math_reference(static_cast<int>(f), in[i]);
      for (size_t k = 0; k < kernels.size(); ++k) {
        apply(*kernels[k], static_cast<int32_t>(f), in.data(), out.data(), n);
        Worst& w = worst[k][f];
        for (int64_t i = 0; i < n; ++i) {
          double e = codegen::ulp_error(out[i], ref[i]);
          if (e > w.ulp) w = {e, in[i], out[i], ref[i]};
        }
      }
    }
  }
}

// Median ns per element of fn over a 4096-float array (stays in L1).
template <class F>
double ns_per_element(F&& fn) {
  runtime::Timing t = runtime::time_calls(fn, 3, 20, 0.3);
  return t.median_ms * 1e6 / 4096;
}

std::string bench_table(const std::vector<Isa>& isas, const std::vector<const runtime::LoadedKernel*>& kernels) {
  const auto& names = codegen::vector_math_functions();
  std::vector<float> in(4096), out(4096);
  std::ostringstream os;
  os << "| function | std:: float loop |";
  for (const Isa& i : isas) os << " " << i.name << " |";
  os << "\n|---|---|";
  for (size_t i = 0; i < isas.size(); ++i) os << "---|";
  os << "\n";
  for (size_t f = 0; f < names.size(); ++f) {
    // Inputs where the function is finite and not trivially saturated.
    for (int i = 0; i < 4096; ++i) {
      float u = (i * 0.6180339887f) - std::floor(i * 0.6180339887f);
      in[i] = names[f] == "log" || names[f] == "sqrt" || names[f] == "rsqrt" ? 1e-3f + 100 * u : -10 + 20 * u;
    }
    volatile float sink = 0;
    auto std_loop = [&] {
      for (int i = 0; i < 4096; ++i) {
        float x = in[i];
        float y = 0;
        switch (f) {
          case 0: y = std::exp(x); break;
          case 1: y = std::log(x); break;
          case 2: y = std::tanh(x); break;
          case 3: y = 1.0f / (1.0f + std::exp(-x)); break;
          case 4: y = std::sqrt(x); break;
          case 5: y = 1.0f / std::sqrt(x); break;
          case 6: y = std::erf(x); break;
        }
        out[i] = y;
      }
      sink = out[17];
    };
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", ns_per_element(std_loop));
    os << "| " << names[f] << " | " << buf << " |";
    for (size_t k = 0; k < kernels.size(); ++k) {
      std::snprintf(buf, sizeof buf, "%.3f",
                    ns_per_element([&] { apply(*kernels[k], static_cast<int32_t>(f), in.data(), out.data(), 4096); }));
      os << " " << buf << " |";
    }
    os << "\n";
    (void)sink;
  }
  return os.str();
}

std::string fmt_ulp(double u) {
  if (std::isinf(u)) return "inf";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", u);
  return b;
}

std::string hexfloat(double v) {
  char b[48];
  std::snprintf(b, sizeof b, "%a", v);
  return b;
}

// Replaces the text between "<!-- begin NAME -->" and "<!-- end NAME -->".
bool replace_section(const std::string& path, const std::string& name, const std::string& body) {
  std::ifstream f(path);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  std::string doc = ss.str();
  std::string b = "<!-- begin " + name + " -->\n", e = "<!-- end " + name + " -->";
  size_t p = doc.find(b), q = doc.find(e);
  if (p == std::string::npos || q == std::string::npos || q < p) return false;
  doc = doc.substr(0, p + b.size()) + body + doc.substr(q);
  std::ofstream(path) << doc;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  uint64_t stride = 1;
  std::string doc, section = "accuracy", isa_list = "512,256,0", only;
  bool bench = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--threads") threads = std::stoi(next());
    else if (a == "--stride") stride = std::stoull(next());
    else if (a == "--isa") isa_list = next();
    else if (a == "--write-doc") doc = next();
    else if (a == "--section") section = next();
    else if (a == "--bench") bench = true;
    else if (a == "--only") only = next();
    else {
      std::fprintf(stderr, "usage: %s [--threads N] [--stride S] [--isa 512,256,0] [--write-doc FILE [--section NAME]] [--bench] [--only F,G]\n", argv[0]);
      return 1;
    }
  }
  std::vector<Isa> isas;
  for (const char* tok : {"512", "256", "0"})
    if (("," + isa_list + ",").find(std::string(",") + tok + ",") != std::string::npos) {
      int bits = std::atoi(tok);
      if (bits == 512 && !__builtin_cpu_supports("avx512f")) {
        std::printf("skipping AVX-512: this CPU has no avx512f\n");
        continue;
      }
      isas.push_back({bits, bits == 512 ? "AVX-512" : bits == 256 ? "AVX2" : "scalar"});
    }
  std::vector<runtime::LoadedKernel> loaded;
  std::vector<const runtime::LoadedKernel*> kernels;
  for (const Isa& i : isas) {
    runtime::CompileOptions o;
    o.flags = codegen::vector_math_flags(i.bits);
    loaded.emplace_back(runtime::compile_shared(codegen::vector_math_sweep_kernel(i.bits), o), "axon_vm_apply");
  }
  for (auto& k : loaded) kernels.push_back(&k);

  const auto& names = codegen::vector_math_functions();
  // --only: a subset of the functions, for a quick sweep; the document's
  // table lists every function, so it is not rewritten from a subset.
  std::vector<bool> picked(names.size(), only.empty());
  for (size_t f = 0; f < names.size(); ++f)
    picked[f] = picked[f] || ("," + only + ",").find("," + names[f] + ",") != std::string::npos;
  if (std::find(picked.begin(), picked.end(), true) == picked.end()) {
    std::fprintf(stderr, "--only %s: no such function\n", only.c_str());
    return 1;
  }
  if (!only.empty() && !doc.empty()) {
    std::fprintf(stderr, "--write-doc needs every function; drop --only\n");
    return 1;
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<std::vector<Worst>>> per_thread(
      threads, std::vector<std::vector<Worst>>(isas.size(), std::vector<Worst>(names.size())));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sweep(kernels, picked, stride, t, threads, per_thread[t]); });
  for (auto& th : pool) th.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::ostringstream table;
  table << "| function | bound |";
  for (const Isa& i : isas) table << " " << i.name << " |";
  table << " worst input (first ISA) |\n|---|---|";
  for (size_t i = 0; i < isas.size(); ++i) table << "---|";
  table << "---|\n";
  bool within = true;
  for (size_t f = 0; f < names.size(); ++f) {
    if (!picked[f]) continue;
    double bound = codegen::vector_math_accuracy()[f].max_ulp;
    table << "| " << names[f] << " | " << bound << " |";
    Worst first;
    for (size_t k = 0; k < isas.size(); ++k) {
      Worst w;
      for (int t = 0; t < threads; ++t)
        if (per_thread[t][k][f].ulp > w.ulp) w = per_thread[t][k][f];
      if (k == 0) first = w;
      within = within && w.ulp <= bound;
      table << " " << fmt_ulp(w.ulp) << " |";
    }
    table << " x = " << hexfloat(first.input) << ": got " << hexfloat(first.got) << ", exact " << hexfloat(first.exact)
          << " |\n";
  }
  char head[256];
  std::snprintf(head, sizeof head, "%s float32 inputs (stride %llu) per function, max error in ulps, %d threads, %.0f s\n\n",
                stride == 1 ? "All 2^32" : "Every stride'th of the 2^32", static_cast<unsigned long long>(stride),
                threads, secs);
  std::string text = std::string(head) + table.str();
  std::printf("%s", text.c_str());
  std::string bench_text;
  if (bench) {
    bench_text = bench_table(isas, kernels);
    std::printf("\nns per element, one thread, 4096-float arrays in L1:\n\n%s", bench_text.c_str());
  }
  if (!doc.empty()) {
    // Only a full sweep is evidence enough for the document.
    if (stride == 1 && !replace_section(doc, section, text))
      std::fprintf(stderr, "no %s markers in %s\n", section.c_str(), doc.c_str());
    if (bench && !replace_section(doc, "throughput", bench_text))
      std::fprintf(stderr, "no throughput markers in %s\n", doc.c_str());
  }
  if (!within) std::printf("\nSOME FUNCTION IS OVER ITS DOCUMENTED BOUND\n");
  return within ? 0 : 3;
}
