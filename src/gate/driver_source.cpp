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
#include <pthread.h>
#include <sched.h>
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

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace {

// kMaxWatched: battery calls whose buffers are kept while they are watched
// together (the battery's watch, below).
enum { kMaxBuffers = 64, kMaxSlots = 8, kMaxWatched = 8, kMaxRegions = kMaxBuffers * (kMaxSlots + kMaxWatched + 1),
       kAfter = 0, kBefore = 1, kHeap = 2 };
enum { kPoison = 0, kZeros = 1, kUntouched = 2, kData = 3 };

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

Region g_regions[kMaxRegions];
volatile int g_nregions = 0;
size_t g_page = 4096;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux's value, for C libraries older than it
#endif

// `huge`: the battery's fresh buffers, whose mapping, population and unmapping
// were a quarter of the battery's time, ask for transparent huge pages
// (madvise; the bytes and the layout are the same). The slots' buffers,
// which the timed calls use, keep the pages a user's allocation gets.
Buffer make_buffer(size_t bytes, int layout, bool is_input, bool huge) {
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
  // Populated at once: every page is written before the call (the inputs,
  // the fill), and mapping them in one go is cheaper than a fault per page.
  void* m = mmap(nullptr, b.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (huge ? 0 : MAP_POPULATE),
                 -1, 0);
  if (m == MAP_FAILED) fail("mmap failed for a buffer");
  if (huge) {
    madvise(m, b.map_len, MADV_HUGEPAGE);  // a hint: without it, the same bytes in small pages
    // Populated after the hint (MADV_POPULATE_WRITE: Linux 5.14); before
    // it, one write per page does the same.
    if (madvise(m, b.map_len, MADV_POPULATE_WRITE) != 0)
      for (size_t off = 0; off < b.map_len; off += g_page) static_cast<volatile unsigned char*>(m)[off] = 0;
  }
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
  int set, layout, fresh, fill;
};
struct Fill {
  int kind;
  size_t off[kMaxBuffers];  // kData: offset in the fill file, per output
};
struct SoakCall {
  int slot, fill, record, compare;
};

int g_nin = 0, g_nout = 0;
size_t g_size[kMaxBuffers];
size_t* g_block_off = nullptr;
size_t* g_block_len = nullptr;
int* g_set_blocks = nullptr;  // g_nsets * g_nin
int g_nsets = 0, g_nblocks = 0, g_ncalls = 0, g_nfills = 0;
Call* g_calls = nullptr;
Fill* g_fills = nullptr;
char g_fill_path[256] = "";
const unsigned char* g_fill_data = nullptr;
size_t g_fill_len = 0;
int g_nslots = 0, g_slot_set[kMaxSlots], g_slot_fill[kMaxSlots];
int g_conc_a = -1, g_conc_b = -1, g_min_rounds = 16, g_max_rounds = 4096;
double g_rounds_min_ms = 100, g_rounds_max_ms = 2000;
int g_min_overlaps = 64, g_min_overlaps_slow = 8;
double g_min_overlap_ms = 400;
SoakCall* g_soak = nullptr;
int g_nsoak = 0;
double g_soak_max_ms = 5000;
int g_timed = 0;  // the soak's calls are timed
char g_hold_path[4096] = "";  // the slots wait for this file to exist
int g_last_slot = -1, g_last_fill = 0;
const unsigned char* g_blocks = nullptr;

void make_digest_key(uint64_t seed);  // below, with the digests

bool valid_fill(int f) { return f >= 0 && f < g_nfills; }
bool valid_slot(int k) { return k >= 0 && k < g_nslots; }

void read_plan(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) fail("cannot open the plan");
  char word[32];
  int version = 0;
  bool have_key = false;
  if (fscanf(f, "%31s %d", word, &version) != 2 || strcmp(word, "axon-gate-plan") != 0 || version != 5)
    fail("not a version 5 plan");
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
    } else if (!strcmp(word, "fillfile")) {
      if (fscanf(f, "%255s", g_fill_path) != 1) fail("bad fillfile line");
    } else if (!strcmp(word, "fill")) {
      int k;
      char kind[16];
      Fill x;
      memset(&x, 0, sizeof x);
      if (fscanf(f, "%d %15s", &k, kind) != 2 || k != g_nfills) fail("bad fill line");
      x.kind = !strcmp(kind, "poison") ? kPoison : !strcmp(kind, "zeros") ? kZeros
             : !strcmp(kind, "untouched") ? kUntouched : !strcmp(kind, "data") ? kData : -1;
      if (x.kind < 0) fail("bad fill kind");
      if (x.kind == kData)
        for (int j = 0; j < g_nout; ++j) {
          unsigned long long off;
          if (fscanf(f, "%llu", &off) != 1) fail("bad fill line");
          x.off[j] = static_cast<size_t>(off);
        }
      g_fills = static_cast<Fill*>(realloc(g_fills, sizeof(Fill) * (g_nfills + 1)));
      g_fills[g_nfills++] = x;
    } else if (!strcmp(word, "call")) {
      int c;
      Call k;
      char layout[16];
      if (fscanf(f, "%d %d %15s %d %d", &c, &k.set, layout, &k.fresh, &k.fill) != 5 || c != g_ncalls ||
          k.set < 0 || k.set >= g_nsets || !valid_fill(k.fill))
        fail("bad call line");
      k.layout = !strcmp(layout, "after") ? kAfter : !strcmp(layout, "before") ? kBefore : kHeap;
      if (c == 0) k.fresh = 1;
      if (g_fills[k.fill].kind == kUntouched) k.fresh = 1;
      g_calls = static_cast<Call*>(realloc(g_calls, sizeof(Call) * (g_ncalls + 1)));
      g_calls[g_ncalls++] = k;
    } else if (!strcmp(word, "slot")) {
      int k, set, fill;
      if (fscanf(f, "%d %d %d", &k, &set, &fill) != 3 || k != g_nslots || k >= kMaxSlots || set < 0 ||
          set >= g_nsets || !valid_fill(fill) || g_fills[fill].kind == kUntouched)
        fail("bad slot line");
      g_slot_set[k] = set;
      g_slot_fill[k] = fill;
      ++g_nslots;
    } else if (!strcmp(word, "concurrent")) {
      if (fscanf(f, "%d %d %d %d %lf %lf %d %d %lf", &g_conc_a, &g_conc_b, &g_min_rounds, &g_max_rounds,
                 &g_rounds_min_ms, &g_rounds_max_ms, &g_min_overlaps, &g_min_overlaps_slow, &g_min_overlap_ms) != 9 ||
          !valid_slot(g_conc_a) || !valid_slot(g_conc_b) || g_conc_a == g_conc_b || g_min_rounds < 1 ||
          g_max_rounds < g_min_rounds)
        fail("bad concurrent line");
    } else if (!strcmp(word, "soak")) {
      if (fscanf(f, "%d %lf", &g_nsoak, &g_soak_max_ms) != 2 || g_nsoak < 0) fail("bad soak line");
      g_soak = static_cast<SoakCall*>(malloc(sizeof(SoakCall) * (g_nsoak ? g_nsoak : 1)));
      if (!g_soak) fail("malloc failed for the soak");
      for (int i = 0; i < g_nsoak; ++i) {
        char s1[4];
        SoakCall& c = g_soak[i];
        if (fscanf(f, "%3s %d %d %d %d", s1, &c.slot, &c.fill, &c.record, &c.compare) != 5 || strcmp(s1, "s") != 0 ||
            !valid_slot(c.slot) || !valid_fill(c.fill) || (c.record && !c.compare))
          fail("bad soak call line");
      }
    } else if (!strcmp(word, "key")) {
      unsigned long long key;
      if (fscanf(f, "%llu", &key) != 1) fail("bad key line");
      make_digest_key(key);
      key = 0;
      have_key = true;
    } else if (!strcmp(word, "time")) {
      g_timed = 1;
    } else if (!strcmp(word, "hold")) {
      if (fscanf(f, "%4095s", g_hold_path) != 1) fail("bad hold line");
    } else if (!strcmp(word, "last")) {
      if (fscanf(f, "%d %d", &g_last_slot, &g_last_fill) != 2 || !valid_slot(g_last_slot) || !valid_fill(g_last_fill) ||
          g_fills[g_last_fill].kind == kUntouched)
        fail("bad last line");
    } else {
      fail("unknown plan record");
    }
  }
  fclose(f);
  if (g_timed && g_nsoak == 0) fail("timing needs the soak");
  if (g_nslots > 0 && !have_key) fail("the slots need a key");
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

double now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Sleeps until now_ms() reaches `t` (returns at once when it has).
void sleep_until_ms(double t) {
  for (double now = now_ms(); now < t; now = now_ms()) {
    const double left = t - now;
    struct timespec ts = {static_cast<time_t>(left / 1000), static_cast<long>((left - 1000 * static_cast<long>(left / 1000)) * 1e6)};
    nanosleep(&ts, nullptr);
  }
}

// Threads other than this one that used the CPU between the times `from`
// and `to` (now_ms). A parked OpenMP pool sleeps in the kernel and uses
// none. `only` (tids, -1 ends) limits the count to those. A thread that
// was runnable at both samples and got no CPU between them (a loaded
// machine starved it) leaves the window open: it is sampled again 30 ms
// later, up to four times, so that a thread that keeps working is not
// missed for lack of a core (an honest worker finishing its spin late
// goes to sleep once it runs, and is not busy).
int busy_threads(double from, double to, long* tids, int max_tids, const long* only) {
  enum { kMax = 1024 };
  static Task a[kMax], b[kMax];
  sleep_until_ms(from);
  int na = sample_tasks(a, kMax);
  sleep_until_ms(to);
  int nb = sample_tasks(b, kMax);
  long self = static_cast<long>(getpid());
  for (int extra = 0; extra < 4; ++extra) {
    bool starved = false;
    for (int j = 0; j < nb && !starved; ++j) {
      if (b[j].tid == self || b[j].state != 'R') continue;
      bool listed = only == nullptr;
      for (const long* t = only; t && *t >= 0 && !listed; ++t) listed = *t == b[j].tid;
      for (int i = 0; i < na && listed && !starved; ++i)
        starved = a[i].tid == b[j].tid && a[i].state == 'R' && b[j].ticks == a[i].ticks;
    }
    if (!starved) break;
    sleep_ms(30);
    nb = sample_tasks(b, kMax);
  }
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

// Threads still working well after a group of calls returned (the battery's
// watch, below: `first` and `last` are the first and last calls' returns):
// busy 20-50 ms after the last return, and the same threads busy again
// from 70 ms after the first return to 100 ms after the last (which holds
// every call's own 70-100 ms). The second look is what keeps a loaded
// machine from failing an honest kernel: an OpenMP worker that was runnable
// but starved of a core finishes its short spin late, inside the first
// window, and is asleep by the second; a thread that goes on working is
// busy in both.
int running_threads(double first, double last) {
  enum { kMaxTids = 256 };
  static long busy[kMaxTids + 1], second[kMaxTids + 1];
  int n = busy_threads(last + 20, last + 50, busy, kMaxTids, nullptr);
  if (n == 0) return 0;
  if (n > kMaxTids) busy[kMaxTids] = -1;
  const double from = first + 70 > last + 50 ? first + 70 : last + 50;
  return busy_threads(from, last + 100, second, kMaxTids, busy);
}

// ---- calls ---------------------------------------------------------------------

Buffer g_cur[kMaxBuffers];
bool g_have_cur = false;
Buffer g_slot[kMaxSlots][kMaxBuffers];
unsigned char* g_base[kMaxSlots][kMaxBuffers];  // each slot's baseline outputs
int g_base_record[kMaxSlots];                  // the baseline's record number
int g_drifted[kMaxSlots];                      // drifts recorded per slot
int g_outputs_fd = -1;
long long g_seq = 0;  // kernel calls made so far (atomic)
int g_next_record = 0;
pthread_mutex_t g_record_mu = PTHREAD_MUTEX_INITIALIZER;

enum { kPhaseBattery, kPhaseBaseline, kPhaseConcurrent, kPhaseAfterRounds, kPhaseSoak, kPhaseRecheck, kPhaseLast };
const char* const kPhaseNames[] = {"battery", "baseline", "concurrent", "after_rounds", "soak", "recheck", "last"};
const char* const kLayoutNames[] = {"after", "before", "heap"};

const unsigned char* block_of(int set, int input) {
  return g_blocks + g_block_off[g_set_blocks[set * g_nin + input]];
}

void add_regions(const Buffer* bufs, int* n) {
  for (int k = 0; k < g_nin + g_nout && *n < kMaxRegions; ++k) {
    const Buffer& b = bufs[k];
    if (!b.data) continue;
    Region r;
    r.lo = reinterpret_cast<uintptr_t>(b.map ? b.map : b.data);
    r.hi = r.lo + (b.map ? b.map_len : b.bytes);
    r.data = reinterpret_cast<uintptr_t>(b.data);
    r.end = r.data + b.bytes;
    r.buffer = k;
    r.is_input = b.is_input ? 1 : 0;
    g_regions[(*n)++] = r;
  }
}

struct Watched;
void add_watched_regions(int* n);

// Every live buffer, for the fault handler.
void register_regions() {
  g_nregions = 0;
  int n = 0;
  if (g_have_cur) add_regions(g_cur, &n);
  add_watched_regions(&n);
  for (int k = 0; k < g_nslots; ++k) add_regions(g_slot[k], &n);
  g_nregions = n;
}

// Whether fills bypass the caches (non-temporal stores): when a call's
// buffers are larger than the last-level cache, the kernel streams through
// more than the cache holds and finds little of a cached fill there anyway,
// while a fill that goes through the cache first reads every line it
// writes. Smaller outputs are filled through the cache, where the kernel
// would have found them.
bool g_stream_fills = false;

// n bytes of src at dst, or of `value` when src is null.
void fill_bytes(unsigned char* dst, const unsigned char* src, int value, size_t n) {
#if defined(__AVX2__)
  if (g_stream_fills && n >= 1024) {
    size_t head = (32 - reinterpret_cast<uintptr_t>(dst) % 32) % 32;
    if (src) memcpy(dst, src, head);
    else memset(dst, value, head);
    size_t i = head;
    if (src) {
      for (; i + 32 <= n; i += 32)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    } else {
      const __m256i v = _mm256_set1_epi8(static_cast<char>(value));
      for (; i + 32 <= n; i += 32) _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), v);
    }
    if (src) memcpy(dst + i, src + i, n - i);
    else memset(dst + i, value, n - i);
    _mm_sfence();  // visible before the call, whichever thread filled
    return;
  }
#endif
  if (src) memcpy(dst, src, n);
  else memset(dst, value, n);
}

// The size of the cache shared by this CPU's cores (sysfs; sysconf's
// figure can be a whole package's), 32 MiB when neither says.
size_t last_level_cache_bytes() {
  size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    char path[96], text[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    int fd = open(path, O_RDONLY);
    if (fd < 0) break;
    ssize_t len = read(fd, text, sizeof text - 1);
    close(fd);
    if (len <= 0) continue;
    text[len] = 0;
    char* end = nullptr;
    unsigned long long v = strtoull(text, &end, 10);
    if (end && (*end == 'K' || *end == 'k')) v <<= 10;
    else if (end && (*end == 'M' || *end == 'm')) v <<= 20;
    if (v > best) best = static_cast<size_t>(v);
  }
  if (best == 0) {
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    best = v > 0 ? static_cast<size_t>(v) : size_t{32} << 20;
  }
  return best;
}

// Bytes [lo, hi) of output j of `bufs` as `fill` has them (the soak's
// chunks, or a whole output).
void fill_range(Buffer* bufs, int fill, int j, size_t lo, size_t hi) {
  const Fill& f = g_fills[fill];
  Buffer& b = bufs[g_nin + j];
  if (f.kind == kPoison) fill_bytes(b.data + lo, nullptr, 0xFF, hi - lo);
  else if (f.kind == kZeros) fill_bytes(b.data + lo, nullptr, 0, hi - lo);
  else if (f.kind == kData) fill_bytes(b.data + lo, g_fill_data + f.off[j] + lo, 0, hi - lo);
}

// Every output of `bufs`: a constant over the whole mapping (a zero-size
// output's byte too), data over the output's size.
void apply_fill(Buffer* bufs, int fill) {
  for (int j = 0; j < g_nout; ++j)
    fill_range(bufs, fill, j, 0, g_fills[fill].kind == kData ? g_size[g_nin + j] : bufs[g_nin + j].bytes);
}

void load_inputs(Buffer* bufs, int set) {
  for (int k = 0; k < g_nin; ++k) {
    set_input_writable(bufs[k], true);
    memcpy(bufs[k].data, block_of(set, k), g_size[k]);
    set_input_writable(bufs[k], false);
  }
}

int g_nwatched = 0;  // battery calls being watched; the last one's buffers are g_cur

// Buffers for `set` in `layout`: fresh ones mapped while the old ones still
// exist (so the addresses differ), or the current ones refilled. The old
// ones are freed unless a watched call holds them.
void prepare(int set, int layout, bool fresh, int fill) {
  int nbuf = g_nin + g_nout;
  if (fresh || !g_have_cur) {
    Buffer next[kMaxBuffers];
    for (int k = 0; k < nbuf; ++k) next[k] = make_buffer(g_size[k] ? g_size[k] : 1, layout, k < g_nin, true);
    if (g_have_cur && g_nwatched == 0)
      for (int k = 0; k < nbuf; ++k) free_buffer(g_cur[k]);
    for (int k = 0; k < nbuf; ++k) g_cur[k] = next[k];
    g_have_cur = true;
  }
  load_inputs(g_cur, set);
  apply_fill(g_cur, fill);
  register_regions();
}

// Calls the kernel on `bufs`; returns the call's sequence number.
long long call_on(const Buffer* bufs) {
  void* ptrs[kMaxBuffers];
  for (int k = 0; k < g_nin + g_nout; ++k) ptrs[k] = bufs[k].data;
  // Relaxed: numbering the calls must not order the concurrent rounds'
  // threads (see g_in_call).
  long long seq = __atomic_fetch_add(&g_seq, 1, __ATOMIC_RELAXED);
  axon_gate_call(ptrs);
  return seq;
}

int count_threads() {
  static Task t[1024];
  return sample_tasks(t, 1024);
}

void write_all(int fd, const unsigned char* p, size_t n) {
  size_t off = 0;
  while (off < n) {
    ssize_t w = write(fd, p + off, n - off);
    if (w <= 0) fail("cannot write outputs.bin");
    off += static_cast<size_t>(w);
  }
}

struct RecordInfo {
  int call = -1;  // -1: the next record number
  long long seq = 0;
  int set = 0, layout = kAfter, fill = 0, slot = -1, phase = kPhaseBattery, thread = 0;
  int threads = 0, running = 0, changed = 0, input_changed = -1;
  int same = -1;  // >= 0: the outputs are bit for bit those of this earlier record, and are not written again
};

// Appends one call's outputs to outputs.bin (unless they are an earlier
// record's, r.same) and its end line to events.log; returns its number.
int emit_record(RecordInfo r, unsigned char* const* outs) {
  pthread_mutex_lock(&g_record_mu);
  if (r.call < 0) r.call = g_next_record++;
  if (r.same < 0)
    for (int j = 0; j < g_nout; ++j) write_all(g_outputs_fd, outs[j], g_size[g_nin + j]);
  Line end;
  end.s("end call=").i(r.call).s(" seq=").i(r.seq).s(" set=").i(r.set).s(" layout=").s(kLayoutNames[r.layout]);
  end.s(" fill=").i(r.fill).s(" slot=").i(r.slot).s(" phase=").s(kPhaseNames[r.phase]).s(" thread=").i(r.thread);
  end.s(" threads=").i(r.threads).s(" running=").i(r.running);
  end.s(" changed_after_return=").i(r.changed).s(" input_changed=").i(r.input_changed);
  if (r.same >= 0) end.s(" same=").i(r.same);
  end.emit();
  pthread_mutex_unlock(&g_record_mu);
  return r.call;
}

// ---- the battery's watch ----------------------------------------------------------
//
// After a call returns, its outputs may not change and no thread of the
// kernel may go on working. Instead of waiting 50 ms after every call, the
// battery watches a group of calls at once: each call's outputs are copied
// the moment it returns and its buffers are kept; the next call runs at
// once on fresh buffers; when the group ends, the threads are sampled 20-50
// ms after its last return (and, when one was busy, from 70 ms after its
// first return to 100 ms after its last), and every call's outputs and
// inputs are compared with what they were, at least 50 ms after its own
// return. A group ends before a call that reuses the previous call's
// buffers (which must have been watched first), when its calls span more
// than kMaxSpanMs from the first return (so no call's first look at the
// threads comes more than that after today's 20 ms), and when what it
// keeps would pass kMaxWatchedBytes or kMaxWatched calls.
const double kMaxSpanMs = 40;
const size_t kMaxWatchedBytes = size_t{256} << 20;

struct Watched {
  int call = -1, snap = -1, threads = 0, same = -1;
  long long seq = 0;
  double returned = 0;
  Buffer bufs[kMaxBuffers];
};
Watched g_watched[kMaxWatched];
size_t g_watched_bytes = 0;
double g_call_span_ms = 0;                      // the last battery call's buffers, call and copy
unsigned char* g_snaps[kMaxWatched + 1][kMaxBuffers];  // output copies, allocated when first used
bool g_snap_used[kMaxWatched + 1];
int g_prev_snap = -1;    // the previous battery call's outputs (an index into g_snaps)
int g_prev_record = -1;  // its record number (-1: none)

void add_watched_regions(int* n) {
  for (int i = 0; i < g_nwatched; ++i) add_regions(g_watched[i].bufs, n);
}

size_t call_bytes() {
  size_t n = 0;
  for (int b = 0; b < g_nin + g_nout; ++b) n += g_size[b] ? g_size[b] : 1;
  for (int j = 0; j < g_nout; ++j) n += g_size[g_nin + j];
  return n;
}

int take_snap() {
  for (int i = 0; i <= kMaxWatched; ++i) {
    if (g_snap_used[i]) continue;
    if (!g_snaps[i][0])
      for (int j = 0; j < g_nout; ++j) {
        g_snaps[i][j] = static_cast<unsigned char*>(malloc(g_size[g_nin + j] ? g_size[g_nin + j] : 1));
        if (!g_snaps[i][j]) fail("malloc failed for a snapshot");
      }
    g_snap_used[i] = true;
    return i;
  }
  fail("no snapshot left");
}

// Ends the watch of the calls made since the last one: samples the
// threads, compares each call's outputs with their copy and its inputs
// with what was passed, and records the calls in order. The last call's
// buffers stay (g_cur), for a call that reuses them.
void end_watch() {
  if (g_nwatched == 0) return;
  const double first = g_watched[0].returned, last = g_watched[g_nwatched - 1].returned;
  const int running = running_threads(first, last);
  sleep_until_ms(last + 50);
  for (int i = 0; i < g_nwatched; ++i) {
    const Watched& w = g_watched[i];
    const Call& k = g_calls[w.call];
    RecordInfo r;
    r.call = w.call;
    r.seq = w.seq;
    r.set = k.set;
    r.layout = k.layout;
    r.fill = k.fill;
    r.threads = w.threads;
    r.running = running;
    r.same = w.same;
    for (int j = 0; j < g_nout; ++j)
      r.changed |= memcmp(g_snaps[w.snap][j], w.bufs[g_nin + j].data, g_size[g_nin + j]) != 0;
    for (int b = 0; b < g_nin && r.input_changed < 0; ++b)
      if (memcmp(w.bufs[b].data, block_of(k.set, b), g_size[b]) != 0) r.input_changed = b;
    emit_record(r, g_snaps[w.snap]);
  }
  for (int i = 0; i + 1 < g_nwatched; ++i)
    for (int b = 0; b < g_nin + g_nout; ++b) free_buffer(g_watched[i].bufs[b]);
  for (int i = 0; i <= kMaxWatched; ++i) g_snap_used[i] = i == g_prev_snap;
  g_nwatched = 0;
  g_watched_bytes = 0;
  register_regions();
}

void run_call(int c) {
  const Call& k = g_calls[c];
  if (g_nwatched > 0 && (!k.fresh || g_nwatched == kMaxWatched || g_watched_bytes + call_bytes() > kMaxWatchedBytes ||
                         now_ms() - g_watched[0].returned + g_call_span_ms > kMaxSpanMs))
    end_watch();
  const double start = now_ms();
  prepare(k.set, k.layout, k.fresh != 0, k.fill);
  Line begin;
  begin.s("begin call=").i(c).emit();
  g_call = c;
  Watched& w = g_watched[g_nwatched];
  w.call = c;
  w.seq = call_on(g_cur);
  w.returned = now_ms();
  w.snap = take_snap();
  for (int j = 0; j < g_nout; ++j) memcpy(g_snaps[w.snap][j], g_cur[g_nin + j].data, g_size[g_nin + j]);
  w.threads = count_threads();
  for (int b = 0; b < g_nin + g_nout; ++b) w.bufs[b] = g_cur[b];
  // Outputs bit for bit the previous battery call's (consecutive calls on
  // one set, for a deterministic kernel) are recorded as that call's.
  bool same = g_prev_record >= 0;
  for (int j = 0; j < g_nout && same; ++j)
    same = memcmp(g_snaps[w.snap][j], g_snaps[g_prev_snap][j], g_size[g_nin + j]) == 0;
  w.same = same ? g_prev_record : -1;
  g_prev_record = c;
  if (!same) g_prev_snap = w.snap;
  ++g_nwatched;
  g_watched_bytes += call_bytes();
  g_call_span_ms = now_ms() - start;
  register_regions();
}

// ---- keyed digests of outputs ------------------------------------------------
//
// The soak and the concurrent rounds compare every call's outputs with its
// slot's baseline through digests, one per chunk of 1 MiB of the outputs,
// so that each output byte is read once and the baseline's digests are
// computed once. A digest is NH (UMAC's universal hash: the sum of products
// of pairs of 32-bit words, each plus a key word, mod 2^64; twice, with
// keys kNhShift words apart) over blocks of 4 KiB, then a polynomial
// modulo 2^61 - 1 at a key point over the blocks' sums. For two chunks that
// differ, the chance over the key that their digests agree is below
// 2^-50. The key comes from the run's seed (the plan's `key`) and is kept
// on the heap, where no symbol names it; a kernel that cannot find it cannot
// aim a wrong output at a digest. Recorded calls are still compared byte
// for byte.
enum { kChunk = 1 << 20, kNhBytes = 4096, kNhWords = kNhBytes / 4, kNhShift = 8 };
const uint64_t kP61 = (uint64_t{1} << 61) - 1;

struct DigestKey {
  uint32_t nh[kNhWords + kNhShift];
  uint64_t point;  // in [2, 2^61 - 2]
};
const DigestKey* g_digest_key = nullptr;

uint64_t splitmix64(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void make_digest_key(uint64_t seed) {
  DigestKey* k = static_cast<DigestKey*>(malloc(sizeof(DigestKey)));
  if (!k) fail("malloc failed for the digest key");
  for (int i = 0; i < kNhWords + kNhShift; ++i) k->nh[i] = static_cast<uint32_t>(splitmix64(&seed));
  do k->point = splitmix64(&seed) & kP61;
  while (k->point < 2 || k->point == kP61);
  g_digest_key = k;
}

// a * b mod 2^61 - 1, for a < 2^62 and b < 2^61.
uint64_t mulmod61(uint64_t a, uint64_t b) {
  const unsigned __int128 z = static_cast<unsigned __int128>(a) * b;
  uint64_t s = (static_cast<uint64_t>(z) & kP61) + static_cast<uint64_t>(z >> 61);
  s = (s & kP61) + (s >> 61);
  return s >= kP61 ? s - kP61 : s;
}

// NH of one block of kNhBytes with the key (h0) and the key kNhShift words
// on (h1).
void nh_block(const unsigned char* p, const uint32_t* k, uint64_t* h0, uint64_t* h1) {
#if defined(__AVX2__)
  __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
  for (int i = 0; i < kNhWords; i += 8) {
    const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4 * i));
    const __m256i s0 = _mm256_add_epi32(m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k + i)));
    const __m256i s1 = _mm256_add_epi32(m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k + i + kNhShift)));
    // Each 64-bit lane: its low word plus key times its high word plus key.
    a0 = _mm256_add_epi64(a0, _mm256_mul_epu32(s0, _mm256_srli_epi64(s0, 32)));
    a1 = _mm256_add_epi64(a1, _mm256_mul_epu32(s1, _mm256_srli_epi64(s1, 32)));
  }
  uint64_t t0[4], t1[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(t0), a0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(t1), a1);
  *h0 = t0[0] + t0[1] + t0[2] + t0[3];
  *h1 = t1[0] + t1[1] + t1[2] + t1[3];
#else
  uint64_t x0 = 0, x1 = 0;
  for (int i = 0; i < kNhWords; i += 2) {
    uint32_t m0, m1;
    memcpy(&m0, p + 4 * i, 4);
    memcpy(&m1, p + 4 * i + 4, 4);
    x0 += static_cast<uint64_t>(static_cast<uint32_t>(m0 + k[i])) * static_cast<uint32_t>(m1 + k[i + 1]);
    x1 += static_cast<uint64_t>(static_cast<uint32_t>(m0 + k[i + kNhShift])) *
          static_cast<uint32_t>(m1 + k[i + 1 + kNhShift]);
  }
  *h0 = x0;
  *h1 = x1;
#endif
}

// The digest of the n bytes at p (n at most kChunk; the last block is
// padded with zeros: chunks compared are of equal length).
uint64_t digest(const unsigned char* p, size_t n) {
  const DigestKey& key = *g_digest_key;
  uint64_t h = 0;
  auto absorb = [&](uint64_t v) {
    h = mulmod61(h, key.point) + (v & 0xFFFFFFFFu);
    h = mulmod61(h, key.point) + (v >> 32);
  };
  uint64_t h0, h1;
  size_t off = 0;
  for (; off + kNhBytes <= n; off += kNhBytes) {
    nh_block(p + off, key.nh, &h0, &h1);
    absorb(h0);
    absorb(h1);
  }
  if (off < n) {
    unsigned char last[kNhBytes];
    memset(last, 0, sizeof last);
    memcpy(last, p + off, n - off);
    nh_block(last, key.nh, &h0, &h1);
    absorb(h0);
    absorb(h1);
  }
  return h;
}

long long output_chunks() {
  long long n = 0;
  for (int j = 0; j < g_nout; ++j) n += static_cast<long long>((g_size[g_nin + j] + kChunk - 1) / kChunk);
  return n;
}

// Output j and the byte range of chunk c of the outputs, back to back.
void chunk_range(long long c, int* out, size_t* lo, size_t* hi) {
  for (int j = 0; j < g_nout; ++j) {
    size_t n = g_size[g_nin + j];
    long long chunks = static_cast<long long>((n + kChunk - 1) / kChunk);
    if (c < chunks) {
      *out = j;
      *lo = static_cast<size_t>(c) * kChunk;
      *hi = *lo + kChunk < n ? *lo + kChunk : n;
      return;
    }
    c -= chunks;
  }
  *out = -1;
  *lo = *hi = 0;
}

// ---- slots: buffers kept across the later phases ----------------------------

double g_call_ms = 0;  // a warm call's time

unsigned char* const* slot_outputs(int k) {
  static unsigned char* outs[kMaxSlots][kMaxBuffers];
  for (int j = 0; j < g_nout; ++j) outs[k][j] = g_slot[k][g_nin + j].data;
  return outs[k];
}

bool matches_baseline(int k) {
  for (int j = 0; j < g_nout; ++j)
    if (memcmp(g_slot[k][g_nin + j].data, g_base[k][j], g_size[g_nin + j]) != 0) return false;
  return true;
}

uint64_t* g_base_digest[kMaxSlots];  // each slot's baseline, a digest per chunk

uint64_t chunk_digest(int k, long long c) {
  int j;
  size_t lo, hi;
  chunk_range(c, &j, &lo, &hi);
  return digest(g_slot[k][g_nin + j].data + lo, hi - lo);
}

// Whether slot k's outputs differ from its baseline: byte for byte when
// they fit in one chunk (a small baseline stays in cache, and reading it
// costs little), else by their digests, where reading the baseline as
// well would double what the comparison reads.
bool differs_from_baseline(int k) {
  const long long chunks = output_chunks();
  if (chunks < 2) return !matches_baseline(k);
  for (long long c = 0; c < chunks; ++c)
    if (chunk_digest(k, c) != g_base_digest[k][c]) return true;
  return false;
}

// One call on slot k with `fill`; returns the sequence number it had.
long long slot_call(int k, int fill) {
  apply_fill(g_slot[k], fill);
  return call_on(g_slot[k]);
}

// Records the call just made on slot k. Outputs that equal the baseline
// bit for bit (`matches`: 1 known to, 0 known not to, -1 compare them now)
// are recorded as the baseline's record instead of being written again.
void record_slot(int k, int fill, long long seq, int phase, int thread = 0, int matches = -1) {
  RecordInfo r;
  r.seq = seq;
  r.set = g_slot_set[k];
  r.fill = fill;
  r.slot = k;
  r.phase = phase;
  r.thread = thread;
  if (phase != kPhaseBaseline && (matches > 0 || (matches < 0 && matches_baseline(k)))) r.same = g_base_record[k];
  int c = emit_record(r, slot_outputs(k));
  if (phase == kPhaseBaseline) g_base_record[k] = c;
}

// ---- the soak's fills and comparisons, on both cores ------------------------

// The work around a soak call (filling its outputs before it, comparing
// them with the slot's baseline after it) is cut into chunks of 1 MiB that
// this thread and a helper take in turn. The kernel is not running then,
// and the helper sleeps on a condition variable while it runs, so a timed
// call has the machine as before. The caller takes chunks from the start
// without waiting for the helper, so a helper that gets no core only
// means that the caller does every chunk itself.
enum { kHelpFill = 1, kHelpCompare = 2 };
struct HelpTask {
  int op, slot, fill;
  long long gen;  // which task the chunks below belong to
};
pthread_mutex_t g_help_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_help_cv = PTHREAD_COND_INITIALIZER;
HelpTask g_help_task;   // under g_help_mu
long long g_help_gen = 0;
int g_help_quit = 0;
unsigned long long g_help_ticket = 0;  // gen << 24 | the next chunk (atomic)
long long g_help_done = 0;             // chunks of the current task finished (atomic)
int g_help_differs = 0;                // a compared chunk differs (atomic)
long long g_help_chunks = 0;           // chunks of the current task
bool g_helper_running = false;
pthread_t g_helper;


// Takes and does chunks of task `gen` until none is left.
void do_chunks(const HelpTask& t) {
  for (;;) {
    unsigned long long ticket = __atomic_load_n(&g_help_ticket, __ATOMIC_ACQUIRE);
    long long c = static_cast<long long>(ticket & 0xFFFFFF);
    if (static_cast<long long>(ticket >> 24) != t.gen || c >= g_help_chunks) return;
    if (!__atomic_compare_exchange_n(&g_help_ticket, &ticket, ticket + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      continue;
    int j;
    size_t lo, hi;
    chunk_range(c, &j, &lo, &hi);
    if (t.op == kHelpFill) {
      fill_range(g_slot[t.slot], t.fill, j, lo, hi);
    } else if (!__atomic_load_n(&g_help_differs, __ATOMIC_RELAXED) &&
               digest(g_slot[t.slot][g_nin + j].data + lo, hi - lo) != g_base_digest[t.slot][c]) {
      __atomic_store_n(&g_help_differs, 1, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&g_help_done, 1, __ATOMIC_RELEASE);
  }
}

void* helper_main(void*) {
  long long seen = 0;
  for (;;) {
    pthread_mutex_lock(&g_help_mu);
    while (g_help_gen == seen && !g_help_quit) pthread_cond_wait(&g_help_cv, &g_help_mu);
    if (g_help_quit) {
      pthread_mutex_unlock(&g_help_mu);
      return nullptr;
    }
    HelpTask t = g_help_task;
    seen = g_help_gen;
    pthread_mutex_unlock(&g_help_mu);
    do_chunks(t);
  }
}

// One task on slot k, split with the helper when there is one and the
// outputs span more than one chunk; returns whether the outputs differ
// from the baseline (kHelpCompare; by their digests when split).
bool split_task(int op, int k, int fill) {
  const long long chunks = output_chunks();
  if (!g_helper_running || chunks < 2) {
    if (op == kHelpFill) {
      apply_fill(g_slot[k], fill);
      return false;
    }
    return differs_from_baseline(k);
  }
  HelpTask t;
  pthread_mutex_lock(&g_help_mu);
  t.op = op;
  t.slot = k;
  t.fill = fill;
  t.gen = ++g_help_gen;
  g_help_task = t;
  g_help_chunks = chunks;
  __atomic_store_n(&g_help_done, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&g_help_differs, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&g_help_ticket, static_cast<unsigned long long>(t.gen) << 24, __ATOMIC_RELEASE);
  pthread_cond_signal(&g_help_cv);
  pthread_mutex_unlock(&g_help_mu);
  do_chunks(t);
  // The helper finishes the chunk it holds, if any.
  for (long spins = 0; __atomic_load_n(&g_help_done, __ATOMIC_ACQUIRE) < chunks; ++spins)
    if (spins > 1000) sched_yield();
  return __atomic_load_n(&g_help_differs, __ATOMIC_RELAXED) != 0;
}

void start_helper() {
  if (output_chunks() < 2) return;
  g_helper_running = pthread_create(&g_helper, nullptr, helper_main, nullptr) == 0;
}

void stop_helper() {
  if (!g_helper_running) return;
  pthread_mutex_lock(&g_help_mu);
  g_help_quit = 1;
  pthread_cond_signal(&g_help_cv);
  pthread_mutex_unlock(&g_help_mu);
  pthread_join(g_helper, nullptr);
  g_helper_running = false;
}

// After a call on slot k: when its output differs from the baseline, the
// first time per slot, records it and two calls made right after it, one
// with the same fill and one with the baseline's fill. True when it drifted.
bool check_drift(int k, int fill, long long seq, int phase) {
  if (!split_task(kHelpCompare, k, 0)) return false;
  if (g_drifted[k]++ > 0) return true;
  record_slot(k, fill, seq, phase, 0, 0);
  long long s1 = slot_call(k, fill);
  record_slot(k, fill, s1, kPhaseRecheck);
  long long s2 = slot_call(k, g_slot_fill[k]);
  record_slot(k, g_slot_fill[k], s2, kPhaseRecheck);
  return true;
}

void make_slots() {
  for (int k = 0; k < g_nslots; ++k) {
    for (int b = 0; b < g_nin + g_nout; ++b) g_slot[k][b] = make_buffer(g_size[b] ? g_size[b] : 1, kAfter, b < g_nin, false);
    load_inputs(g_slot[k], g_slot_set[k]);
    for (int j = 0; j < g_nout; ++j) {
      g_base[k][j] = static_cast<unsigned char*>(malloc(g_size[g_nin + j] ? g_size[g_nin + j] : 1));
      if (!g_base[k][j]) fail("malloc failed for a baseline");
    }
    g_base_digest[k] = static_cast<uint64_t*>(malloc(sizeof(uint64_t) * (output_chunks() + 1)));
    if (!g_base_digest[k]) fail("malloc failed for a baseline");
  }
  register_regions();
  g_call = -6;
  for (int k = 0; k < g_nslots; ++k) {
    long long seq = slot_call(k, g_slot_fill[k]);
    for (int j = 0; j < g_nout; ++j) memcpy(g_base[k][j], g_slot[k][g_nin + j].data, g_size[g_nin + j]);
    for (long long c = 0; c < output_chunks(); ++c) g_base_digest[k][c] = chunk_digest(k, c);
    record_slot(k, g_slot_fill[k], seq, kPhaseBaseline);
  }
  // A warm call's time, for the bursts of the concurrent rounds: calls on
  // slot 0 for 1 ms or 1000 calls, each compared with the baseline.
  double t0 = now_ms(), t = t0;
  int n = 0;
  while (n < 1000 && t - t0 < 1.0) {
    long long s = slot_call(0, g_slot_fill[0]);
    check_drift(0, g_slot_fill[0], s, kPhaseSoak);
    ++n;
    t = now_ms();
  }
  g_call_ms = (t - t0) / n;
}

// ---- concurrent rounds --------------------------------------------------------

struct Barrier {
  int count = 0, sense = 0;
};
Barrier g_barrier;
// The overlap bookkeeping is relaxed: it must not order one thread's calls
// after the other's, or ThreadSanitizer (the race run) would see the two
// threads synchronise between calls and miss races. Only the barrier
// between rounds synchronises.
int g_in_call[2];           // thread t is inside a call
long long g_started[2];     // calls thread t has started
long long g_overlaps[2];    // calls of thread t that overlapped one of the other's
// Thread t's time inside calls, as one word so that the other thread reads
// it whole: (ns of its finished calls) << 1 between calls, and
// ((ns of its finished calls - the current call's start) << 1) | 1 during
// one (ns: now_ns()).
long long g_busy_clock[2];
long long g_overlap_ns[2];  // time thread t spent in calls while the other was in one
int g_go = 1;  // set by thread 0 at each barrier: another round follows
int g_burst = 1;  // calls per thread per round: about 2 ms of them

long long now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

// How long thread t has been inside calls, up to `now` (ns).
long long busy_ns(int t, long long now) {
  const long long v = __atomic_load_n(&g_busy_clock[t], __ATOMIC_RELAXED);
  return v & 1 ? (v >> 1) + now : v >> 1;
}

void barrier_wait(int* local_sense) {
  *local_sense = !*local_sense;
  if (__atomic_add_fetch(&g_barrier.count, 1, __ATOMIC_SEQ_CST) == 2) {
    __atomic_store_n(&g_barrier.count, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&g_barrier.sense, *local_sense, __ATOMIC_SEQ_CST);
  } else {
    for (long spins = 0; __atomic_load_n(&g_barrier.sense, __ATOMIC_SEQ_CST) != *local_sense; ++spins)
      if (spins > 1000) sched_yield();
  }
}

struct Worker {
  int thread, slot, rounds = 0, bad_round = -1;
  long long bad_seq = 0, last_seq = 0, busy = 0;  // busy: ns inside its own calls
  unsigned char* bad[kMaxBuffers];
};

void* concurrent_worker(void* arg) {
  Worker& w = *static_cast<Worker*>(arg);
  int sense = 0;
  double start = now_ms(), last_progress = start;
  for (;;) {
    if (w.thread == 0) {
      double t = now_ms();
      long long overlaps = __atomic_load_n(&g_overlaps[0], __ATOMIC_RELAXED);
      long long o1 = __atomic_load_n(&g_overlaps[1], __ATOMIC_RELAXED);
      if (o1 < overlaps) overlaps = o1;
      long long overlap_ns = __atomic_load_n(&g_overlap_ns[0], __ATOMIC_RELAXED);
      long long n1 = __atomic_load_n(&g_overlap_ns[1], __ATOMIC_RELAXED);
      if (n1 < overlap_ns) overlap_ns = n1;
      // At least min_rounds and min_ms, and until each thread had
      // min_overlaps calls that overlapped the other's, or, for slow calls,
      // min_overlaps_slow that add up to min_overlap_ms of its time with
      // both threads inside a call (a loaded machine takes longer to give
      // both a core), but no longer than max_ms.
      const bool overlapped = overlaps >= g_min_overlaps ||
                              (overlaps >= g_min_overlaps_slow && overlap_ns >= g_min_overlap_ms * 1e6);
      bool more = w.rounds < g_max_rounds && (w.rounds < g_min_rounds || t - start < g_rounds_min_ms || !overlapped) &&
                  !(w.rounds >= g_min_rounds && t - start >= g_rounds_max_ms);
      __atomic_store_n(&g_go, more ? 1 : 0, __ATOMIC_SEQ_CST);
      if (t - last_progress > 1000) {
        Line p;
        p.s("progress rounds=").i(w.rounds).emit();
        last_progress = t;
      }
    }
    barrier_wait(&sense);
    if (!__atomic_load_n(&g_go, __ATOMIC_SEQ_CST)) break;
    // A burst of calls, so that the two threads' calls overlap even when
    // they are not released at the same instant, or share one core.
    for (int b = 0; b < g_burst; ++b) {
      // Counts the calls that overlapped one of the other thread's.
      const int me = w.thread, other = 1 - w.thread;
      apply_fill(g_slot[w.slot], g_slot_fill[w.slot]);
      long long other_started = __atomic_load_n(&g_started[other], __ATOMIC_RELAXED);
      int other_in = __atomic_load_n(&g_in_call[other], __ATOMIC_RELAXED);
      __atomic_store_n(&g_in_call[me], 1, __ATOMIC_RELAXED);
      __atomic_add_fetch(&g_started[me], 1, __ATOMIC_RELAXED);
      const long long begin = now_ns();
      const long long other_before = busy_ns(other, begin);
      __atomic_store_n(&g_busy_clock[me], ((w.busy - begin) << 1) | 1, __ATOMIC_RELAXED);
      w.last_seq = call_on(g_slot[w.slot]);
      const long long end = now_ns();
      w.busy += end - begin;
      __atomic_store_n(&g_busy_clock[me], w.busy << 1, __ATOMIC_RELAXED);
      // The other thread's time inside calls while this call ran.
      __atomic_add_fetch(&g_overlap_ns[me], busy_ns(other, end) - other_before, __ATOMIC_RELAXED);
      __atomic_store_n(&g_in_call[me], 0, __ATOMIC_RELAXED);
      if (other_in || __atomic_load_n(&g_in_call[other], __ATOMIC_RELAXED) ||
          __atomic_load_n(&g_started[other], __ATOMIC_RELAXED) != other_started)
        __atomic_add_fetch(&g_overlaps[me], 1, __ATOMIC_RELAXED);
      if (w.bad_round < 0 && differs_from_baseline(w.slot)) {
        w.bad_round = w.rounds;
        w.bad_seq = w.last_seq;
        for (int j = 0; j < g_nout; ++j) memcpy(w.bad[j], g_slot[w.slot][g_nin + j].data, g_size[g_nin + j]);
      }
    }
    ++w.rounds;
    barrier_wait(&sense);
  }
  return nullptr;
}

void concurrent_rounds() {
  g_call = -4;
  Line begin;
  begin.s("begin call=-4").emit();
  g_burst = g_call_ms > 2.0 / 100000 ? static_cast<int>(2.0 / g_call_ms) : 100000;
  if (g_burst < 1) g_burst = 1;
  Worker w[2];
  w[0].thread = 0;
  w[0].slot = g_conc_a;
  w[1].thread = 1;
  w[1].slot = g_conc_b;
  for (Worker& x : w)
    for (int j = 0; j < g_nout; ++j) {
      x.bad[j] = static_cast<unsigned char*>(malloc(g_size[g_nin + j] ? g_size[g_nin + j] : 1));
      if (!x.bad[j]) fail("malloc failed for the concurrent rounds");
    }
  pthread_t other;
  if (pthread_create(&other, nullptr, concurrent_worker, &w[1]) != 0) fail("cannot start a thread");
  concurrent_worker(&w[0]);
  pthread_join(other, nullptr);
  Line rounds;
  long long overlaps = g_overlaps[0] < g_overlaps[1] ? g_overlaps[0] : g_overlaps[1];
  long long overlap_ns = g_overlap_ns[0] < g_overlap_ns[1] ? g_overlap_ns[0] : g_overlap_ns[1];
  rounds.s("rounds n=").i(w[0].rounds).s(" burst=").i(g_burst).s(" overlaps=").i(overlaps);
  rounds.s(" overlap_ms=").i(overlap_ns / 1000000).emit();
  for (Worker& x : w) {
    if (x.bad_round >= 0) {
      RecordInfo r;
      r.seq = x.bad_seq;
      r.set = g_slot_set[x.slot];
      r.fill = g_slot_fill[x.slot];
      r.slot = x.slot;
      r.phase = kPhaseConcurrent;
      r.thread = x.thread;
      emit_record(r, x.bad);
    }
    record_slot(x.slot, g_slot_fill[x.slot], x.last_seq, kPhaseConcurrent, x.thread);
    for (int j = 0; j < g_nout; ++j) free(x.bad[j]);
  }
  // One call per slot after the rounds, alone again.
  const int pair[2] = {g_conc_a, g_conc_b};
  for (int k : pair) {
    long long seq = slot_call(k, g_slot_fill[k]);
    record_slot(k, g_slot_fill[k], seq, kPhaseAfterRounds);
  }
}

// ---- the soak: many calls, on drawn slots with drawn fills ------------------

int compare_doubles(const void* a, const void* b) {
  double x = *static_cast<const double*>(a), y = *static_cast<const double*>(b);
  return x < y ? -1 : x > y;
}

// Each call's outputs get the plan's fill, or are left as the slot's
// previous call left them (an untouched fill: a user's reused buffer, which
// costs neither a fill nor, mostly, a comparison); the plan says which
// calls are compared with the slot's baseline (every filled one, a few
// kept ones, every recorded one). The soak's calls are also the timing:
// when the plan asks for it, each compared call's kernel time (not its
// fill, not the comparison) is kept unless its outputs were left as they
// were (a kernel could see that they already hold its answer), and their
// median, least and most are reported when the soak ends.
void soak() {
  g_call = -5;
  Line begin;
  begin.s("begin call=-5").emit();
  double* ms = g_timed ? static_cast<double*>(malloc(sizeof(double) * g_nsoak)) : nullptr;
  long long timed = 0;
  if (g_timed && !ms) fail("malloc failed for timings");
  start_helper();
  double start = now_ms(), last_progress = start;
  long long made = 0;
  for (int i = 0; i < g_nsoak; ++i) {
    const SoakCall& c = g_soak[i];
    double t = now_ms();
    if (!c.record && t - start > g_soak_max_ms) continue;  // out of time: only the recorded calls remain
    // A kernel whose calls at this pace would not reach the soak's
    // thousandth within the repeat time stops its unrecorded calls at three
    // fifths of it: the late positions are out of its reach either way (the
    // recorded ones are still made), and its timing has calls enough.
    if (!c.record && made > 0 && t - start > 0.6 * g_soak_max_ms &&
        (t - start) / static_cast<double>(made) * 1000 > g_soak_max_ms)
      continue;
    const bool kept = g_fills[c.fill].kind == kUntouched;
    if (!kept) split_task(kHelpFill, c.slot, c.fill);
    double t0 = now_ms();
    long long seq = call_on(g_slot[c.slot]);
    double t1 = now_ms();
    if (ms && c.compare && !kept) ms[timed++] = t1 - t0;
    ++made;
    // A recorded call is compared with the baseline byte for byte again:
    // same= must mean the same bytes.
    if (c.compare && !check_drift(c.slot, c.fill, seq, kPhaseSoak) && c.record)
      record_slot(c.slot, c.fill, seq, kPhaseSoak);
    if (t1 - last_progress > 1000) {
      Line p;
      p.s("progress soak=").i(made).emit();
      last_progress = t1;
    }
  }
  stop_helper();
  Line done;
  done.s("soaked calls=").i(made).s(" planned=").i(g_nsoak).emit();
  if (ms && timed > 0) {
    const int reps = static_cast<int>(timed);
    qsort(ms, static_cast<size_t>(reps), sizeof(double), compare_doubles);
    double median = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    char text[256];
    snprintf(text, sizeof text, "time median_ms=%.9g min_ms=%.9g max_ms=%.9g reps=%d\n", median, ms[0],
             ms[reps - 1], reps);
    if (write(g_events, text, strlen(text)) < 0) fail("cannot write events.log");
  }
  free(ms);
}

// Before the phases that want the machine to themselves (the rounds, the
// soak), waits for the hold file: axon creates it when the plain process
// it runs beside the battery has ended. Progress lines keep the watchdog
// from taking the wait for a hang.
void wait_for_hold() {
  if (!g_hold_path[0]) return;
  double start = now_ms(), last_progress = start;
  while (access(g_hold_path, F_OK) != 0) {
    sleep_ms(2);
    double t = now_ms();
    if (t - last_progress > 500) {
      Line p;
      p.s("progress hold").emit();
      last_progress = t;
    }
  }
  Line held;
  held.s("held ms=").i(static_cast<long long>(now_ms() - start)).emit();
}

const unsigned char* map_file(const char* path, size_t* len) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) fail("cannot open a data file");
  struct stat st;
  if (fstat(fd, &st) != 0) fail("cannot stat a data file");
  *len = static_cast<size_t>(st.st_size);
  const unsigned char* p = nullptr;
  if (st.st_size > 0) {
    void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) fail("cannot map a data file");
    p = static_cast<const unsigned char*>(m);
  }
  close(fd);
  return p;
}

}  // namespace

// driver PLAN BLOCKS EVENTS OUTPUTS [sanitized|threads]
// sanitized: AddressSanitizer's build, the battery's calls on the heap only;
// threads: ThreadSanitizer's build, the slots and the concurrent rounds.
// Either way the sanitizer reports faults itself.
int main(int argc, char** argv) {
  if (argc < 5) return 91;
  g_events = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
  g_outputs_fd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (g_events < 0 || g_outputs_fd < 0) return 92;
  bool sanitized = argc > 5 && !strcmp(argv[5], "sanitized");
  bool threads = argc > 5 && !strcmp(argv[5], "threads");
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0) g_page = static_cast<size_t>(page);
  install_handlers(sanitized || threads);
  read_plan(argv[1]);

  size_t blocks_len = 0;
  g_blocks = map_file(argv[2], &blocks_len);
  size_t need = 0;
  for (int b = 0; b < g_nblocks; ++b)
    if (g_block_off[b] + g_block_len[b] > need) need = g_block_off[b] + g_block_len[b];
  if (blocks_len < need) fail("blocks.bin is short");
  if (g_fill_path[0]) g_fill_data = map_file(g_fill_path, &g_fill_len);
  for (int f = 0; f < g_nfills; ++f)
    if (g_fills[f].kind == kData)
      for (int j = 0; j < g_nout; ++j)
        if (!g_fill_data || g_fills[f].off[j] + g_size[g_nin + j] > g_fill_len) fail("the fill file is short");
  g_next_record = g_ncalls;
  size_t call_total = 0;
  for (int b = 0; b < g_nin + g_nout; ++b) call_total += g_size[b];
  g_stream_fills = call_total > last_level_cache_bytes();

  Line ready;
  ready.s("ready threads=").i(count_threads()).emit();
  for (int c = 0; c < g_ncalls; ++c) {
    if (sanitized) g_calls[c].layout = kHeap;
    run_call(c);
  }
  end_watch();
  for (int i = 0; i <= kMaxWatched; ++i)  // the battery's copies are not needed after it
    for (int j = 0; j < g_nout; ++j) {
      free(g_snaps[i][j]);
      g_snaps[i][j] = nullptr;
    }
  if (!sanitized && g_nslots > 0) {
    wait_for_hold();
    make_slots();
    if (g_conc_a >= 0) concurrent_rounds();
    if (g_nsoak > 0) soak();
    if (g_last_slot >= 0) {
      g_call = -7;
      long long seq = slot_call(g_last_slot, g_last_fill);
      record_slot(g_last_slot, g_last_fill, seq, kPhaseLast);
    }
  }
  g_call = -1;
  g_nregions = 0;
  if (g_have_cur)
    for (int k = 0; k < g_nin + g_nout; ++k) free_buffer(g_cur[k]);
  for (int k = 0; k < g_nslots; ++k)
    for (int b = 0; b < g_nin + g_nout; ++b) free_buffer(g_slot[k][b]);
  for (int k = 0; k < g_nslots; ++k)
    for (int j = 0; j < g_nout; ++j) free(g_base[k][j]);
  for (int k = 0; k < g_nslots; ++k) free(g_base_digest[k]);
  free(g_block_off);
  free(g_block_len);
  free(g_set_blocks);
  free(g_calls);
  free(g_fills);
  free(g_soak);
  Line done;
  done.s("done").emit();
  return 0;
}
)AXON_DRIVER";

}  // namespace

std::string emit_call_source(const ir::Graph& g, const codegen::KernelAbi& abi) {
  std::ostringstream s;
  s << "// call.cpp: generated by axon's gate for " << abi.entry << ". Trusted code:\n"
    << "// the drivers call the candidate kernel through it (src/gate/driver_source.h).\n"
    << "#include \"kernel.h\"\n\n"
    << "void axon_gate_call(void* const* b) {\n  " << abi.entry << "(";
  size_t k = 0;
  for (const ir::ParamInfo& p : g.params)
    s << (k ? ", " : "") << "static_cast<const " << ir::dtype_c_type(p.type.dtype) << "*>(b[" << k << "])", ++k;
  for (ir::NodeId o : g.outputs)
    s << (k ? ", " : "") << "static_cast<" << ir::dtype_c_type(g[o].type.dtype) << "*>(b[" << k << "])", ++k;
  s << ");\n}\n";
  return s.str();
}

const std::string& driver_source() {
  static const std::string text = std::string("// driver.cpp: axon's gate driver. Trusted code: it calls the candidate\n"
                                              "// kernel and reports what it saw (src/gate/protocol.h).\n"
                                              "void axon_gate_call(void* const* b);  // call.cpp\n") +
                                  kDriverBody;
  return text;
}

}  // namespace axon::gate
