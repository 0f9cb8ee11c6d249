#include "gate/user_driver_source.h"

#include <fstream>
#include <sstream>

#include "gate/driver_source.h"
#include "support/diagnostic.h"

namespace axon::gate {

namespace {

constexpr const char* kUserBody = R"AXON_USER(
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

namespace {

enum { kMaxBuffers = 64 };

FILE* g_events = nullptr;

void event(const char* text) {
  fputs(text, g_events);
  fputc('\n', g_events);
  fflush(g_events);
}

[[noreturn]] void fail(const char* what) {
  fprintf(g_events, "error %s\n", what);
  fflush(g_events);
  exit(90);
}

double now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

}  // namespace

// user_driver PLAN BLOCKS EVENTS OUTPUTS
int main(int argc, char** argv) {
  if (argc < 5) return 91;
  g_events = fopen(argv[3], "a");
  FILE* outputs = fopen(argv[4], "wb");
  FILE* plan = fopen(argv[1], "r");
  FILE* blocks = fopen(argv[2], "rb");
  if (!g_events || !outputs || !plan || !blocks) return 92;
  char word[32];
  int version = 0, nin = 0, nout = 0, calls = 0;
  double max_ms = 0;
  size_t size[kMaxBuffers] = {0};
  long long offset[kMaxBuffers] = {0};
  if (fscanf(plan, "%31s %d", word, &version) != 2 || strcmp(word, "axon-gate-user") != 0 || version != 1)
    fail("not a user plan");
  while (fscanf(plan, "%31s", word) == 1 && strcmp(word, "end") != 0) {
    if (!strcmp(word, "buffers")) {
      if (fscanf(plan, "%d %d", &nin, &nout) != 2 || nin < 0 || nout < 1 || nin + nout > kMaxBuffers)
        fail("bad buffers line");
    } else if (!strcmp(word, "size")) {
      int b;
      unsigned long long n;
      if (fscanf(plan, "%d %llu", &b, &n) != 2 || b < 0 || b >= nin + nout) fail("bad size line");
      size[b] = static_cast<size_t>(n);
    } else if (!strcmp(word, "input")) {
      int i;
      long long off;
      if (fscanf(plan, "%d %lld", &i, &off) != 2 || i < 0 || i >= kMaxBuffers) fail("bad input line");
      offset[i] = off;
    } else if (!strcmp(word, "calls")) {
      if (fscanf(plan, "%d %lf", &calls, &max_ms) != 2 || calls < 1) fail("bad calls line");
    } else {
      fail("unknown plan record");
    }
  }
  fclose(plan);

  // Plain allocations, as a program would make them.
  void* buf[kMaxBuffers];
  for (int k = 0; k < nin + nout; ++k) {
    buf[k] = malloc(size[k] ? size[k] : 1);
    if (!buf[k]) fail("malloc failed");
  }
  for (int i = 0; i < nin; ++i) {
    if (fseek(blocks, offset[i], SEEK_SET) != 0 || fread(buf[i], 1, size[i], blocks) != size[i])
      fail("cannot read the inputs");
  }
  fclose(blocks);
  event("ready");

  double start = now_ms(), last_progress = start;
  int made = 0;
  for (; made < calls && (made == 0 || now_ms() - start < max_ms); ++made) {
    axon_gate_call(buf);
    if (made == 0) {
      for (int j = 0; j < nout; ++j)
        if (fwrite(buf[nin + j], 1, size[nin + j], outputs) != size[nin + j]) fail("cannot write the outputs");
      fflush(outputs);
      event("first");
    }
    double t = now_ms();
    if (t - last_progress > 500) {
      fprintf(g_events, "progress calls=%d\n", made + 1);
      fflush(g_events);
      last_progress = t;
    }
  }
  for (int j = 0; j < nout; ++j)
    if (fwrite(buf[nin + j], 1, size[nin + j], outputs) != size[nin + j]) fail("cannot write the outputs");
  fclose(outputs);
  fprintf(g_events, "last calls=%d\n", made);
  for (int k = 0; k < nin + nout; ++k) free(buf[k]);
  event("done");
  fclose(g_events);
  return 0;
}
)AXON_USER";

}  // namespace

const std::string& user_driver_source() {
  static const std::string text = std::string("// user_driver.cpp: axon's gate, the kernel in a plain process. Trusted\n"
                                              "// code (src/gate/user_driver_source.h).\n"
                                              "void axon_gate_call(void* const* b);  // call.cpp\n") +
                                  kUserBody;
  return text;
}

void write_user_plan(const Battery& b, const std::string& path) {
  const DriverPlan& plan = b.plan;
  std::vector<uint64_t> block_offset;
  uint64_t at = 0;
  for (const auto& blk : plan.blocks) {
    block_offset.push_back(at);
    at += blk.size();
  }
  std::ostringstream p;
  p << "axon-gate-user 1\n";
  p << "buffers " << plan.input_bytes.size() << " " << plan.output_bytes.size() << "\n";
  size_t k = 0;
  for (int64_t n : plan.input_bytes) p << "size " << k++ << " " << n << "\n";
  for (int64_t n : plan.output_bytes) p << "size " << k++ << " " << n << "\n";
  const std::vector<int>& blocks = plan.sets.at(static_cast<size_t>(b.user.set));
  for (size_t i = 0; i < blocks.size(); ++i) p << "input " << i << " " << block_offset[static_cast<size_t>(blocks[i])] << "\n";
  p << "calls " << b.user.calls << " " << b.user.max_ms << "\n";
  p << "end\n";
  std::ofstream out(path);
  out << p.str();
  out.close();
  AXON_CHECK(out.good()) << "cannot write " << path;
}

UserLog read_user_log(const DriverPlan& plan, const std::string& events_path, const std::string& outputs_path) {
  UserLog log;
  std::ifstream events(events_path);
  for (std::string line; std::getline(events, line);) {
    if (events.eof()) break;
    if (line == "ready") log.ready = true;
    else if (line == "first") log.first = true;
    else if (line == "done") log.done = true;
    else if (line.rfind("last calls=", 0) == 0) log.calls = std::stoll(line.substr(11));
  }
  std::ifstream outputs(outputs_path, std::ios::binary);
  auto read = [&](std::vector<std::vector<uint8_t>>& into) {
    for (int64_t n : plan.output_bytes) {
      std::vector<uint8_t> bytes(static_cast<size_t>(n));
      outputs.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(n));
      if (outputs.gcount() != n) {
        into.clear();
        return;
      }
      into.push_back(std::move(bytes));
    }
  };
  if (log.first) read(log.first_outputs);
  if (log.done) read(log.last_outputs);
  return log;
}

}  // namespace axon::gate
