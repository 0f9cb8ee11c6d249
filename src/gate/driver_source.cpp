#include "gate/driver_source.h"

#include <sstream>

namespace axon::gate {

namespace {

// The fixed part of the driver. It is C-style C++ on purpose: nothing in it
// may allocate in a signal handler, and the less of the C++ library it pulls
// in, the fewer symbols it shares with the kernel it links against.
constexpr const char* kDriverBody = R"AXON_DRIVER(
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <new>

namespace {

enum { kMaxBuffers = 64, kAfter = 0, kBefore = 1, kHeap = 2 };

// ---- reporting, async-signal-safe ------------------------------------------

int g_events = -1;
volatile int g_call = -1;

struct Line {
  char buf[512];
  size_t n = 0;
  Line& s(const char* t) {
    while (*t && n + 1 < sizeof buf) buf[n++] = *t++;
    return *this;
  }
  Line& i(long long v) {
    char tmp[24];
    int k = 0;
    unsigned long long u = v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do tmp[k++] = static_cast<char>('0' + u % 10); while ((u /= 10) != 0);
    if (v < 0) tmp[k++] = '-';
    while (k > 0 && n + 1 < sizeof buf) buf[n++] = tmp[--k];
    return *this;
  }
  Line& x(unsigned long long v) {
    s("0x");
    char tmp[17];
    int k = 0;
    do tmp[k++] = "0123456789abcdef"[v & 15]; while ((v >>= 4) != 0);
    while (k > 0 && n + 1 < sizeof buf) buf[n++] = tmp[--k];
    return *this;
  }
  void emit() {
    if (n + 1 < sizeof buf) buf[n++] = '\n';
    size_t off = 0;
    while (off < n) {
      ssize_t w = write(g_events, buf + off, n - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
  }
};

[[noreturn]] void fail(const char* what) {
  Line l;
  l.s("error ").s(what).emit();
  _exit(90);
}

// ---- buffers -----------------------------------------------------------------

struct Buffer {
  unsigned char* map = nullptr;  // the mapping (null for heap buffers)
  size_t map_len = 0;
  unsigned char* data = nullptr;
  size_t bytes = 0;
  size_t data_pages_off = 0, data_pages_len = 0;  // the readable pages within the mapping
  bool is_input = false;
};

struct Region {  // what the fault handler knows about one buffer
  uintptr_t lo, hi, data, end;
  int buffer, is_input;
};

Region g_regions[kMaxBuffers];
volatile int g_nregions = 0;
size_t g_page = 4096;

Buffer make_buffer(size_t bytes, int layout, bool is_input) {
  Buffer b;
  b.bytes = bytes;
  b.is_input = is_input;
  if (layout == kHeap) {
    b.data = static_cast<unsigned char*>(malloc(bytes));
    if (!b.data) fail("malloc failed for a buffer");
    return b;
  }
  size_t pages = (bytes + g_page - 1) / g_page * g_page;
  if (pages == 0) pages = g_page;
  b.map_len = pages + g_page;
  void* m = mmap(nullptr, b.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) fail("mmap failed for a buffer");
  b.map = static_cast<unsigned char*>(m);
  if (layout == kAfter) {
    b.data_pages_off = 0;
    b.data = b.map + pages - bytes;
    if (mprotect(b.map + pages, g_page, PROT_NONE) != 0) fail("mprotect failed");
  } else {
    b.data_pages_off = g_page;
    b.data = b.map + g_page;
    if (mprotect(b.map, g_page, PROT_NONE) != 0) fail("mprotect failed");
  }
  b.data_pages_len = pages;
  return b;
}

void free_buffer(Buffer& b) {
  if (b.map) munmap(b.map, b.map_len);
  else free(b.data);
  b = Buffer();
}

void set_input_writable(Buffer& b, bool writable) {
  if (!b.map) return;
  if (mprotect(b.map + b.data_pages_off, b.data_pages_len, writable ? PROT_READ | PROT_WRITE : PROT_READ) != 0)
    fail("mprotect failed");
}

// ---- the plan ------------------------------------------------------------------

struct Call {
  int set, layout, fresh;
};

int g_nin = 0, g_nout = 0;
size_t g_size[kMaxBuffers];
size_t* g_block_off = nullptr;
size_t* g_block_len = nullptr;
int* g_set_blocks = nullptr;  // g_nsets * g_nin
int g_nsets = 0, g_nblocks = 0, g_ncalls = 0;
Call* g_calls = nullptr;
int g_time_set = -1, g_warmup = 1, g_min_reps = 5;
double g_min_ms = 200, g_max_ms = 3000;
const unsigned char* g_blocks = nullptr;

void read_plan(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) fail("cannot open the plan");
  char word[32];
  int version = 0;
  if (fscanf(f, "%31s %d", word, &version) != 2 || strcmp(word, "axon-gate-plan") != 0 || version != 1)
    fail("not a version 1 plan");
  while (fscanf(f, "%31s", word) == 1) {
    if (!strcmp(word, "end")) break;
    if (!strcmp(word, "buffers")) {
      if (fscanf(f, "%d %d", &g_nin, &g_nout) != 2 || g_nin < 0 || g_nout < 1 || g_nin + g_nout > kMaxBuffers)
        fail("bad buffers line");
    } else if (!strcmp(word, "size")) {
      int b;
      unsigned long long n;
      if (fscanf(f, "%d %llu", &b, &n) != 2 || b < 0 || b >= g_nin + g_nout) fail("bad size line");
      g_size[b] = static_cast<size_t>(n);
    } else if (!strcmp(word, "block")) {
      int b;
      unsigned long long off, n;
      if (fscanf(f, "%d %llu %llu", &b, &off, &n) != 3 || b != g_nblocks) fail("bad block line");
      g_block_off = static_cast<size_t*>(realloc(g_block_off, sizeof(size_t) * (g_nblocks + 1)));
      g_block_len = static_cast<size_t*>(realloc(g_block_len, sizeof(size_t) * (g_nblocks + 1)));
      g_block_off[b] = static_cast<size_t>(off);
      g_block_len[b] = static_cast<size_t>(n);
      ++g_nblocks;
    } else if (!strcmp(word, "set")) {
      int s;
      if (fscanf(f, "%d", &s) != 1 || s != g_nsets) fail("bad set line");
      g_set_blocks = static_cast<int*>(realloc(g_set_blocks, sizeof(int) * (g_nsets + 1) * (g_nin ? g_nin : 1)));
      for (int i = 0; i < g_nin; ++i) {
        int blk;
        if (fscanf(f, "%d", &blk) != 1 || blk < 0 || blk >= g_nblocks || g_block_len[blk] != g_size[i])
          fail("bad set line");
        g_set_blocks[s * g_nin + i] = blk;
      }
      ++g_nsets;
    } else if (!strcmp(word, "call")) {
      int c;
      Call k;
      char layout[16];
      if (fscanf(f, "%d %d %15s %d", &c, &k.set, layout, &k.fresh) != 4 || c != g_ncalls || k.set < 0 ||
          k.set >= g_nsets)
        fail("bad call line");
      k.layout = !strcmp(layout, "after") ? kAfter : !strcmp(layout, "before") ? kBefore : kHeap;
      if (c == 0) k.fresh = 1;
      g_calls = static_cast<Call*>(realloc(g_calls, sizeof(Call) * (g_ncalls + 1)));
      g_calls[g_ncalls++] = k;
    } else if (!strcmp(word, "time")) {
      if (fscanf(f, "%d %d %d %lf %lf", &g_time_set, &g_warmup, &g_min_reps, &g_min_ms, &g_max_ms) != 5 ||
          g_time_set < 0 || g_time_set >= g_nsets)
        fail("bad time line");
    } else {
      fail("unknown plan record");
    }
  }
  fclose(f);
}

// ---- faults --------------------------------------------------------------------

void on_fault(int sig, siginfo_t* si, void*) {
  uintptr_t a = reinterpret_cast<uintptr_t>(si->si_addr);
  const char* region = "none";
  const char* side = "inside";
  int buffer = -1;
  long long offset = 0;
  // The buffer whose mapping holds the address; failing that, the nearest
  // buffer within 1 MiB (a strided overrun can jump its guard page).
  uintptr_t best = ~uintptr_t{0};
  int n = g_nregions;
  for (int k = 0; k < n; ++k) {
    const Region& r = g_regions[k];
    uintptr_t dist = a < r.lo ? r.lo - a : a >= r.hi ? a - r.hi + 1 : 0;
    if (dist < best && dist <= (uintptr_t{1} << 20) && (sig == SIGSEGV || sig == SIGBUS)) {
      best = dist;
      buffer = r.buffer;
      region = r.is_input ? "input" : "output";
      offset = static_cast<long long>(a - r.data);
      side = a < r.data ? "before" : a >= r.end ? "after" : "inside";
    }
  }
  Line l;
  l.s("fault signal=").i(sig).s(" code=").i(si->si_code).s(" addr=").x(a).s(" region=").s(region);
  l.s(" side=").s(side).s(" buffer=").i(buffer).s(" offset=").i(offset).s(" call=").i(g_call);
  l.emit();
  _exit(86);
}

void on_new_failure() {
  Line l;
  l.s("oom call=").i(g_call).emit();
  _exit(87);
}

void install_handlers(bool sanitized) {
  std::set_new_handler(on_new_failure);
  if (sanitized) return;  // the sanitizers report faults themselves
  static char alt[1 << 16];
  stack_t ss;
  ss.ss_sp = alt;
  ss.ss_size = sizeof alt;
  ss.ss_flags = 0;
  sigaltstack(&ss, nullptr);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
  for (int s : sigs) sigaction(s, &sa, nullptr);
}

// ---- threads -------------------------------------------------------------------

struct Task {
  long tid;
  char state;
  unsigned long long ticks;
};

int sample_tasks(Task* out, int max) {
  DIR* d = opendir("/proc/self/task");
  if (!d) return 0;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    int fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    ssize_t len = read(fd, text, sizeof text - 1);
    close(fd);
    if (len <= 0) continue;
    text[len] = 0;
    char* p = strrchr(text, ')');
    if (!p || n >= max) continue;
    Task t;
    t.tid = atol(e->d_name);
    t.state = p[2];
    // Fields after the state: ppid pgrp session tty tpgid flags minflt
    // cminflt majflt cmajflt utime stime.
    unsigned long long f[12] = {0};
    char* q = p + 3;
    for (int k = 0; k < 12 && q; ++k) {
      f[k] = strtoull(q, &q, 10);
    }
    t.ticks = f[10] + f[11];
    out[n++] = t;
  }
  closedir(d);
  return n;
}

void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

// Threads other than this one that used the CPU between `after_ms` and
// `after_ms` + 30 ms past the return. A parked OpenMP pool sleeps in the
// kernel and uses none. `only` (tids, -1 ends) limits the count to those.
int busy_threads(int after_ms, long* tids, int max_tids, const long* only) {
  enum { kMax = 1024 };
  static Task a[kMax], b[kMax];
  sleep_ms(after_ms);
  int na = sample_tasks(a, kMax);
  sleep_ms(30);
  int nb = sample_tasks(b, kMax);
  long self = static_cast<long>(getpid());
  int running = 0;
  for (int j = 0; j < nb; ++j) {
    if (b[j].tid == self) continue;
    bool listed = only == nullptr;
    for (const long* t = only; t && *t >= 0 && !listed; ++t) listed = *t == b[j].tid;
    if (!listed) continue;
    for (int i = 0; i < na; ++i)
      if (a[i].tid == b[j].tid) {
        unsigned long long used = b[j].ticks - a[i].ticks;
        if (used >= 2 || (used >= 1 && b[j].state == 'R')) {
          if (running < max_tids) tids[running] = b[j].tid;
          ++running;
        }
      }
  }
  if (running < max_tids) tids[running] = -1;
  return running;
}

// Threads still working well after the call returned: busy 20-50 ms after
// the return, and the same threads busy again 70-100 ms after it. The second
// look is what keeps a loaded machine from failing an honest kernel: an
// OpenMP worker that was runnable but starved of a core finishes its short
// spin late, inside the first window, and is asleep by the second; a thread
// that goes on working is busy in both.
int running_threads() {
  enum { kMaxTids = 256 };
  static long first[kMaxTids + 1], second[kMaxTids + 1];
  int n = busy_threads(20, first, kMaxTids, nullptr);
  if (n == 0) return 0;
  if (n > kMaxTids) first[kMaxTids] = -1;
  return busy_threads(20, second, kMaxTids, first);
}

// ---- calls ---------------------------------------------------------------------

Buffer g_cur[kMaxBuffers];
bool g_have_cur = false;
int g_outputs_fd = -1;
unsigned char* g_snapshot[kMaxBuffers];

const unsigned char* block_of(int set, int input) {
  return g_blocks + g_block_off[g_set_blocks[set * g_nin + input]];
}

void register_regions(const Buffer* bufs) {
  g_nregions = 0;
  for (int k = 0; k < g_nin + g_nout; ++k) {
    const Buffer& b = bufs[k];
    Region r;
    r.lo = reinterpret_cast<uintptr_t>(b.map ? b.map : b.data);
    r.hi = r.lo + (b.map ? b.map_len : b.bytes);
    r.data = reinterpret_cast<uintptr_t>(b.data);
    r.end = r.data + b.bytes;
    r.buffer = k;
    r.is_input = b.is_input ? 1 : 0;
    g_regions[k] = r;
  }
  g_nregions = g_nin + g_nout;
}

// Buffers for `set` in `layout`: fresh ones mapped while the old ones still
// exist (so the addresses differ), or the current ones refilled.
void prepare(int set, int layout, bool fresh) {
  int nbuf = g_nin + g_nout;
  if (fresh || !g_have_cur) {
    Buffer next[kMaxBuffers];
    for (int k = 0; k < nbuf; ++k) next[k] = make_buffer(g_size[k] ? g_size[k] : 1, layout, k < g_nin);
    if (g_have_cur)
      for (int k = 0; k < nbuf; ++k) free_buffer(g_cur[k]);
    for (int k = 0; k < nbuf; ++k) g_cur[k] = next[k];
    g_have_cur = true;
  }
  for (int k = 0; k < g_nin; ++k) {
    set_input_writable(g_cur[k], true);
    memcpy(g_cur[k].data, block_of(set, k), g_size[k]);
    set_input_writable(g_cur[k], false);
  }
  for (int k = g_nin; k < nbuf; ++k) memset(g_cur[k].data, 0xFF, g_cur[k].bytes);
  register_regions(g_cur);
}

void call_kernel() {
  void* ptrs[kMaxBuffers];
  for (int k = 0; k < g_nin + g_nout; ++k) ptrs[k] = g_cur[k].data;
  axon_gate_call(ptrs);
}

int count_threads() {
  static Task t[1024];
  return sample_tasks(t, 1024);
}

void run_call(int c) {
  const Call& k = g_calls[c];
  prepare(k.set, k.layout, k.fresh != 0);
  Line begin;
  begin.s("begin call=").i(c).emit();
  g_call = c;
  call_kernel();
  for (int j = 0; j < g_nout; ++j) memcpy(g_snapshot[j], g_cur[g_nin + j].data, g_size[g_nin + j]);
  int threads = count_threads();
  int running = running_threads();
  int changed = 0;
  for (int j = 0; j < g_nout; ++j) changed |= memcmp(g_snapshot[j], g_cur[g_nin + j].data, g_size[g_nin + j]) != 0;
  int input_changed = -1;
  for (int i = 0; i < g_nin && input_changed < 0; ++i)
    if (memcmp(g_cur[i].data, block_of(k.set, i), g_size[i]) != 0) input_changed = i;
  for (int j = 0; j < g_nout; ++j) {
    size_t off = 0, n = g_size[g_nin + j];
    while (off < n) {
      ssize_t w = write(g_outputs_fd, g_snapshot[j] + off, n - off);
      if (w <= 0) fail("cannot write outputs.bin");
      off += static_cast<size_t>(w);
    }
  }
  Line end;
  end.s("end call=").i(c).s(" threads=").i(threads).s(" running=").i(running);
  end.s(" changed_after_return=").i(changed).s(" input_changed=").i(input_changed).emit();
}

double now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int compare_doubles(const void* a, const void* b) {
  double x = *static_cast<const double*>(a), y = *static_cast<const double*>(b);
  return x < y ? -1 : x > y;
}

void time_kernel() {
  prepare(g_time_set, kAfter, true);
  g_call = -2;
  Line begin;
  begin.s("begin call=-2").emit();
  for (int w = 0; w < g_warmup; ++w) call_kernel();
  enum { kMaxReps = 100000 };
  double* ms = static_cast<double*>(malloc(sizeof(double) * kMaxReps));
  if (!ms) fail("malloc failed for timings");
  int reps = 0;
  double total = 0, last_progress = now_ms();
  while (reps < kMaxReps && (reps < g_min_reps || total < g_min_ms) && (reps == 0 || total < g_max_ms)) {
    double t0 = now_ms();
    call_kernel();
    double t1 = now_ms();
    ms[reps++] = t1 - t0;
    total += t1 - t0;
    if (t1 - last_progress > 1000) {
      Line p;
      p.s("progress reps=").i(reps).emit();
      last_progress = t1;
    }
  }
  qsort(ms, static_cast<size_t>(reps), sizeof(double), compare_doubles);
  double median = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
  char text[256];
  snprintf(text, sizeof text, "time median_ms=%.9g min_ms=%.9g max_ms=%.9g reps=%d\n", median, ms[0],
           ms[reps - 1], reps);
  if (write(g_events, text, strlen(text)) < 0) fail("cannot write events.log");
  free(ms);
}

}  // namespace

// driver PLAN BLOCKS EVENTS OUTPUTS [sanitized]
int main(int argc, char** argv) {
  if (argc < 5) return 91;
  g_events = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
  g_outputs_fd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (g_events < 0 || g_outputs_fd < 0) return 92;
  bool sanitized = argc > 5 && !strcmp(argv[5], "sanitized");
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0) g_page = static_cast<size_t>(page);
  install_handlers(sanitized);
  read_plan(argv[1]);

  int fd = open(argv[2], O_RDONLY);
  if (fd < 0) fail("cannot open blocks.bin");
  struct stat st;
  if (fstat(fd, &st) != 0) fail("cannot stat blocks.bin");
  size_t need = 0;
  for (int b = 0; b < g_nblocks; ++b)
    if (g_block_off[b] + g_block_len[b] > need) need = g_block_off[b] + g_block_len[b];
  if (static_cast<size_t>(st.st_size) < need) fail("blocks.bin is short");
  if (st.st_size > 0) {
    void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) fail("cannot map blocks.bin");
    g_blocks = static_cast<const unsigned char*>(m);
  }
  close(fd);
  for (int j = 0; j < g_nout; ++j) {
    g_snapshot[j] = static_cast<unsigned char*>(malloc(g_size[g_nin + j] ? g_size[g_nin + j] : 1));
    if (!g_snapshot[j]) fail("malloc failed for a snapshot");
  }

  Line ready;
  ready.s("ready threads=").i(count_threads()).emit();
  for (int c = 0; c < g_ncalls; ++c) {
    if (sanitized) g_calls[c].layout = kHeap;
    run_call(c);
  }
  if (g_time_set >= 0 && !sanitized) time_kernel();
  g_call = -1;
  g_nregions = 0;
  if (g_have_cur)
    for (int k = 0; k < g_nin + g_nout; ++k) free_buffer(g_cur[k]);
  for (int j = 0; j < g_nout; ++j) free(g_snapshot[j]);
  free(g_block_off);
  free(g_block_len);
  free(g_set_blocks);
  free(g_calls);
  Line done;
  done.s("done").emit();
  return 0;
}
)AXON_DRIVER";

}  // namespace

std::string emit_driver_source(const ir::Graph& g, const codegen::KernelAbi& abi) {
  std::ostringstream s;
  s << "// driver.cpp: generated by axon's gate for " << abi.entry << ". Trusted code:\n"
    << "// it calls the candidate kernel and reports what it saw (src/gate/protocol.h).\n"
    << "#include \"kernel.h\"\n\n"
    << "static void axon_gate_call(void* const* b) {\n  " << abi.entry << "(";
  size_t k = 0;
  for (const ir::ParamInfo& p : g.params)
    s << (k ? ", " : "") << "static_cast<const " << ir::dtype_c_type(p.type.dtype) << "*>(b[" << k << "])", ++k;
  for (ir::NodeId o : g.outputs)
    s << (k ? ", " : "") << "static_cast<" << ir::dtype_c_type(g[o].type.dtype) << "*>(b[" << k << "])", ++k;
  s << ");\n}\n" << kDriverBody;
  return s.str();
}

}  // namespace axon::gate
