// support::ChildServer: the helper answers requests one at a time without a
// fork each; one that runs past its limit is killed by the deadline and
// replaced; a throw and a crash are reported, not propagated; the helper
// holds none of the caller's other file descriptors. And
// verify::smt::bounded_check on top of it: unsat, sat with the model rebuilt
// in the caller's context, and a query Z3 cannot finish cut at its deadline.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>

#include "support/child_server.h"
#include "verify/smt/bounded_check.h"

using axon::support::ChildServer;
using axon::support::HelperReply;
using namespace std::chrono_literals;

namespace {

// "pid": the helper's process id; "spin": never returns; "throw": throws;
// "crash": dies of SIGSEGV; "fds": the helper's open descriptors; else echoes.
std::string serve(const std::string& req) {
  if (req == "pid") return std::to_string(getpid());
  if (req == "spin")
    for (volatile unsigned long i = 0;; i = i + 1) {
    }
  if (req == "throw") throw std::runtime_error("no such request");
  if (req == "crash") raise(SIGSEGV);
  if (req == "fds") {
    std::string s;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) s += e.path().filename().string() + " ";
    return s;
  }
  return "echo " + req;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(child_server, RepliesFromOneHelperWithoutForkingPerRequest) {
  ChildServer server(serve);
  HelperReply a = server.ask("pid", 5s);
  ASSERT_TRUE(a.ok) << a.how;
  EXPECT_EQ(a.how, "replied");
  EXPECT_NE(a.value, std::to_string(getpid()));  // served in another process
  for (int i = 0; i < 20; ++i) {
    HelperReply e = server.ask("x" + std::to_string(i), 5s);
    ASSERT_TRUE(e.ok) << e.how;
    EXPECT_EQ(e.value, "echo x" + std::to_string(i));
  }
  EXPECT_EQ(server.ask("pid", 5s).value, a.value);
  EXPECT_EQ(std::to_string(server.helper()), a.value);
}

TEST(child_server, AHelperPastItsLimitIsKilledAndReplaced) {
  ChildServer server(serve);
  const std::string first = server.ask("pid", 5s).value;
  auto t0 = std::chrono::steady_clock::now();
  HelperReply r = server.ask("spin", 300ms);
  const double took = ms_since(t0);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.how, "killed after 300 ms");
  EXPECT_GE(took, 290);
  EXPECT_LT(took, 3000);  // the limit plus the time to reap the helper, on a loaded host
  EXPECT_EQ(server.helper(), -1);
  EXPECT_NE(kill(std::stoi(first), 0), 0);  // gone
  HelperReply next = server.ask("pid", 5s);
  ASSERT_TRUE(next.ok) << next.how;
  EXPECT_NE(next.value, first);
}

TEST(child_server, AThrowAndACrashAreReportedAndServingGoesOn) {
  ChildServer server(serve);
  HelperReply t = server.ask("throw", 5s);
  EXPECT_FALSE(t.ok);
  EXPECT_EQ(t.how, "threw");
  EXPECT_EQ(t.value, "no such request");
  EXPECT_EQ(server.ask("after", 5s).value, "echo after");  // the same helper went on
  HelperReply c = server.ask("crash", 5s);
  EXPECT_FALSE(c.ok);
  EXPECT_FALSE(c.timed_out);
  EXPECT_EQ(c.how, "signal 11 (SIGSEGV)");
  HelperReply again = server.ask("again", 5s);
  ASSERT_TRUE(again.ok) << again.how;
  EXPECT_EQ(again.value, "echo again");
}

TEST(child_server, TheHelperHoldsNoneOfTheCallersOtherDescriptors) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ChildServer server(serve);
  HelperReply r = server.ask("fds", 5s);
  close(p[0]);
  close(p[1]);
  ASSERT_TRUE(r.ok) << r.how;
  // stdin, stdout, stderr, its socket and the directory being listed (which
  // may reuse the number of a descriptor closed at the fork): not the pipe.
  int count = 0;
  for (char ch : r.value) count += ch == ' ';
  EXPECT_EQ(count, 5) << r.value;
}

TEST(bounded_check, AnswersAndRebuildsTheModelInTheCallersContext) {
  z3::context c;
  z3::expr x = c.int_const("x"), y = c.real_const("y");
  std::string why;
  EXPECT_EQ(axon::verify::smt::bounded_check(c, {x > 3, x < 2}, 5s, nullptr, &why), z3::unsat) << why;
  z3::model m(c);
  ASSERT_EQ(axon::verify::smt::bounded_check(c, {x > 6, x < 8, y * 3 == 1}, 5s, &m, &why), z3::sat) << why;
  EXPECT_EQ(m.eval(x, true).get_numeral_int64(), 7);
  EXPECT_TRUE(m.eval(y * 3 == 1, true).is_true()) << m.eval(y, true);
}

// Factoring a product of two 31-bit primes as nonlinear integer arithmetic:
// Z3 does not finish it in a second; the query ends at its deadline.
TEST(bounded_check, AQueryZ3CannotFinishEndsAtItsDeadline) {
  z3::context c;
  z3::expr p = c.int_const("p"), q = c.int_const("q");
  std::string why;
  auto t0 = std::chrono::steady_clock::now();
  z3::check_result r = axon::verify::smt::bounded_check(
      c, {p > 1, q > 1, p * q == c.int_val("4611686014132420609")}, 1000ms, nullptr, &why);
  const double took = ms_since(t0);
  EXPECT_EQ(r, z3::unknown);
  EXPECT_EQ(why, "killed at the deadline of 1000 ms");
  EXPECT_LT(took, 4000);
  // The next query is answered by a fresh helper.
  EXPECT_EQ(axon::verify::smt::bounded_check(c, {p > 3, p < 2}, 5s, nullptr, &why), z3::unsat) << why;
}
