// verify_kernel: the gate's steps in order. Static checks first (a kernel
// that may reach the file system or the clock is never run), then the
// battery in the sanitized build while the references are computed, then
// the plain process (the user run) beside the optimised build's battery,
// then the optimised build's rounds and soak (which is also the timing)
// with the machine to itself.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <thread>

#include "codegen/c_like/kernel_abi.h"
#include "gate/battery.h"
#include "gate/driver_source.h"
#include "gate/gate.h"
#include "gate/hashing.h"
#include "gate/judge.h"
#include "gate/roofline.h"
#include "gate/sandbox.h"
#include "gate/symbols.h"
#include "gate/user_driver_source.h"
#include "gate/work_dir.h"
#include "runtime/compile_shared.h"
#include "runtime/prelude_header.h"
#include "support/command.h"
#include "support/diagnostic.h"

namespace axon::gate {

namespace fs = std::filesystem;
using json = nlohmann::json;
using support::command_line;
using support::CommandResult;
using support::first_lines;
using support::run_command;

namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  AXON_CHECK(f.good()) << "cannot write " << path;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// -ffp-contract=off: the kernel is judged as its source is written (GCC's
// default would fuse a * b + c into an FMA the source does not ask for).
const std::vector<std::string> kCommonFlags = {"-std=gnu++20", "-march=native", "-fopenmp", "-pthread",
                                               "-ffp-contract=off"};
const std::vector<std::string> kOptimisedFlags = {"-O2"};
const std::vector<std::string> kSanitizedFlags = {"-Og", "-g1", "-fno-omit-frame-pointer",
                                                  "-fsanitize=address,undefined", "-fno-sanitize-recover=all"};
const std::vector<std::string> kThreadSanitizedFlags = {"-O1", "-g1", "-fno-omit-frame-pointer", "-fsanitize=thread"};

// Which build of the driver and kernel a run uses.
enum class Build { Optimised, Sanitized, Threads };

std::vector<std::string> compile_argv(const GateOptions& opts, const std::vector<std::string>& flags,
                                      const std::string& mode, const std::string& src, const std::string& out) {
  std::vector<std::string> argv = {opts.cxx};
  argv.insert(argv.end(), kCommonFlags.begin(), kCommonFlags.end());
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {mode, src, "-o", out});
  return argv;
}

struct Executables {
  std::string optimised, sanitized, user;
};

// Phases as they end, in order (GateReport::phases_s, or a list of its
// own for work that runs beside the verdict's main thread).
class PhaseClock {
 public:
  using Clock = std::chrono::steady_clock;
  using Phases = std::vector<std::pair<std::string, double>>;
  explicit PhaseClock(Phases& phases) : phases_(phases), start_(Clock::now()), last_(start_) {}
  static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
  /// The time since the previous lap (or the start) is phase `name`.
  void lap(const std::string& name) {
    Clock::time_point now = Clock::now();
    phases_.emplace_back(name, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }
  void record(const std::string& name, double seconds) { phases_.emplace_back(name, seconds); }
  void total() { phases_.emplace_back("total", since(start_)); }

 private:
  Phases& phases_;
  Clock::time_point start_, last_;
};

json compile_evidence(const std::vector<std::string>& argv, const CommandResult& r) {
  return {{"command", command_line(argv)}, {"status", r.how}, {"log", first_lines(r.output, 60)}};
}

// The drivers' main() objects, the same for every spec, from the cache of
// compiled objects (runtime/compile_shared.h): compiled once per compiler,
// flags and host.
std::string cached_driver_object(const GateOptions& opts, const std::vector<std::string>& flags,
                                 const std::string& source, const std::string& name) {
  runtime::CompileOptions co;
  co.cxx = opts.cxx;
  co.flags = kCommonFlags;
  co.flags.insert(co.flags.end(), flags.begin(), flags.end());
  co.flags.push_back("-c");
  co.output_name = name;
  return runtime::compile_shared(codegen::KernelSource{"main", "", source}, co);
}

struct Objects {
  std::string driver, user_driver, driver_san;
};

// Compiles the candidate (argv from compile_argv, run in the work folder)
// with the precompiled prelude of its headers when it qualifies, and again
// without when that fails (runtime/prelude_header.h): the prelude saves
// seconds and never decides the verdict. `argv` becomes the command whose
// result is returned.
CommandResult compile_candidate(const WorkDir& wd, std::vector<std::string>& argv) {
  return runtime::compile_with_prelude(argv, read_text(wd / "candidate.cpp"),
                                       runtime::resolve_cache_dir(runtime::CompileOptions{}), wd.str());
}

// Compiles the kernel and call.cpp in both builds, next to the cached
// drivers, and links the executables; every failure on the kernel's side is
// a compile_error, every failure of axon's driver an InternalError.
std::optional<Executables> build(const WorkDir& wd, const GateOptions& opts, const std::string& entry, Verdict& v,
                                 PhaseClock& clock) {
  struct Job {
    std::vector<std::string> argv;
    bool kernel;
  };
  std::vector<Job> jobs = {
      {compile_argv(opts, kOptimisedFlags, "-c", "candidate.cpp", "candidate.o"), true},
      {compile_argv(opts, kOptimisedFlags, "-c", "call.cpp", "call.o"), false},
  };
  if (opts.run_sanitizer) {
    jobs.push_back({compile_argv(opts, kSanitizedFlags, "-c", "candidate.cpp", "candidate_san.o"), true});
    jobs.push_back({compile_argv(opts, kSanitizedFlags, "-c", "call.cpp", "call_san.o"), false});
  }
  std::vector<std::future<CommandResult>> running;
  for (Job& j : jobs)
    running.push_back(std::async(std::launch::async, [&j, &wd] {
      return j.kernel ? compile_candidate(wd, j.argv) : run_command(j.argv, wd.str());
    }));
  auto drivers = std::async(std::launch::async, [&opts] {
    Objects o;
    o.driver = cached_driver_object(opts, kOptimisedFlags, driver_source(), "driver.o");
    o.user_driver = cached_driver_object(opts, kOptimisedFlags, user_driver_source(), "user_driver.o");
    if (opts.run_sanitizer) o.driver_san = cached_driver_object(opts, kSanitizedFlags, driver_source(), "driver_san.o");
    return o;
  });
  std::vector<CommandResult> results;
  for (auto& f : running) results.push_back(f.get());
  const Objects drv = drivers.get();
  clock.lap("compile");
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (results[i].ok()) continue;
    if (jobs[i].kernel) {
      v.add(reason::kCompileError, "compile", "the kernel does not compile (" + results[i].how + ")",
            compile_evidence(jobs[i].argv, results[i]));
      return std::nullopt;
    }
    AXON_CHECK(false) << "the gate's driver does not compile: " << command_line(jobs[i].argv) << "\n"
                      << first_lines(results[i].output, 40);
  }

  bool entry_defined = false;
  std::vector<Finding> findings = check_object_symbols(wd / "candidate.o", entry, &entry_defined);
  std::vector<Finding> insns = check_object_instructions(wd / "candidate.o");
  findings.insert(findings.end(), insns.begin(), insns.end());
  for (const Finding& f : findings)
    v.add(reason::kForbiddenSymbol, f.kind + " " + f.what, "the kernel " + std::string(f.kind == "calls" ? "calls " : f.kind == "defines" ? "defines " : "uses the instruction ") + f.what + ": " + f.detail,
          {{"kind", f.kind}, {"symbol", f.what}, {"detail", f.detail}});
  if (!entry_defined) {
    v.add(reason::kCompileError, "entry", "the kernel does not define extern \"C\" " + entry,
          {{"entry", entry}, {"log", "no global function named " + entry + " in candidate.o"}});
    return std::nullopt;
  }
  clock.lap("symbols");
  if (!findings.empty()) return std::nullopt;

  Executables exe{wd / "run_optimised", wd / "run_sanitized", wd / "run_user"};
  // The three links at once; the first failure, in this order, is reported.
  auto link_argv = [&](const std::string& driver, const std::string& call, const std::string& kernel,
                       const std::string& out, bool sanitized) {
    std::vector<std::string> argv = {opts.cxx, "-fopenmp", "-pthread"};
    if (sanitized) argv.push_back("-fsanitize=address,undefined");
    argv.insert(argv.end(), {driver, call, kernel, "-o", out, "-lm"});
    return argv;
  };
  std::vector<std::vector<std::string>> links = {link_argv(drv.driver, "call.o", "candidate.o", exe.optimised, false),
                                                 link_argv(drv.user_driver, "call.o", "candidate.o", exe.user, false)};
  if (opts.run_sanitizer) links.push_back(link_argv(drv.driver_san, "call_san.o", "candidate_san.o", exe.sanitized, true));
  std::vector<std::future<CommandResult>> linking;
  for (const auto& argv : links)
    linking.push_back(std::async(std::launch::async, [&argv, &wd] { return run_command(argv, wd.str()); }));
  std::vector<CommandResult> linked;
  for (auto& f : linking) linked.push_back(f.get());
  for (size_t i = 0; i < links.size(); ++i)
    if (!linked[i].ok()) {
      v.add(reason::kCompileError, "link", "the kernel does not link with the driver (" + linked[i].how + ")",
            compile_evidence(links[i], linked[i]));
      return std::nullopt;
    }
  clock.lap("link");
  return exe;
}

int64_t total_bytes(const DriverPlan& p) {
  int64_t n = 0;
  for (int64_t b : p.input_bytes) n += b;
  for (int64_t b : p.output_bytes) n += b;
  return n;
}

int64_t mapped_bytes(const DriverPlan& plan) {
  const int64_t buffers = total_bytes(plan);
  int64_t data = 0;
  for (const auto& b : plan.blocks) data += static_cast<int64_t>(b.size());
  for (const OutputFill& f : plan.fills)
    for (const auto& d : f.data) data += static_cast<int64_t>(d.size());
  return data + (3 + static_cast<int64_t>(plan.slots.size())) * buffers + (int64_t{64} << 20);
}

int64_t memory_limit(const GateOptions& opts, const DriverPlan& plan) {
  return opts.memory_limit_bytes > 0 ? opts.memory_limit_bytes
                                     : std::max<int64_t>(int64_t{8} << 30, 4 * mapped_bytes(plan));
}

RunOutcome run_driver(const WorkDir& wd, const std::string& exe, const DriverPlan& plan, const std::string& tag,
                      Build build, double call_timeout_s, const GateOptions& opts,
                      const std::vector<std::string>& names) {
  const std::string plan_path = wd / ("plan_" + tag + ".txt"), blocks = wd / "blocks.bin";
  const std::string fills = wd / ("fills_" + tag + ".bin");
  const std::string events = wd / ("events_" + tag + ".log"), outputs = wd / ("outputs_" + tag + ".bin");
  const std::string child_log = wd / ("child_" + tag + ".log");
  write_plan(plan, plan_path, fills);
  std::error_code ec;
  fs::remove(events, ec);
  fs::remove(child_log, ec);

  const int64_t memory = memory_limit(opts, plan);
  const int records = plan.max_records();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  SandboxLimits lim;
  lim.idle_timeout_s = call_timeout_s;
  lim.progress_file = events;
  // Each recorded call may take the call timeout; the phases bounded by
  // time (soak, rounds) their limits, twice over. A run that holds is
  // charged from the hold file on: before it, its battery's calls are each
  // bounded by the call timeout.
  lim.wall_timeout_s = call_timeout_s * (records + 4) +
                       2e-3 * ((plan.soak.empty() ? 0 : plan.soak_max_ms) +
                               (plan.concurrent_a >= 0 ? plan.rounds_max_ms : 0));
  lim.wall_clock_file = plan.hold_path;
  lim.cpu_seconds = static_cast<int64_t>(lim.wall_timeout_s * cores) + 60;
  lim.file_size_bytes = (total_bytes(plan) + (int64_t{1} << 20)) * (records + 2) + (int64_t{64} << 20);
  std::vector<std::string> extra;
  const bool sanitized = build == Build::Sanitized;
  if (build == Build::Threads) {
    // ThreadSanitizer maps its shadow memory beyond any RLIMIT_AS too. One
    // OpenMP thread per call: the races looked for are between the two
    // callers, and libgomp's own synchronisation is invisible to it (a
    // parallel region's threads would seem to race on the caller's stack).
    extra.push_back("TSAN_OPTIONS=halt_on_error=1:exitcode=66:ignore_noninstrumented_modules=1:"
                    "report_signal_unsafe=0:history_size=4");
    extra.push_back("OMP_NUM_THREADS=1");
    extra.push_back("OMP_THREAD_LIMIT=1");  // also over a num_threads clause
  } else if (sanitized) {
    // ASan reserves terabytes of address space, so RLIMIT_AS cannot apply;
    // its own allocator limits stand in for it.
    const int64_t mb = memory >> 20;
    extra.push_back("ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0:handle_abort=0:"
                    "detect_stack_use_after_return=0:hard_rss_limit_mb=" + std::to_string(mb) +
                    ":malloc_limit_mb=" + std::to_string(mb));
    extra.push_back("UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1");
  } else {
    lim.address_space_bytes = memory;
  }
  std::vector<std::string> argv = {exe, plan_path, blocks, events, outputs};
  if (sanitized) argv.push_back("sanitized");
  if (build == Build::Threads) argv.push_back("threads");

  RunOutcome run;
  run.plan = &plan;
  run.sanitized = sanitized;
  run.idle_timeout_s = call_timeout_s;
  run.buffer_names = names;
  for (int64_t b : plan.input_bytes) run.buffer_bytes.push_back(b);
  for (int64_t b : plan.output_bytes) run.buffer_bytes.push_back(b);
  run.process = run_sandboxed(argv, child_environment(extra), wd.str(), child_log, lim);
  run.log = read_driver_log(plan, events, outputs);
  run.child_output = read_text(child_log);
  return run;
}

// The kernel in a plain process (user_driver_source.h).
UserOutcome run_user(const WorkDir& wd, const std::string& exe, const Battery& b, double call_timeout_s,
                     const GateOptions& opts) {
  const std::string plan_path = wd / "user_plan.txt", events = wd / "events_user.log";
  const std::string outputs = wd / "outputs_user.bin", child_log = wd / "child_user.log";
  write_user_plan(b, plan_path);
  std::error_code ec;
  fs::remove(events, ec);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  SandboxLimits lim;
  lim.idle_timeout_s = call_timeout_s;
  lim.progress_file = events;
  lim.wall_timeout_s = 2 * call_timeout_s + 2e-3 * b.user.max_ms;
  lim.cpu_seconds = static_cast<int64_t>(lim.wall_timeout_s * cores) + 60;
  lim.file_size_bytes = 2 * total_bytes(b.plan) + (int64_t{64} << 20);
  lim.address_space_bytes = memory_limit(opts, b.plan);
  UserOutcome u;
  u.set = b.user.set;
  u.planned_calls = b.user.calls;
  u.idle_timeout_s = call_timeout_s;
  u.process = run_sandboxed({exe, plan_path, wd / "blocks.bin", events, outputs}, child_environment({}), wd.str(),
                            child_log, lim);
  u.log = read_user_log(b.plan, events, outputs);
  u.child_output = read_text(child_log);
  return u;
}

// The kernel keeps static memory (shared_static_data): built with
// ThreadSanitizer and run through a few concurrent rounds, so that two calls
// touching that memory without synchronisation are found whether or not
// they happened to overlap in time on this machine.
struct RaceRun {
  std::optional<RunOutcome> run;  // none: the build failed (why says how)
  std::string why;
};

RaceRun run_race_check(const WorkDir& wd, const GateOptions& opts, const Battery& b, double call_timeout_s,
                       const std::vector<std::string>& names) {
  RaceRun out;
  std::vector<std::vector<std::string>> compiles = {
      compile_argv(opts, kThreadSanitizedFlags, "-c", "candidate.cpp", "candidate_tsan.o"),
      compile_argv(opts, kThreadSanitizedFlags, "-c", "call.cpp", "call_tsan.o")};
  std::vector<std::future<CommandResult>> running;
  for (size_t i = 0; i < compiles.size(); ++i)
    running.push_back(std::async(std::launch::async, [&compiles, i, &wd] {
      return i == 0 ? compile_candidate(wd, compiles[i]) : run_command(compiles[i], wd.str());
    }));
  const std::string driver = cached_driver_object(opts, kThreadSanitizedFlags, driver_source(), "driver_tsan.o");
  for (size_t i = 0; i < compiles.size(); ++i) {
    CommandResult r = running[i].get();
    if (!r.ok() && out.why.empty()) out.why = "the ThreadSanitizer build does not compile (" + r.how + "): " + first_lines(r.output, 5);
  }
  if (!out.why.empty()) return out;
  const std::string exe = wd / "run_race";
  std::vector<std::string> link = {opts.cxx, "-fopenmp", "-pthread", "-fsanitize=thread", driver, "call_tsan.o",
                                   "candidate_tsan.o", "-o", exe, "-lm"};
  CommandResult l = run_command(link, wd.str());
  if (!l.ok()) {
    out.why = "the ThreadSanitizer build does not link (" + l.how + "): " + first_lines(l.output, 5);
    return out;
  }
  out.run = run_driver(wd, exe, b.race_plan, "race", Build::Threads, 5 * call_timeout_s, opts, names);
  return out;
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

namespace {

void judge_kernel(const ir::Graph& g, const std::string& kernel_source, const GateOptions& opts, GateReport& report,
                  PhaseClock& clock) {
  Verdict v(report);
  report.seed = opts.seed ? *opts.seed : fresh_seed();
  report.kernel_sha = sha256_hex(kernel_source);
  report.compiler = runtime::compiler_version(opts.cxx);
  report.roofline = roofline_floor(g, opts);
  if (!opts.replay_command.empty()) report.replay = opts.replay_command + " --seed " + std::to_string(report.seed);
  const double call_timeout = opts.call_timeout_s > 0 ? opts.call_timeout_s : 10 + 5 * report.roofline.floor_ms;

  codegen::KernelAbi abi = codegen::make_kernel_abi(g);
  std::vector<std::string> names = abi.param_names;
  names.insert(names.end(), abi.output_names.begin(), abi.output_names.end());
  int64_t io_bytes = 0;
  for (const ir::ParamInfo& p : g.params) io_bytes += buffer_bytes(p.type);
  for (ir::NodeId o : g.outputs) io_bytes += buffer_bytes(g[o].type);
  WorkDir wd(opts.work_dir, opts.keep_work_dir, io_bytes);
  if (wd.kept()) report.work_dir = wd.str();
  write_text(wd / "kernel.h", abi.header);
  write_text(wd / "candidate.cpp", kernel_source);
  write_text(wd / "call.cpp", emit_call_source(g, abi));
  write_text(wd / "driver.cpp", driver_source());  // a copy of what the cached objects were built from
  write_text(wd / "user_driver.cpp", user_driver_source());

  // Inline assembly and clock builtins, even when a macro spells them.
  std::vector<std::string> pre = compile_argv(opts, kOptimisedFlags, "-E", "candidate.cpp", "candidate.ii");
  CommandResult pr = run_command(pre, wd.str());
  if (!pr.ok()) {
    v.add(reason::kCompileError, "compile", "the kernel does not compile (" + pr.how + ")", compile_evidence(pre, pr));
    return;
  }
  clock.lap("preprocess");
  for (const Finding& f : check_preprocessed_source(read_text(wd / "candidate.ii"), {"candidate.cpp", "kernel.h"}))
    v.add(reason::kForbiddenSymbol, "source " + f.what, "the kernel's source uses " + f.what + ": " + f.detail,
          {{"kind", f.kind}, {"symbol", f.what}, {"detail", f.detail}});
  if (!report.reasons.empty()) return;

  // The kernel builds while the battery is planned (the build reads none
  // of it; its reasons go to report.reasons, the plan writes
  // report.inputs and report.distributions). The float64 references depend
  // only on the inputs: they are computed while the kernel builds and while
  // the sanitized and user runs go on (nothing is timed in those).
  PhaseClock::Phases build_phases;
  std::promise<void> built;  // set when the build ends, however it ends: the plan may take its core
  const std::shared_future<void> second_core = built.get_future().share();
  std::future<std::optional<Executables>> build_job = std::async(std::launch::async, [&] {
    struct Done {
      std::promise<void>& p;
      ~Done() { p.set_value(); }
    } done{built};
    PhaseClock build_clock(build_phases);
    return build(wd, opts, abi.entry, v, build_clock);
  });
  const PhaseClock::Clock::time_point plan_start = PhaseClock::Clock::now();
  Battery battery = plan_battery(g, report.seed, opts.time_kernel, &second_core);
  // The user run gets a fifth of the repeat time: it goes on beside the
  // optimised build's battery (docs/gate.md, "Verdict time").
  battery.plan.soak_max_ms = 1000 * opts.repeat_s;
  battery.user.max_ms = 1000 * opts.repeat_s / 5;
  std::vector<int> compared;
  for (size_t s = 0; s < battery.sets.size(); ++s)
    if (battery.sets[s].compared) compared.push_back(static_cast<int>(s));
  const int threads = opts.reference_threads > 0 ? opts.reference_threads
                                                 : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Sets side by side, each on its share of the cores (A and B first: the
  // fills need them): one set's twin on every core spent its barriers
  // spinning while the runs beside it held a core (docs/gate.md, "Verdict
  // time"; m2's references 11.0-14.4 -> 8.1 s).
  References refs(g, battery, std::max(1, threads / static_cast<int>(std::max<size_t>(1, compared.size()))));
  double reference_s = 0;
  auto reference_job = std::async(std::launch::async, [&] {
    const PhaseClock::Clock::time_point t0 = PhaseClock::Clock::now();
    refs.compute(compared, threads);
    reference_s = PhaseClock::since(t0);
  });
  for (const BatterySet& s : battery.sets)
    if (s.compared) report.distributions.push_back(s.name);
  clock.record("plan", PhaseClock::since(plan_start));
  // blocks.bin (the input bytes of every run) beside the rest of the build
  // when there is any (after it, only for a kernel that built), and the
  // inputs' hashes for the report beside what follows: neither is needed
  // before the first run, and the hashes not before the report.
  std::future<void> blocks_job;
  if (build_job.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    blocks_job = std::async(std::launch::async, [&] { write_blocks(battery.plan, wd / "blocks.bin"); });
  auto inputs_job = std::async(std::launch::async, [&] { return describe_inputs(battery); });

  std::optional<Executables> exe = build_job.get();
  for (const auto& [name, seconds] : build_phases) clock.record(name, seconds);
  clock.lap("plan_and_build");
  if (!exe) {
    refs.stop();
    reference_job.wait();
    if (blocks_job.valid()) blocks_job.wait();
    report.inputs = inputs_job.get();
    return;
  }

  if (blocks_job.valid()) blocks_job.get();
  else write_blocks(battery.plan, wd / "blocks.bin");
  // A kernel with static memory is also run in ThreadSanitizer's build,
  // beside the sanitized run (nothing is timed in either).
  const std::vector<StaticData> statics = shared_static_data(wd / "candidate.o");
  std::future<std::pair<RaceRun, double>> race_job;
  if (!statics.empty() && opts.run_sanitizer)
    race_job = std::async(std::launch::async, [&] {
      const PhaseClock::Clock::time_point t0 = PhaseClock::Clock::now();
      RaceRun r = run_race_check(wd, opts, battery, call_timeout, names);
      return std::make_pair(std::move(r), PhaseClock::since(t0));
    });
  // The sanitized run times nothing: it goes on beside the references.
  std::optional<RunOutcome> sanitized;
  if (opts.run_sanitizer) {
    const PhaseClock::Clock::time_point t0 = PhaseClock::Clock::now();
    sanitized = run_driver(wd, exe->sanitized, battery.sanitized_plan, "sanitized", Build::Sanitized, 3 * call_timeout,
                           opts, names);
    clock.record("sanitized_run", PhaseClock::since(t0));
  }
  std::optional<RaceRun> race;
  if (race_job.valid()) {
    auto [r, race_s] = race_job.get();
    race = std::move(r);
    clock.record("race_run", race_s);
  }
  clock.lap("first_runs");
  // Then the user run, beside what is left of the references (nothing, for
  // most graphs). Not beside the sanitized run: a fast kernel's OpenMP
  // threads sharing the cores with another run spend the user run's time
  // waiting for each other; a slow kernel's calls stop at its time limit
  // anyway, and hide the references of the large graphs (docs/gate.md,
  // "Verdict time").
  auto user_job = std::async(std::launch::async, [&] {
    const PhaseClock::Clock::time_point t0 = PhaseClock::Clock::now();
    UserOutcome u = run_user(wd, exe->user, battery, call_timeout, opts);
    return std::make_pair(std::move(u), PhaseClock::since(t0));
  });
  // The fills that hold right answers need the references of A and B
  // (computed first); the others may still be going on.
  fill_reference_outputs(g, battery, refs);
  clock.lap("fills_wait");

  // The optimised run's battery goes on beside the rest of the user run and
  // of the references (its calls are not timed; most of its time is the
  // 50 ms after each call that looks for work after return); the driver
  // holds before its slots until both have ended, so the rounds and the
  // soak (the timing) have the machine to themselves. The hold file is
  // created however they end.
  const std::string hold = "hold_optimised";  // in the work folder, the driver's working directory
  std::error_code ec;
  fs::remove(wd / hold, ec);
  battery.plan.hold_path = hold;
  const PhaseClock::Clock::time_point optimised_start = PhaseClock::Clock::now();
  auto optimised_job = std::async(std::launch::async, [&] {
    return run_driver(wd, exe->optimised, battery.plan, "optimised", Build::Optimised, call_timeout, opts, names);
  });
  struct Release {  // creates the hold file on the way out, without throwing
    std::string path;
    ~Release() { std::ofstream(path, std::ios::binary).put('\n'); }
  };
  std::optional<std::pair<UserOutcome, double>> user_result;
  {
    Release release{wd / hold};
    user_result = user_job.get();
    clock.record("user_run", user_result->second);
    clock.lap("user_wait");
    reference_job.get();
    clock.record("references", reference_s);
    clock.lap("reference_wait");
  }
  UserOutcome& user = user_result->first;
  RunOutcome optimised = optimised_job.get();
  clock.record("optimised_run", PhaseClock::since(optimised_start));
  if (optimised.log.held_ms >= 0) clock.record("held", optimised.log.held_ms / 1000);
  clock.lap("optimised_wait");
  report.inputs = inputs_job.get();
  // One comparison per distinct output of a set, whichever run returned it.
  Comparisons comparisons(g, refs);
  judge_process(optimised, v);
  judge_calls(g, battery, comparisons, optimised, v);
  judge_user_run(g, battery, comparisons, user, optimised, v);
  if (sanitized) {
    judge_process(*sanitized, v);
    judge_calls(g, battery, comparisons, *sanitized, v);
  } else {
    report.notes.push_back("the sanitized build was not run");
  }
  if (race) {
    std::string why = race->why;
    if (race->run && judge_race_run(*race->run, statics, v, &why)) why.clear();
    if (!why.empty()) report.notes.push_back(why + "; the kernel's static memory was checked only by the concurrent rounds");
  }
  clock.lap("judge");
  if (optimised.log.soaked >= 0 && optimised.log.soaked < optimised.log.soak_planned)
    report.notes.push_back("the soak made " + std::to_string(optimised.log.soaked) + " of its " +
                           std::to_string(optimised.log.soak_planned) + " calls within its time limit");
  const DriverPlan& plan = battery.plan;
  if (optimised.log.overlaps >= 0 && optimised.log.overlaps < plan.min_overlaps &&
      !(optimised.log.overlaps >= plan.min_overlaps_slow && optimised.log.overlap_ms >= plan.min_overlap_ms))
    report.notes.push_back("only " + std::to_string(optimised.log.overlaps) +
                           " calls of the concurrent rounds overlapped the other thread's (" +
                           std::to_string(static_cast<int64_t>(optimised.log.overlap_ms)) + " ms)");
  if (user.log.done && user.log.calls < user.planned_calls)
    report.notes.push_back("the plain process made " + std::to_string(user.log.calls) + " of its " +
                           std::to_string(user.planned_calls) + " calls within its time limit");

  if (optimised.log.timed) {
    report.time_ms = optimised.log.median_ms;
    report.time_min_ms = optimised.log.min_ms;
    report.time_max_ms = optimised.log.max_ms;
    report.time_reps = optimised.log.reps;
    if (opts.check_roofline && optimised.log.median_ms < report.roofline.floor_ms) {
      char msg[256];
      std::snprintf(msg, sizeof msg,
                    "the kernel took %.3g ms per call on repeated inputs, below the roofline floor of %.3g ms: it "
                    "cannot have done the work the spec asks for",
                    optimised.log.median_ms, report.roofline.floor_ms);
      v.add(reason::kFasterThanRoofline, "time", msg,
            {{"median_ms", optimised.log.median_ms},
             {"min_ms", optimised.log.min_ms},
             {"reps", optimised.log.reps},
             {"floor_ms", report.roofline.floor_ms},
             {"flops", report.roofline.flops},
             {"bytes", report.roofline.bytes}});
    }
  } else if (opts.time_kernel) {
    report.notes.push_back("the kernel was not timed: the battery did not complete");
  }
}

}  // namespace

GateReport verify_kernel(const ir::Graph& g, const std::string& kernel_source, const GateOptions& opts) {
  GateReport report;
  PhaseClock clock(report.phases_s);
  judge_kernel(g, kernel_source, opts, report, clock);
  report.accepted = report.reasons.empty();
  clock.total();
  return report;
}

}  // namespace axon::gate
