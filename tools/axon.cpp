// axon: the command line. A thin layer over the library: parse flags, call
// it, print text or JSON, turn errors into exit codes:
//   0 success (verify: accept), 1 a user error (bad spec or usage), 2 an
//   internal error of axon, 3 a kernel that failed its check (verify: reject).
#include <algorithm>
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "bench/bench.h"
#include "codegen/c_like/naive_cpp.h"
#include "backend/backend.h"
#include "frontend/spec.h"
#include "gate/gate.h"
#include "gate/report.h"
#include "ir/printer.h"
#include "optimize/optimize.h"
#include "propose/proposer.h"
#include "rewrite/explain.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "runtime/time_calls.h"
#include "schedule/schedule.h"
#include "support/npy.h"
#include "target/target.h"
#include "tile/pipeline.h"
#include "tile/print.h"
#include "codegen/c_like/tile_cpp.h"
#include "transforms/pipeline.h"
#include "runtime/run_check.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Common {
  std::string spec;
  std::string entry;
  std::vector<std::string> defines;
  bool json = false;
};

void add_common(CLI::App* cmd, Common& c) {
  cmd->add_option("spec", c.spec, "numpy spec file (.py)")->required();
  cmd->add_option("--entry", c.entry, "function to compile (default: the last fully annotated one)");
  cmd->add_option("-D,--define", c.defines, "bind a named dimension: -D M=1024");
  cmd->add_flag("--json", c.json, "print machine-readable results");
}

axon::frontend::SpecOptions spec_options(const Common& c) {
  axon::frontend::SpecOptions o;
  o.entry = c.entry;
  for (const std::string& d : c.defines) {
    size_t eq = d.find('=');
    std::string name = d.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : d.substr(eq + 1);
    char* end = nullptr;
    long long v = value.empty() ? -1 : std::strtoll(value.c_str(), &end, 10);
    if (eq == std::string::npos || name.empty() || value.empty() || *end != '\0' || v < 0)
      throw axon::Diagnostic(axon::SourceLoc{"-D", 0, 0},
                             "expected -D NAME=SIZE with a non-negative integer size, got '" + d + "'");
    o.dims[name] = v;
  }
  return o;
}

axon::frontend::Spec load(const Common& c) {
  auto spec = axon::frontend::load_spec(c.spec, spec_options(c));
  spec.graph = axon::transforms::run_pipeline(std::move(spec.graph));
  return spec;
}

json type_json(const axon::ir::Type& t) { return axon::ir::type_str(t); }

json signature_json(const axon::ir::Graph& g) {
  json j;
  j["entry"] = g.entry;
  for (const auto& p : g.params) j["params"].push_back({{"name", p.name}, {"type", type_json(p.type)}});
  for (auto o : g.outputs) j["outputs"].push_back(type_json(g[o].type));
  return j;
}

int cmd_check(const Common& c) {
  auto spec = load(c);
  if (c.json) {
    json j = signature_json(spec.graph);
    j["spec"] = c.spec;
    j["ir"] = axon::ir::print(spec.graph);
    j["nodes"] = spec.graph.size();
    char hash[32];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(spec.graph.structural_hash()));
    j["hash"] = hash;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << axon::ir::print(spec.graph);
  }
  return 0;
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
  if (!f) throw axon::Diagnostic(axon::SourceLoc{p.string(), 0, 0}, "cannot write " + p.string());
}

// The schedule of `axon compile --schedule`: a JSON object of knobs, or a
// file holding one or holding an optimize report.json (its "schedule").
// Knobs left out take the space's defaults; a knob the space lacks, or an
// illegal point, is an error that lists what would be accepted. A report
// whose winner is the naive kernel gives no schedule (nullopt).
std::optional<axon::schedule::Schedule> schedule_for_compile(const axon::ir::Graph& g, const std::string& text,
                                              const axon::target::Target& t) {
  namespace sch = axon::schedule;
  json j;
  std::string where = "--schedule";
  size_t first = text.find_first_not_of(" \t\n");
  if (first != std::string::npos && text[first] == '{') {
    j = json::parse(text, nullptr, false);
    if (j.is_discarded()) throw axon::Diagnostic(axon::SourceLoc{}, "--schedule: not valid JSON: " + text);
  } else {
    std::ifstream f(text);
    if (!f) throw axon::Diagnostic(axon::SourceLoc{text, 0, 0}, "--schedule: cannot read " + text);
    j = json::parse(f, nullptr, false);
    if (j.is_discarded()) throw axon::Diagnostic(axon::SourceLoc{text, 0, 0}, "not valid JSON");
    where = text;
    if (j.is_object() && j.contains("schedule") && j["schedule"].is_object()) {
      // A report: its schedule belongs to the graph its winner came from.
      if (j.contains("rewrites") && j["rewrites"].contains("applied") && !j["rewrites"]["applied"].empty()) {
        throw axon::Diagnostic(axon::SourceLoc{text, 0, 0},
                               "the report's kernel was found on a rewritten graph (" +
                                   j["rewrites"]["applied"][0].value("rule", std::string("a rewrite")) +
                                   "); --schedule applies to the spec as written, so use the report's kernel.cpp");
      }
      // The naive kernel won: that is the report's kernel.
      if (j.value("variant", std::string()) == "naive") return std::nullopt;
      j = j["schedule"];
    }
  }
  sch::Schedule given = sch::schedule_from_json(j);
  std::unique_ptr<axon::backend::Backend> be = axon::backend::cpu_backend(t);
  sch::Space space = be->space(g);
  sch::Schedule s = sch::default_schedule(space);
  for (const auto& [name, value] : given) {
    if (!space.find(name)) {
      std::string known;
      for (const auto& k : space.knobs) known += (known.empty() ? "" : ", ") + k.name;
      throw axon::Diagnostic(axon::SourceLoc{where, 0, 0}, "knob '" + name + "' is not in this graph's space (" +
                                                               (known.empty() ? "no knobs" : known) + ")");
    }
    s[name] = value;
  }
  std::string why = be->why_illegal(g, s);
  if (!why.empty())
    throw axon::Diagnostic(axon::SourceLoc{where, 0, 0}, "schedule " + sch::to_json(s).dump() + " is illegal: " + why);
  return s;
}

struct LowerFlags {
  std::string pipeline = "naive";
  std::string after;
  int threads = 1;
  bool cpp = false;
  std::string schedule;  // stages: a schedule instead of the default
};

// The C++ of a lowered program, its vector loops in this machine's widest ISA.
std::string lowered_cpp(const axon::tile::Kernel& k, const axon::ir::Graph& g) {
  axon::target::Target t = axon::target::resolve_target("", false, false);
  axon::codegen::TileCppOptions o;
  o.vector_bits = t.isa.vector_bits() >= 256 ? t.isa.vector_bits() : 0;
  return axon::codegen::print_tile_cpp(k, g, "a kernel", o).source;
}

// Prints the tile program after each pass of a pipeline (docs/tile_ir.md).
int cmd_lower(const Common& c, const LowerFlags& f) {
  auto spec = load(c);
  if (f.pipeline == "stages") {
    // What emit_cpu prints at this host's default schedule (or the one
    // given), stage by stage.
    for (const char* flag : {"--after", "--threads", "--cpp"})
      if ((std::string(flag) == "--after" && !f.after.empty()) || (std::string(flag) == "--threads" && f.threads != 1) ||
          (std::string(flag) == "--cpp" && f.cpp))
        throw axon::Diagnostic(axon::SourceLoc{}, std::string(flag) + " applies to --pipeline naive or loops, not stages");
    axon::target::Target t = axon::target::resolve_target("", false, false);
    std::unique_ptr<axon::backend::Backend> be = axon::backend::cpu_backend(t);
    axon::schedule::Schedule s = axon::schedule::default_schedule(be->space(spec.graph));
    if (!f.schedule.empty())
      if (std::optional<axon::schedule::Schedule> given = schedule_for_compile(spec.graph, f.schedule, t)) s = *given;
    auto programs = be->programs(spec.graph, s);
    if (c.json) {
      json j = signature_json(spec.graph);
      j["pipeline"] = "stages";
      j["schedule"] = axon::schedule::to_json(s);
      for (const auto& [title, program] : programs) j["stages"].push_back(json{{"stage", title}, {"program", program}});
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::cout << "# schedule " << axon::schedule::to_json(s).dump() << "\n";
    for (const auto& [title, program] : programs) std::cout << "# " << title << "\n" << program << "\n";
    return 0;
  }
  if (!f.schedule.empty())
    throw axon::Diagnostic(axon::SourceLoc{}, "--schedule applies to --pipeline stages, not " + f.pipeline);
  std::vector<axon::tile::Pass> passes;
  if (f.pipeline == "loops") {
    axon::tile::LoopsOptions o;
    o.threads = f.threads;
    passes = axon::tile::loops_pipeline(o);
  } else {
    if (f.threads != 1)
      throw axon::Diagnostic(axon::SourceLoc{}, "--threads applies to --pipeline loops, not " + f.pipeline);
    passes = axon::tile::pipeline_named(f.pipeline);
  }
  std::vector<std::string> names = {"lower"};
  for (const auto& p : passes) names.push_back(p.name);
  if (!f.after.empty() && std::find(names.begin(), names.end(), f.after) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    throw axon::Diagnostic(axon::SourceLoc{}, "--after " + f.after + ": no such pass in the " + f.pipeline +
                                                  " pipeline (" + known + ")");
  }
  std::vector<axon::tile::Stage> stages = axon::tile::run_pipeline(spec.graph, passes, spec.graph.entry);
  if (c.json) {
    json j = signature_json(spec.graph);
    j["pipeline"] = f.pipeline;
    for (const auto& st : stages) {
      if (!f.after.empty() && st.pass != f.after) continue;
      j["passes"].push_back({{"pass", st.pass}, {"program", axon::tile::print(st.kernel)}});
    }
    if (f.cpp) j["cpp"] = lowered_cpp(stages.back().kernel, spec.graph);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const auto& st : stages) {
    if (!f.after.empty() && st.pass != f.after) continue;
    std::cout << "# after " << st.pass << "\n" << axon::tile::print(st.kernel) << "\n";
  }
  if (f.cpp) std::cout << lowered_cpp(stages.back().kernel, spec.graph);
  return 0;
}

int cmd_compile(const Common& c, const std::string& out_dir, const std::string& schedule_text,
                const std::string& target_file) {
  auto spec = load(c);
  axon::codegen::KernelSource k;
  std::optional<axon::schedule::Schedule> chosen;
  // The flags axon itself compiles this kernel with (optimize's for a schedule, the naive kernel's otherwise).
  axon::runtime::CompileOptions co;
  if (schedule_text.empty()) {
    k = axon::codegen::emit_naive_cpp(spec.graph);
  } else {
    axon::target::Target t = axon::target::resolve_target(target_file, false, false);
    std::unique_ptr<axon::backend::Backend> be = axon::backend::cpu_backend(t);
    chosen = schedule_for_compile(spec.graph, schedule_text, t);
    k = chosen ? be->emit(spec.graph, *chosen) : be->emit_naive(spec.graph);
    if (chosen) co.flags = be->compile_flags(true);
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw axon::Diagnostic(axon::SourceLoc{out_dir, 0, 0}, "cannot create directory: " + ec.message());
  write_file(fs::path(out_dir) / "kernel.cpp", k.source);
  write_file(fs::path(out_dir) / "kernel.h", k.header);
  if (c.json) {
    json j = signature_json(spec.graph);
    j["kernel_cpp"] = (fs::path(out_dir) / "kernel.cpp").string();
    j["kernel_h"] = (fs::path(out_dir) / "kernel.h").string();
    if (chosen) j["schedule"] = axon::schedule::to_json(*chosen);
    j["compiler"] = co.cxx;
    j["flags"] = co.flags;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "wrote " << (fs::path(out_dir) / "kernel.cpp").string() << " and kernel.h (entry "
              << spec.graph.entry << (chosen ? ", schedule " + axon::schedule::to_json(*chosen).dump() : "")
              << ")\n";
  }
  return 0;
}

int cmd_run(const Common& c, uint64_t seed, const std::string& dump_dir, bool no_time) {
  auto spec = load(c);
  const auto& g = spec.graph;
  auto t0 = std::chrono::steady_clock::now();
  auto k = axon::codegen::emit_naive_cpp(g);
  std::string so = axon::runtime::compile_shared(k);
  double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  axon::runtime::LoadedKernel kernel(so, k.entry);
  axon::runtime::RunCheck r = axon::runtime::run_and_check(g, kernel, seed);

  axon::runtime::Timing timing{};
  if (!no_time) {
    auto bufs = axon::runtime::make_buffers(g, r.inputs);
    auto ptrs = bufs.pointers();
    timing = axon::runtime::time_calls([&] { kernel.call(ptrs); });
  }
  if (!dump_dir.empty()) {
    fs::create_directories(dump_dir);
    for (size_t i = 0; i < r.inputs.size(); ++i)
      axon::write_npy_f64(dump_dir + "/in" + std::to_string(i) + ".npy", r.inputs[i].type.shape, r.inputs[i].data);
    for (size_t j = 0; j < r.reference.size(); ++j) {
      const auto& shape = r.reference[j].type.shape;
      axon::write_npy_f64(dump_dir + "/ref" + std::to_string(j) + ".npy", shape, r.reference[j].data);
      axon::write_npy_f64(dump_dir + "/bound" + std::to_string(j) + ".npy", shape, r.bounds[j].data);
      axon::write_npy_f64(dump_dir + "/out" + std::to_string(j) + ".npy", shape, r.outputs[j].got);
    }
  }
  if (c.json) {
    json j = signature_json(g);
    j["spec"] = c.spec;
    j["seed"] = seed;
    j["within_budget"] = r.ok();
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      const auto& cmp = r.outputs[o].cmp;
      j["checks"].push_back({{"output", o},
                             {"type", type_json(g[g.outputs[o]].type)},
                             {"within_budget", cmp.ok()},
                             {"max_error_over_budget", cmp.max_error_over_budget},
                             {"max_abs_error", cmp.max_abs_error},
                             {"elements_over_budget", cmp.mismatches},
                             {"worst", {{"index", cmp.worst_index}, {"got", cmp.worst_got},
                                        {"ref", cmp.worst_ref}, {"budget", cmp.worst_budget}}}});
    }
    if (!no_time)
      j["time_ms"] = {{"naive", timing.median_ms}, {"min", timing.min_ms}, {"max", timing.max_ms},
                      {"reps", timing.reps}};
    j["interpreter_seconds"] = r.interpreter_seconds;
    j["compile_seconds"] = compile_s;
    std::cout << j.dump(2) << "\n";
  } else {
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      const auto& cmp = r.outputs[o].cmp;
      std::printf("output %zu %s: max error %.3g = %.3f of its budget%s\n", o,
                  axon::ir::type_str(g[g.outputs[o]].type).c_str(), cmp.max_abs_error, cmp.max_error_over_budget,
                  cmp.ok() ? "" : "  OVER BUDGET");
      if (!cmp.ok())
        std::printf("  worst element %lld: got %.9g, reference %.17g, budget %.3g; %lld elements over budget\n",
                    static_cast<long long>(cmp.worst_index), cmp.worst_got, cmp.worst_ref, cmp.worst_budget,
                    static_cast<long long>(cmp.mismatches));
    }
    if (!no_time)
      std::printf("naive kernel: %.3f ms median (min %.3f, max %.3f, %d runs)\n", timing.median_ms, timing.min_ms,
                  timing.max_ms, timing.reps);
  }
  return r.ok() ? 0 : 3;
}

// A word as a POSIX shell reads it back.
std::string shell_word(const std::string& w) {
  bool plain = !w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
                                 std::string::npos;
  if (plain) return w;
  std::string q = "'";
  for (char ch : w) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

struct VerifyFlags {
  std::string kernel;
  std::optional<uint64_t> seed;
  std::string keep_dir;
  double timeout_s = 0;
  double repeat_s = 5;
  bool no_sanitizer = false, no_time = false;
};

int cmd_verify(const Common& c, const VerifyFlags& f) {
  auto spec = load(c);
  std::ifstream in(f.kernel, std::ios::binary);
  if (!in) throw axon::Diagnostic(axon::SourceLoc{f.kernel, 0, 0}, "cannot read the kernel " + f.kernel);
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  axon::gate::GateOptions o;
  o.seed = f.seed;
  o.call_timeout_s = f.timeout_s;
  o.repeat_s = f.repeat_s;
  o.run_sanitizer = !f.no_sanitizer;
  o.time_kernel = !f.no_time;
  o.check_roofline = !f.no_time;
  o.work_dir = f.keep_dir;
  std::string replay = "axon verify " + shell_word(c.spec) + " " + shell_word(f.kernel);
  if (!c.entry.empty()) replay += " --entry " + shell_word(c.entry);
  for (const std::string& d : c.defines) replay += " -D " + shell_word(d);
  if (f.repeat_s != VerifyFlags{}.repeat_s) {
    std::ostringstream r;
    r << f.repeat_s;
    replay += " --repeat-seconds " + r.str();
  }
  o.replay_command = replay;

  axon::gate::GateReport r = axon::gate::verify_kernel(spec.graph, source, o);
  if (c.json) {
    json j = axon::gate::report_json(r);
    j["spec"] = c.spec;
    j["kernel"] = f.kernel;
    j["entry"] = spec.graph.entry;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << axon::gate::report_text(r);
  }
  return r.accepted ? 0 : 3;
}

struct TargetFlags {
  std::string file;
  bool no_probe = false, json = false, avx2 = false;
};

// `axon target`: the hardware description kernels are tuned for.
int cmd_target(const TargetFlags& f) {
  axon::target::Target t = axon::target::resolve_target(f.file, f.avx2, !f.no_probe);
  if (f.json) std::cout << axon::target::to_json(t).dump(2) << "\n";
  else std::cout << axon::target::describe(t);
  return 0;
}

// `axon explain`: the rewrites found applicable on the spec, each proved or
// refused, with the cost before and after, and the variant chosen.
int cmd_explain(const Common& c) {
  auto spec = load(c);
  json report = axon::rewrite::explain_json(spec.graph);
  if (c.json) std::cout << report.dump(2) << "\n";
  else std::cout << axon::rewrite::explain_text(report);
  return 0;
}

struct OptimizeFlags {
  std::string out_dir, db, target_file;
  axon::optimize::OptimizeOptions defaults;
  bool no_db = false, resume = false;
  std::string proposer;  // --proposer CMD (docs/proposers.md)
  int proposer_rounds = 3;
  double proposer_timeout_s = 300;
  std::string peers;  // --peers LIST: time them beside the winner and the naive kernel
};

std::atomic<bool> optimize_interrupted{false};

// The first Ctrl-C asks the search to stop and keep its best; the second
// one kills the process as usual.
extern "C" void on_optimize_sigint(int) {
  optimize_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);
}

// `axon optimize`: search for the fastest verified kernel; write it with
// report.md and report.json (docs/optimize.md).
std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty() && item != "none") out.push_back(item);
  return out;
}

// `optimize --peers`: the winner, the naive kernel and the peers timed on
// cold inputs in one run (the bench's measurement, bench.h), each output
// checked against the float64 reference; a table on stdout, the bench's
// page in OUT/bench.
void side_by_side(const Common& c, const OptimizeFlags& f, const axon::optimize::OptimizeResult& r) {
  axon::bench::BenchOptions bo;
  bo.specs = {c.spec};
  bo.out_dir = (fs::path(f.out_dir) / "bench").string();
  bo.peers = split_commas(f.peers);
  bo.searched = &r;
  bo.spec_options = spec_options(c);
  bo.target_file = f.target_file;
  bo.interrupt = &optimize_interrupted;
  bo.command = "axon optimize " + c.spec + " --peers " + f.peers;
  bo.on_line = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  auto previous = std::signal(SIGINT, on_optimize_sigint);
  json b = axon::bench::run_bench(bo);
  std::signal(SIGINT, previous);
  if (!b.contains("workloads") || b["workloads"].empty()) return;
  const json& w = b["workloads"][0];
  auto verified = [](const json& row) -> std::string {
    if (row.value("status", "") != "ok") return row.value("status", "not run");
    char buf[96];
    std::snprintf(buf, sizeof buf, "yes: largest error %.3g of its budget", row.value("max_error_over_budget", 0.0));
    return buf;
  };
  const double naive_ms = w.contains("naive") ? w["naive"].value("ms", 0.0) : 0.0;
  std::printf("\n%s on cold inputs (%s), every output against the float64 reference:\n", w.value("name", "").c_str(),
              w.value("bound", "").c_str());
  std::printf("  %-16s %12s %10s  %s\n", "", "ms", "vs naive", "verified");
  auto line = [&](const std::string& who, const json& row, double ms) {
    if (ms > 0)
      std::printf("  %-16s %12.4g %9.2fx  %s\n", who.c_str(), ms, naive_ms > 0 ? naive_ms / ms : 0.0, verified(row).c_str());
    else
      std::printf("  %-16s %12s %10s  %s\n", who.c_str(), "-", "-", verified(row).c_str());
  };
  if (w.contains("naive")) line("naive kernel", w["naive"], naive_ms);
  if (w.contains("axon")) line("axon", w["axon"], w["axon"].value("ms", 0.0));
  if (w.contains("peers"))
    for (const auto& [name, row] : w["peers"].items()) line(name, row, row.value("median_ms", 0.0));
  if (w.contains("error")) std::printf("  %s\n", w["error"].get<std::string>().c_str());
  if (w.contains("interleaved") && w["interleaved"].value("axon_ms", 0.0) > 0 && w["interleaved"].value("best_peer_ms", 0.0) > 0) {
    const json& i = w["interleaved"];
    std::printf("  in turns in one process: axon %.4g ms, %s %.4g ms: %.2fx\n", i.value("axon_ms", 0.0),
                i.value("best_peer", "").c_str(), i.value("best_peer_ms", 0.0), i.value("speedup_vs_best_peer", 0.0));
  }
  std::printf("wrote %s/bench.md, bench.json\n", bo.out_dir.c_str());
}

int cmd_optimize(const Common& c, const OptimizeFlags& f) {
  auto spec = load(c);
  std::error_code ec;
  fs::create_directories(f.out_dir, ec);
  if (ec || !fs::is_directory(f.out_dir))
    throw axon::Diagnostic(axon::SourceLoc{f.out_dir, 0, 0}, "cannot create the output directory " + f.out_dir +
                                                                  (ec ? ": " + ec.message() : ""));
  write_file(fs::path(f.out_dir) / "report.json", "{}\n");  // fail on an unwritable -o before searching
  axon::optimize::OptimizeOptions o = f.defaults;
  o.target = axon::target::resolve_target(f.target_file, false, false);
  o.db_path = f.db;
  o.use_db = !f.no_db;
  o.resume = f.resume;
  o.interrupt = &optimize_interrupted;
  bool tty = isatty(2);
  o.on_progress = [tty](const axon::optimize::Progress& p) {
    double speedup = p.best_ms > 0 ? p.naive_ms / p.best_ms : 0;
    std::fprintf(stderr, "%stried %d  compiled %d  verified %d  best %.4g ms  speedup %.2fx  (%.0f s)%s",
                 tty ? "\r" : "", p.tried, p.compiled, p.verified, p.best_ms, speedup, p.elapsed_s, tty ? "" : "\n");
  };
  o.on_warning = [tty](const std::string& w) { std::fprintf(stderr, "%saxon: warning: %s\n", tty ? "\n" : "", w.c_str()); };
  auto previous = std::signal(SIGINT, on_optimize_sigint);
  axon::optimize::OptimizeResult r = axon::optimize::optimize(spec.graph, o);
  std::signal(SIGINT, previous);
  if (tty) std::fprintf(stderr, "\n");
  r.report["spec"] = c.spec;
  r.report["entry"] = spec.graph.entry;
  fs::path dir(f.out_dir);
  if (!r.found) {
    // No kernel passed its check: the report says why; no kernel is written,
    // and one left by an earlier run is removed so that it is not taken for this one's.
    fs::remove(dir / "kernel.cpp", ec);
    fs::remove(dir / "kernel.h", ec);
    write_file(dir / "report.json", r.report.dump(2) + "\n");
    write_file(dir / "report.md", axon::optimize::report_markdown(r.report));
    if (c.json) std::cout << r.report.dump(2) << "\n";
    std::fprintf(stderr, "axon: %s\nwrote %s/report.md, report.json; no kernel\n", r.failure.c_str(),
                 f.out_dir.c_str());
    return 3;
  }
  // An outside proposer after the search: every proposal through the gate,
  // the kernel replaced only by a verified, faster one.
  if (!f.proposer.empty() && !optimize_interrupted.load()) {
    std::ifstream spec_in(c.spec, std::ios::binary);
    std::string spec_text((std::istreambuf_iterator<char>(spec_in)), std::istreambuf_iterator<char>());
    axon::propose::ProposerOptions po;
    po.command = f.proposer;
    po.rounds = f.proposer_rounds;
    po.round_timeout_s = f.proposer_timeout_s;
    po.on_message = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    po.interrupt = &optimize_interrupted;
    previous = std::signal(SIGINT, on_optimize_sigint);
    axon::propose::ProposerResult pr = axon::propose::run_proposer(spec.graph, spec_text, r, o.target, po);
    std::signal(SIGINT, previous);
    axon::propose::apply_to_report(r.report, po, pr);
    if (pr.improved && pr.best_gate_ms) {
      r.kernel = pr.kernel;
      r.axon_ms = *pr.best_gate_ms;
      if (pr.naive_gate_ms) r.naive_ms = *pr.naive_gate_ms;  // one timing path for both
    }
  }
  write_file(dir / "kernel.cpp", r.kernel.source);
  write_file(dir / "kernel.h", r.kernel.header);
  write_file(dir / "report.json", r.report.dump(2) + "\n");
  write_file(dir / "report.md", axon::optimize::report_markdown(r.report) + axon::propose::proposer_markdown(r.report));
  if (c.json) {
    std::cout << r.report.dump(2) << "\n";
  } else {
    std::printf("%s: %.4g ms (naive %.4g ms, %.2fx), stopped: %s; wrote %s/kernel.cpp, kernel.h, report.md, report.json\n",
                spec.graph.entry.c_str(), r.axon_ms, r.naive_ms, r.axon_ms > 0 ? r.naive_ms / r.axon_ms : 0.0,
                r.stop_reason.c_str(), f.out_dir.c_str());
    if (r.report.contains("naive_reason"))
      std::printf("the naive kernel is the answer: %s\n", r.report["naive_reason"].value("detail", std::string("?")).c_str());
  }
  if (!f.peers.empty() && !optimize_interrupted.load()) side_by_side(c, f, r);
  return 0;
}

struct BenchFlags {
  std::vector<std::string> specs;
  std::string peers;  // comma list; empty: the default four
  axon::bench::BenchOptions opts;
  bool no_db = false;
};

std::atomic<bool> bench_interrupted{false};

// The first Ctrl-C stops the bench after the current step and writes what
// is finished; the second one kills the process as usual.
extern "C" void on_bench_sigint(int) {
  bench_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);
}

// `axon bench`: axon, the naive kernel and the peers side by side, against
// the roofline probed in the same run (docs/bench.md).
int cmd_bench(BenchFlags f, int argc, char** argv) {
  axon::bench::BenchOptions& o = f.opts;
  o.specs = f.specs.empty() ? axon::bench::default_specs() : f.specs;
  if (o.specs.empty())
    throw axon::Diagnostic(axon::SourceLoc{"bench", 0, 0}, "no workloads given and no bench/workloads/*.py found");
  for (const std::string& s : o.specs)
    if (!fs::is_regular_file(s)) throw axon::Diagnostic(axon::SourceLoc{s, 0, 0}, "cannot read the workload " + s);
  if (!f.peers.empty()) o.peers = split_commas(f.peers);
  o.use_db = !f.no_db;
  if (const char* py = std::getenv("PYTHON"); py && *py) o.python = py;
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + shell_word(argv[i]);
  o.interrupt = &bench_interrupted;
  o.on_line = [](const std::string& line) { std::fprintf(stderr, "bench: %s\n", line.c_str()); };
  auto previous = std::signal(SIGINT, on_bench_sigint);
  json b = axon::bench::run_bench(o);
  std::signal(SIGINT, previous);
  std::printf("wrote %s/bench.md, bench.csv, bench.json%s (%zu of %zu workloads)\n", o.out_dir.c_str(),
              b["plot"].value("status", "") == "ok" ? ", bench.png" : "", b["workloads"].size(), o.specs.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"axon: a synthesizing superoptimizer for tensor programs written in numpy"};
  app.require_subcommand(1);
  Common common;
  std::string out_dir, dump_dir;
  uint64_t seed = 1;
  bool no_time = false;

  auto* check = app.add_subcommand("check", "parse a spec, infer shapes, print the IR");
  add_common(check, common);
  std::string compile_schedule, compile_target;
  auto* compile = app.add_subcommand("compile", "write kernel.cpp and kernel.h (naive, or for a given schedule)");
  add_common(compile, common);
  compile->add_option("-o,--out", out_dir, "output directory")->required();
  compile->add_option("--schedule", compile_schedule,
                      "a schedule (JSON object, or a file with one or an optimize report.json): emit the optimised "
                      "kernel for it instead of the naive one");
  compile->add_option("--target", compile_target, "with --schedule: a JSON file whose fields override the detected target");
  LowerFlags lf;
  auto* lower = app.add_subcommand("lower", "print the tile program after each pass of a pipeline");
  add_common(lower, common);
  lower->add_option("--pipeline", lf.pipeline, "naive (the baseline kernel's), loops (the general optimising one) or stages (each stage's program at this host's default schedule)");
  lower->add_option("--after", lf.after, "print only the program after this pass (lower, cascade_sums, ...)");
  lower->add_option("--threads", lf.threads, "loops pipeline: threads of the parallel loops")->check(CLI::Range(1, 1024));
  lower->add_flag("--cpp", lf.cpp, "also print the C++ of the final program");
  lower->add_option("--schedule", lf.schedule,
                    "stages: print the programs at this schedule (as compile --schedule) instead of the default");
  auto* run = app.add_subcommand("run", "run the interpreter and the compiled kernel on random inputs");
  add_common(run, common);
  run->add_option("--seed", seed, "seed of the random inputs");
  run->add_option("--dump", dump_dir, "write inputs, reference, bounds and outputs as .npy files here");
  run->add_flag("--no-time", no_time, "skip timing the kernel");
  VerifyFlags vf;
  uint64_t verify_seed = 0;
  auto* verify = app.add_subcommand("verify", "judge an externally written kernel against the spec");
  add_common(verify, common);
  verify->add_option("kernel", vf.kernel, "the kernel's C++ source (the C ABI of kernel.h)")->required();
  auto* seed_opt = verify->add_option("--seed", verify_seed, "seed of the battery (default: a fresh one)");
  verify->add_option("--keep", vf.keep_dir, "build and run in this folder and keep it (logs, binaries, plan)");
  verify->add_option("--timeout", vf.timeout_s, "seconds one call may take (default: from the roofline floor)");
  verify->add_option("--repeat-seconds", vf.repeat_s,
                     "seconds the soak may spend repeating calls, and a fifth of it the plain process (default 5); a "
                     "kernel slower than about 4 ms per call makes fewer than 1000 of them unless this is raised")
      ->check(CLI::Range(0.5, 3600.0));
  verify->add_flag("--no-sanitizer", vf.no_sanitizer, "skip the AddressSanitizer/UBSan build");
  verify->add_flag("--no-time", vf.no_time, "skip timing and the roofline check");

  auto* explain = app.add_subcommand("explain", "list the rewrites found on the spec, their proofs and costs");
  add_common(explain, common);

  OptimizeFlags of;
  auto* optimize = app.add_subcommand("optimize", "search for the fastest verified kernel and write it with a report");
  add_common(optimize, common);
  optimize->add_option("-o,--out", of.out_dir, "output directory")->required();
  optimize->add_option("--budget", of.defaults.budget_s, "seconds the search may take");
  optimize->add_option("--trials", of.defaults.trials, "most candidates to measure (0: no limit)");
  optimize->add_option("--seed", of.defaults.seed, "seed of the search");
  optimize->add_option("--db", of.db, "tuning database file (default: $AXON_DB or ~/.cache/axon/tuning.sqlite)");
  optimize->add_flag("--no-db", of.no_db, "neither read nor write the tuning database");
  optimize->add_flag("--resume", of.resume, "continue the stored search instead of answering from it");
  optimize->add_flag("!--no-rewrites", of.defaults.rewrites, "search only the original graph, not its proved rewrites");
  optimize->add_option("--target", of.target_file, "a JSON file whose fields override the detected target");
  optimize->add_option("--proposer", of.proposer, "after the search, ask this command for kernels (docs/proposers.md)");
  optimize->add_option("--proposer-rounds", of.proposer_rounds, "requests sent to the proposer (default 3)");
  optimize->add_option("--proposer-timeout", of.proposer_timeout_s, "seconds the proposer may take per round (default 300)");
  optimize->add_option("--peers", of.peers,
                       "then time the kernel, the naive kernel and these (comma list: numpy,torch,torch.compile,jax,torch.sdpa) "
                       "side by side on cold inputs, each checked");

  TargetFlags tf;
  auto* target = app.add_subcommand("target", "print the hardware description (detected, probed, overridden)");
  target->add_flag("--no-probe", tf.no_probe, "skip measuring the FMA and bandwidth peaks (about a second)");
  target->add_flag("--json", tf.json, "print the description as JSON (the override file's format)");
  target->add_option("--target", tf.file, "a JSON file whose fields override the detected ones");
  target->add_flag("--avx2", tf.avx2, "describe the machine restricted to AVX2 + FMA");

  BenchFlags bf;
  auto* bench = app.add_subcommand("bench", "optimize workloads, then time axon, naive and the peers against the roofline");
  bench->add_option("specs", bf.specs, "workload spec files (default: bench/workloads/*.py)");
  bench->add_option("-o,--out", bf.opts.out_dir, "output directory (bench.md, bench.csv, bench.json, bench.png)");
  bench->add_option("--budget", bf.opts.budget_s, "seconds optimize may search per workload");
  bench->add_option("--peers", bf.peers, "comma list of peers (default numpy,torch,torch.compile,jax,torch.sdpa; none: no peers)");
  bench->add_option("--db", bf.opts.db_path, "tuning database file (default: $AXON_DB or ~/.cache/axon/tuning.sqlite)");
  bench->add_flag("--no-db", bf.no_db, "neither read nor write the tuning database");
  bench->add_flag("--ablate-rewrites", bf.opts.ablate_rewrites,
                  "also optimize without rewrites and time both winners side by side");
  bench->add_option("--min-seconds", bf.opts.min_seconds, "timed seconds per kernel and per peer, at least");
  bench->add_option("--rounds", bf.opts.rounds,
                    "peers-then-axon rounds; above 1 every time is the median of its round medians")
      ->check(CLI::Range(1, 20));
  bench->add_option("--interleave", bf.opts.interleave_rounds,
                    "rounds of interleaved bursts of axon's kernel and the peers in one process, per peers run "
                    "(default 7; 0: none)")
      ->check(CLI::Range(0, 100));
  bench->add_option("--target", bf.opts.target_file, "a JSON file whose fields override the detected target");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }

  std::string source;
  try {
    if (*target) return cmd_target(tf);
    if (*check) return cmd_check(common);
    if (*explain) return cmd_explain(common);
    if (*optimize) return cmd_optimize(common, of);
    if (*bench) return cmd_bench(bf, argc, argv);
    if (*lower) return cmd_lower(common, lf);
    if (*compile) return cmd_compile(common, out_dir, compile_schedule, compile_target);
    if (*run) return cmd_run(common, seed, dump_dir, no_time);
    if (*verify) {
      if (seed_opt->count() > 0) vf.seed = verify_seed;
      return cmd_verify(common, vf);
    }
  } catch (const axon::Diagnostic& d) {
    std::ifstream f(d.loc().file);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::cerr << d.render(text);
    return 1;
  } catch (const axon::InternalError& e) {
    std::cerr << "axon: " << e.what() << "\nthis is a bug in axon; please report it with the spec that caused it\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "axon: internal error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
