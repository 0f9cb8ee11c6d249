// The JSON form of a Target (docs/target.md): to_json writes every field,
// from_json applies any subset of them to a base description, and
// load_target_file does the same from a file.
//
// Strict on input: an unknown field, a value of the wrong type or out of
// range is an axon::Diagnostic naming the field's path ("caches[1].bytes")
// and the value, never a silent default. "fingerprint" is output only
// (recomputed from the other fields, so an edited file need not update it);
// "vector_bits" is derived from "isa" and, when given, must agree with it.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "support/diagnostic.h"
#include "target/target.h"

namespace axon::target {

using json = nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& field, const json& value, const std::string& expected) {
  throw Diagnostic(SourceLoc{}, "target field '" + field + "': expected " + expected + ", got " + value.dump());
}

void require_object(const std::string& field, const json& j) {
  if (!j.is_object()) bad(field, j, "an object");
}

void reject_unknown(const std::string& prefix, const json& j, const std::set<std::string>& known) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) {
      std::string field = prefix.empty() ? it.key() : prefix + "." + it.key();
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Diagnostic(SourceLoc{}, "unknown target field '" + field + "' (value " + it.value().dump() +
                                        "); known fields here: " + list);
    }
}

int64_t get_int(const std::string& field, const json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) bad(field, v, "an integer");
  // Unsigned values above int64's range are as out of range as negative ones.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    bad(field, v, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) bad(field, v, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

double get_rate(const std::string& field, const json& v) {
  if (!v.is_number()) bad(field, v, "a number");
  double x = v.get<double>();
  if (!(x >= 0) || x > 1e9) bad(field, v, "a non-negative number (0: not measured)");
  return x;
}

bool get_bool(const std::string& field, const json& v) {
  if (!v.is_boolean()) bad(field, v, "true or false");
  return v.get<bool>();
}

constexpr int64_t kMaxCount = 1 << 20;         // cores, threads
constexpr int64_t kMaxBytes = int64_t{1} << 40;  // one cache instance

Cache cache_from_json(const std::string& field, const json& j, const std::vector<Cache>& base) {
  require_object(field, j);
  reject_unknown(field, j, {"level", "bytes", "line_bytes", "shared_by_cores"});
  if (!j.contains("level")) bad(field, j, "an object with a \"level\"");
  Cache c;
  c.level = static_cast<int>(get_int(field + ".level", j["level"], 1, 4));
  bool in_base = false;
  for (const Cache& b : base)
    if (b.level == c.level) c = b, in_base = true;
  if (!in_base && !j.contains("bytes"))
    bad(field, j, "a \"bytes\" field (the base description has no L" + std::to_string(c.level) + " cache)");
  if (j.contains("bytes")) c.bytes = get_int(field + ".bytes", j["bytes"], 1, kMaxBytes);
  if (j.contains("line_bytes")) {
    c.line_bytes = static_cast<int>(get_int(field + ".line_bytes", j["line_bytes"], 1, 4096));
    if ((c.line_bytes & (c.line_bytes - 1)) != 0) bad(field + ".line_bytes", j["line_bytes"], "a power of two");
  }
  if (j.contains("shared_by_cores"))
    c.shared_by_cores = static_cast<int>(get_int(field + ".shared_by_cores", j["shared_by_cores"], 1, kMaxCount));
  return c;
}

}  // namespace

json to_json(const Target& t) {
  json j;
  j["name"] = t.name;
  j["cores"] = t.cores;
  j["threads"] = t.threads;
  j["caches"] = json::array();
  for (const Cache& c : t.caches)
    j["caches"].push_back(
        {{"level", c.level}, {"bytes", c.bytes}, {"line_bytes", c.line_bytes}, {"shared_by_cores", c.shared_by_cores}});
  j["isa"] = {{"avx2", t.isa.avx2},         {"fma", t.isa.fma},           {"avx512f", t.isa.avx512f},
              {"avx512bw", t.isa.avx512bw}, {"avx512vl", t.isa.avx512vl}, {"avx512dq", t.isa.avx512dq},
              {"avx512vnni", t.isa.avx512vnni}, {"avx512bf16", t.isa.avx512bf16}};
  j["vector_bits"] = t.isa.vector_bits();
  j["peaks"] = {{"fma_gflops_1t", t.peaks.fma_gflops_1t},
                {"fma_gflops_all", t.peaks.fma_gflops_all},
                {"stream_gbs_1t", t.peaks.stream_gbs_1t},
                {"stream_gbs_all", t.peaks.stream_gbs_all},
                {"read_gbs_all", t.peaks.read_gbs_all},
                {"nt_copy_gbs_all", t.peaks.nt_copy_gbs_all},
                {"nt_triad_gbs_all", t.peaks.nt_triad_gbs_all}};
  j["fingerprint"] = t.fingerprint();
  return j;
}

Target from_json(const json& j, Target base) {
  require_object("(top level)", j);
  reject_unknown("", j, {"name", "cores", "threads", "caches", "isa", "vector_bits", "peaks", "fingerprint"});
  Target t = std::move(base);
  if (j.contains("name")) {
    if (!j["name"].is_string() || j["name"].get<std::string>().empty()) bad("name", j["name"], "a non-empty string");
    t.name = j["name"].get<std::string>();
  }
  if (j.contains("cores")) t.cores = static_cast<int>(get_int("cores", j["cores"], 1, kMaxCount));
  if (j.contains("threads")) t.threads = static_cast<int>(get_int("threads", j["threads"], 1, kMaxCount));
  if (t.threads < t.cores) {
    const char* f = j.contains("threads") ? "threads" : "cores";
    bad(f, j[f], "threads >= cores (now " + std::to_string(t.threads) + " threads, " + std::to_string(t.cores) +
                     " cores)");
  }
  if (j.contains("caches")) {
    const json& cs = j["caches"];
    if (!cs.is_array()) bad("caches", cs, "an array of caches");
    std::vector<Cache> caches;
    std::set<int> seen;
    for (size_t i = 0; i < cs.size(); ++i) {
      std::string field = "caches[" + std::to_string(i) + "]";
      Cache c = cache_from_json(field, cs[i], t.caches);
      if (!seen.insert(c.level).second) bad(field + ".level", cs[i]["level"], "each level at most once");
      caches.push_back(c);
    }
    std::sort(caches.begin(), caches.end(), [](const Cache& a, const Cache& b) { return a.level < b.level; });
    t.caches = caches;
  }
  if (j.contains("isa")) {
    const json& ij = j["isa"];
    require_object("isa", ij);
    reject_unknown("isa", ij, {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512vnni", "avx512bf16"});
    auto set = [&](const char* k, bool& flag) {
      if (ij.contains(k)) flag = get_bool(std::string("isa.") + k, ij[k]);
    };
    set("avx2", t.isa.avx2);
    set("fma", t.isa.fma);
    set("avx512f", t.isa.avx512f);
    set("avx512bw", t.isa.avx512bw);
    set("avx512vl", t.isa.avx512vl);
    set("avx512dq", t.isa.avx512dq);
    set("avx512vnni", t.isa.avx512vnni);
    set("avx512bf16", t.isa.avx512bf16);
  }
  if (j.contains("peaks")) {
    const json& pj = j["peaks"];
    require_object("peaks", pj);
    reject_unknown("peaks", pj,
                   {"fma_gflops_1t", "fma_gflops_all", "stream_gbs_1t", "stream_gbs_all", "read_gbs_all",
                    "nt_copy_gbs_all", "nt_triad_gbs_all"});
    auto set = [&](const char* k, double& v) {
      if (pj.contains(k)) v = get_rate(std::string("peaks.") + k, pj[k]);
    };
    set("fma_gflops_1t", t.peaks.fma_gflops_1t);
    set("fma_gflops_all", t.peaks.fma_gflops_all);
    set("stream_gbs_1t", t.peaks.stream_gbs_1t);
    set("stream_gbs_all", t.peaks.stream_gbs_all);
    set("read_gbs_all", t.peaks.read_gbs_all);
    set("nt_copy_gbs_all", t.peaks.nt_copy_gbs_all);
    set("nt_triad_gbs_all", t.peaks.nt_triad_gbs_all);
  }
  if (j.contains("vector_bits")) {
    const json& v = j["vector_bits"];
    int64_t bits = get_int("vector_bits", v, 0, 512);
    if (bits != t.isa.vector_bits())
      bad("vector_bits", v,
          std::to_string(t.isa.vector_bits()) + ", the width the isa flags give (vector_bits is derived: set the isa "
                                                "flags instead, or delete the field)");
  }
  if (j.contains("fingerprint") && !j["fingerprint"].is_string()) bad("fingerprint", j["fingerprint"], "a string");
  return t;
}

Target load_target_file(const std::string& path, Target base) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Diagnostic(SourceLoc{path, 0, 0}, "cannot read the target file " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw Diagnostic(SourceLoc{path, 0, 0}, std::string("not valid JSON: ") + e.what());
  }
  try {
    return from_json(j, std::move(base));
  } catch (const Diagnostic& d) {
    throw Diagnostic(SourceLoc{path, 0, 0}, d.message());
  }
}

}  // namespace axon::target
