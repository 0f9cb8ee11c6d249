// bench_report: bench.md and bench.csv from the bench.json object (bench.h;
// the fields are described in docs/bench.md).
#include <cstdio>
#include <sstream>

#include "bench/bench.h"

namespace axon::bench {

using json = nlohmann::json;

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double num(const json& j, const char* k) { return j.is_object() && j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; }

std::string str(const json& j, const char* k) {
  return j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : "";
}

double fraction(const json& row, const char* which) { return row.contains("fraction") ? num(row["fraction"], which) : 0.0; }

// A status inside a table cell: no pipes, no newlines, not too long.
std::string cell(std::string s, size_t max = 48) {
  for (char& c : s)
    if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
  return s.size() > max ? s.substr(0, max - 3) + "..." : s;
}

// A peer with no form of the program (torch.sdpa on a program that is not
// attention): "not applicable: why" from peers.py.
bool not_applicable(const std::string& status) { return status.rfind("not applicable", 0) == 0; }

// ms when the row was timed, else its status ("n/a" in markdown for a peer
// with no form of the program).
std::string time_cell(const json& row, const char* key, bool markdown) {
  std::string status = str(row, "status");
  if (status == "ok" && num(row, key) > 0) return fmt("%.4g", num(row, key));
  if (status.empty()) status = "not run";
  if (markdown && not_applicable(status)) return "n/a";
  return markdown ? cell(status) : status;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::vector<std::string> peer_names(const json& b) {
  std::vector<std::string> v;
  if (b.contains("peers"))
    for (const auto& p : b["peers"]) v.push_back(p.get<std::string>());
  return v;
}

// The rules of the rewrites that produced optimize's winner, joined by " + "; "none" when it is the original graph.
std::string applied_rules(const json& opt) {
  std::string s;
  for (const json& r : opt.value("rewrites_applied", json::array()))
    if (r.is_string()) s += (s.empty() ? "" : " + ") + r.get<std::string>();
  return s.empty() ? "none" : s;
}

// "1.12x (torch.compile)" from the interleaved bursts, or why there is none.
std::string interleaved_cell(const json& w) {
  if (w.contains("interleaved")) {
    const json& i = w["interleaved"];
    return fmt("%.2fx", num(i, "speedup_vs_best_peer")) + " (" + str(i, "best_peer") + ")";
  }
  if (w.contains("axon") && w["axon"].contains("in_peers_process")) {
    std::string st = str(w["axon"]["in_peers_process"], "status");
    if (st != "ok") return cell("axon in peers.py: " + st);
  }
  return "-";
}

// "0.91 of 41.2 GB/s": axon's bandwidth over the triad's, paired burst by
// burst in the interleaved rounds, and the triad's rate; or why there is none.
std::string stream_cell(const json& w) {
  if (!w.contains("interleaved") || !w["interleaved"].contains("stream")) return "-";
  const json& i = w["interleaved"];
  if (str(i["stream"], "status") != "ok") return cell("triad: " + str(i["stream"], "status"));
  if (num(i, "axon_stream_fraction") <= 0) return "-";
  return fmt("%.2f", num(i, "axon_stream_fraction")) + " of " + fmt("%.1f", num(i["stream"], "gbs")) + " GB/s";
}

}  // namespace

std::string bench_markdown(const json& b) {
  std::ostringstream o;
  std::vector<std::string> peers = peer_names(b);
  const json& pk = b["probe"];
  o << "# axon bench\n\n";
  o << "- command: `" << str(b, "command") << "`\n";
  o << "- date: " << str(b, "date") << "\n";
  o << "- target: " << str(b["target"], "name") << ", " << b["target"].value("cores", 0) << " cores, last-level cache "
    << fmt("%.0f", num(b, "last_level_cache_bytes") / (1024 * 1024)) << " MiB\n";
  o << "- probe (this run): FMA " << fmt("%.1f", num(pk, "fma_gflops_all")) << " GFLOP/s all cores ("
    << fmt("%.1f", num(pk, "fma_gflops_1t")) << " one thread), stream " << fmt("%.1f", num(pk, "stream_gbs_all"))
    << " GB/s all cores (" << fmt("%.1f", num(pk, "stream_gbs_1t")) << " one thread)";
  if (b.contains("probe_start") && b.contains("probe_end"))
    o << ": the better of the probe at the start (" << fmt("%.1f", num(b["probe_start"], "fma_gflops_all"))
      << " GFLOP/s, " << fmt("%.1f", num(b["probe_start"], "stream_gbs_all")) << " GB/s) and at the end ("
      << fmt("%.1f", num(b["probe_end"], "fma_gflops_all")) << " GFLOP/s, "
      << fmt("%.1f", num(b["probe_end"], "stream_gbs_all")) << " GB/s) of the run";
  o << "\n";
  o << "- bandwidth ceiling " << fmt("%.1f", num(pk, "bandwidth_ceiling_gbs"))
    << " GB/s: the best real traffic of the probe's loops on all cores (read-only sum "
    << fmt("%.1f", num(pk, "read_gbs_all")) << ", streaming-store copy " << fmt("%.1f", num(pk, "nt_copy_gbs_all"))
    << ", streaming-store triad " << fmt("%.1f", num(pk, "nt_triad_gbs_all")) << ", plain triad "
    << fmt("%.1f", num(pk, "stream_gbs_all") * 16.0 / 12.0) << " counting the lines its stores read)\n";
  o << "- roofline floor = max(FLOPs / FMA peak, bytes / bandwidth ceiling); bytes count each input read once and "
       "each output written once; a fraction of the ceiling above 1.05 is flagged as an anomaly below\n";
  o << "- cold inputs: every kernel and peer cycles through copies of its buffers totalling at least "
    << fmt("%.0f", num(b, "cold_bytes") / (1024 * 1024)) << " MiB (the stream probe's working set)\n";
  o << "- optimize budget " << fmt("%g", num(b, "budget_s")) << " s per workload, tuning database "
    << (b.value("use_db", true) ? "on" : "off") << "; timing: median of at least 5 calls and "
    << fmt("%g", num(b, "min_seconds")) << " s"
    << (b.value("rounds", 1) > 1 ? "; " + std::to_string(b.value("rounds", 1)) +
                                        " rounds of peers then axon, each time the median of its round medians"
                                  : std::string("; axon timed before and after the peers, the slower counts"))
    << "\n";
  if (b.value("interleave_rounds", 0) > 0)
    o << "- interleaved: in each peers run, axon's kernel (loaded into the peers' Python process) and every peer "
         "that passed take turns, "
      << b.value("interleave_rounds", 0)
      << " rounds of one burst each (at least 3 calls and " << fmt("%g", num(b, "burst_seconds")) << " s, each after "
      << fmt("%g", num(b, "burst_gap_s"))
      << " s of sleep so that the previous contender's spinning worker threads have parked), order rotated each "
         "round; a contender's time is "
         "the median of its burst medians (median over the rounds with --rounds). The last column compares axon "
         "with the best peer by those times, all taken in the same seconds\n";
  if (str(b.value("stream_kernel", json::object()), "status") == "ok")
    o << "- bandwidth in the same seconds: the STREAM triad of the probe (12 bytes per element over three buffers of "
      << fmt("%.0f", num(b["stream_kernel"], "elements") * 4 / (1024 * 1024))
      << " MiB) takes its turn in every interleaved round; \"axon / triad\" is axon's bytes per second over the "
         "triad's, paired burst by burst within each round, the median of those ratios\n";
  else if (b.value("interleave_rounds", 0) > 0 && b.contains("stream_kernel"))
    o << "- bandwidth in the same seconds: " << str(b["stream_kernel"], "status") << "\n";
  o << "- plot: " << (str(b["plot"], "status") == "ok" ? "bench.png" : str(b["plot"], "status")) << "\n";
  if (b.value("interrupted", false))
    o << "- **interrupted**: " << b["workloads"].size() << " workloads finished, " << b.value("not_run", json::array()).size()
      << " not run\n";
  o << "\n| workload | bound | FLOPs | bytes | floor ms | axon ms | naive ms |";
  for (const auto& p : peers) o << " " << p << " ms |";
  o << " axon / roofline | axon bandwidth fraction | axon FMA fraction | speedup vs best peer | interleaved: speedup "
       "vs best peer | interleaved: axon / triad bandwidth |\n|---|---|---:|---:|---:|---:|---:|";
  for (size_t i = 0; i < peers.size(); ++i) o << "---:|";
  o << "---:|---:|---:|---:|---:|---:|\n";
  std::vector<std::string> notes;
  for (const json& w : b["workloads"]) {
    std::string name = str(w, "name");
    if (w.contains("error")) {
      o << "| " << name << " | error: " << cell(str(w, "error"), 120) << " |\n";
      notes.push_back(name + ": " + str(w, "error"));
      continue;
    }
    o << "| " << name << " | " << str(w, "bound") << " | " << fmt("%.3g", num(w, "flops")) << " | "
      << fmt("%.3g", num(w, "bytes")) << " | " << fmt("%.4g", num(w, "floor_ms")) << " | "
      << time_cell(w["axon"], "ms", true) << " | " << time_cell(w["naive"], "ms", true) << " |";
    for (const auto& p : peers) {
      const json& row = w.contains("peers") && w["peers"].contains(p) ? w["peers"][p] : json::object();
      o << " " << time_cell(row, "median_ms", true) << " |";
      std::string st = str(row, "status");
      if (st != "ok" && !not_applicable(st) && cell(st) != st) notes.push_back(name + ", " + p + ": " + st);
    }
    if (w.contains("anomalies"))
      for (const auto& a : w["anomalies"]) notes.push_back(name + ": anomaly: " + a.get<std::string>());
    const json& a = w["axon"];
    if (str(w, "bound") == "memory" && w.contains("mix_ceiling") && fraction(a, "bandwidth_of_mix") > 0)
      notes.push_back(name + ": axon at " + fmt("%.2f", fraction(a, "bandwidth_of_mix")) + " of the " +
                      str(w["mix_ceiling"], "loop") + " (" + fmt("%.1f", num(w["mix_ceiling"], "gbs")) +
                      " GB/s), the probe's loop nearest its traffic (" +
                      fmt("%.0f", 100 * num(w["mix_ceiling"], "write_share")) + "% of its bytes written)");
    std::string best = str(w, "best_peer");
    o << " " << fmt("%.2f", fraction(a, "roofline")) << " | " << fmt("%.2f", fraction(a, "bandwidth")) << " | "
      << fmt("%.3g", fraction(a, "fma")) << " | "
      << (best.empty() ? std::string("no peer timed") : fmt("%.2fx", num(w, "speedup_vs_best_peer")) + " (" + best + ")")
      << " | " << interleaved_cell(w) << " | " << stream_cell(w) << " |\n";
  }
  o << "\naxon's kernel is `optimize`'s winner (\"naive\" when no schedule beat the naive kernel); every time is "
       "re-measured here with cold inputs, after optimize, so it can differ from the search's own number.\n";
  std::vector<std::string> naive_rows;
  for (const json& w : b["workloads"])
    if (w.contains("optimize") && str(w["optimize"], "variant") == "naive") naive_rows.push_back(str(w, "name"));
  if (!naive_rows.empty()) {
    o << "Workloads where axon's kernel is the naive kernel:";
    for (const auto& n : naive_rows) o << " " << n;
    o << ".\n";
  }
  if (b.value("ablate_rewrites", false)) {
    o << "\n## Rewrites ablation\n\n"
         "Each workload optimized twice, with and without the proved rewrites (same budget, same seed); both winners "
         "timed here side by side with cold inputs. Speedup = ms without / ms with (above 1: the rewrites helped).\n\n"
         "| workload | axon ms | axon ms without rewrites | speedup from rewrites | rewrites in the winner | "
         "search ms with / without |\n|---|---:|---:|---:|---|---|\n";
    for (const json& w : b["workloads"]) {
      if (w.contains("error") || !w.contains("axon_no_rewrites")) continue;
      // The pair timed side by side: axon's median from before the peers (A/B/A may raise "ms" after them).
      json with = w["axon"];
      if (with.contains("ms_before_peers")) with["ms"] = with["ms_before_peers"];
      o << "| " << str(w, "name") << " | " << time_cell(with, "ms", true) << " | "
        << time_cell(w["axon_no_rewrites"], "ms", true) << " | "
        << (num(w, "rewrites_speedup") > 0 ? fmt("%.2fx", num(w, "rewrites_speedup")) : std::string("-")) << " | "
        << cell(applied_rules(w.value("optimize", json::object())), 120) << " | "
        << fmt("%.4g", num(w["optimize"], "search_axon_ms")) << " / "
        << fmt("%.4g", num(w.value("optimize_no_rewrites", json::object()), "search_axon_ms")) << " |\n";
    }
  }
  if (!notes.empty()) {
    o << "\nStatuses in full:\n\n";
    for (const auto& n : notes) o << "- " << n << "\n";
  }
  return o.str();
}

std::string bench_csv(const json& b) {
  std::ostringstream o;
  std::vector<std::string> peers = peer_names(b);
  o << "workload,entry,bound,flops,bytes,floor_ms,axon_ms,axon_status,axon_variant,axon_from_db,axon_copies,naive_ms,"
       "naive_status";
  for (const auto& p : peers) o << "," << p << "_ms," << p << "_status," << p << "_copies";
  o << ",axon_fraction_roofline,axon_fraction_bandwidth,axon_fraction_fma,best_peer,speedup_vs_best_peer,"
       "stream_gbs,fma_gflops,axon_no_rewrites_ms,rewrites_speedup,rewrites_applied,axon_interleaved_ms,"
       "best_peer_interleaved,best_peer_interleaved_ms,speedup_vs_best_peer_interleaved,stream_gbs_interleaved,"
       "axon_fraction_stream_interleaved,best_peer_fraction_stream_interleaved,mix_ceiling_loop,mix_ceiling_gbs,"
       "axon_fraction_bandwidth_of_mix,error\n";
  const json& pk = b["probe"];
  for (const json& w : b["workloads"]) {
    const json& a = w.value("axon", json::object());
    const json& n = w.value("naive", json::object());
    const json& opt = w.value("optimize", json::object());
    auto ms = [](const json& row, const char* k) { return num(row, k) > 0 ? fmt("%.6g", num(row, k)) : std::string(); };
    o << csv_field(str(w, "name")) << "," << csv_field(str(w, "entry")) << "," << str(w, "bound") << ","
      << fmt("%.6g", num(w, "flops")) << "," << fmt("%.6g", num(w, "bytes")) << "," << fmt("%.6g", num(w, "floor_ms"))
      << "," << ms(a, "ms") << "," << csv_field(str(a, "status")) << "," << str(opt, "variant") << ","
      << (opt.value("from_db", false) ? "1" : "0") << "," << a.value("copies", 0) << "," << ms(n, "ms") << ","
      << csv_field(str(n, "status"));
    for (const auto& p : peers) {
      const json& row = w.contains("peers") && w["peers"].contains(p) ? w["peers"][p] : json::object();
      o << "," << ms(row, "median_ms") << "," << csv_field(str(row, "status")) << "," << row.value("copies", 0);
    }
    // Significant digits, not decimals: a softmax's fraction of the FMA peak is far below 1e-4.
    o << "," << fmt("%.4g", fraction(a, "roofline")) << "," << fmt("%.4g", fraction(a, "bandwidth")) << ","
      << fmt("%.4g", fraction(a, "fma")) << "," << str(w, "best_peer") << "," << fmt("%.4g", num(w, "speedup_vs_best_peer"))
      << "," << fmt("%.3f", num(pk, "stream_gbs_all")) << "," << fmt("%.3f", num(pk, "fma_gflops_all")) << ",";
    if (w.contains("axon_no_rewrites"))  // only in an ablation run (--ablate-rewrites)
      o << ms(w["axon_no_rewrites"], "ms") << "," << fmt("%.4g", num(w, "rewrites_speedup")) << ","
        << csv_field(applied_rules(opt));
    else
      o << ",,";
    if (w.contains("interleaved")) {
      const json& i = w["interleaved"];
      o << "," << ms(i, "axon_ms") << "," << str(i, "best_peer") << "," << ms(i, "best_peer_ms") << ","
        << fmt("%.4g", num(i, "speedup_vs_best_peer"));
    } else {
      o << ",,,,";
    }
    const json* il = w.contains("interleaved") ? &w["interleaved"] : nullptr;
    if (il && il->contains("stream") && str((*il)["stream"], "status") == "ok")
      o << "," << fmt("%.4g", num((*il)["stream"], "gbs")) << "," << fmt("%.4g", num(*il, "axon_stream_fraction"))
        << "," << fmt("%.4g", num(*il, "best_peer_stream_fraction"));
    else
      o << ",,,";
    if (w.contains("mix_ceiling"))
      o << "," << csv_field(str(w["mix_ceiling"], "loop")) << "," << fmt("%.4g", num(w["mix_ceiling"], "gbs")) << ","
        << fmt("%.4g", fraction(a, "bandwidth_of_mix"));
    else
      o << ",,,";
    o << "," << csv_field(str(w, "error")) << "\n";
  }
  return o.str();
}

}  // namespace axon::bench
