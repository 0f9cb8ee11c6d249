// Three error channels, kept apart (docs/architecture.md, "Exit codes"):
//   Diagnostic         a user mistake, at a SourceLoc, with the values involved;
//   AXON_CHECK(c)      axon's own bug: always on, names file, line and condition;
//   AXON_UNSUPPORTED() a known gap: valid numpy that axon does not handle yet.
// Library code throws; only tools/ turn these into exit codes
// (Diagnostic and Unsupported -> 1, InternalError -> 2).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace axon {

/// A position in a spec file; line and col are 1-based, col counts bytes.
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
  bool valid() const { return line > 0; }
};

/// A user error: "file:line:col: error: message", then the source line and a caret.
class Diagnostic : public std::runtime_error {
 public:
  Diagnostic(SourceLoc loc, std::string message, bool unsupported = false);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }
  bool unsupported() const { return unsupported_; }
  /// The full LLVM-style text. `source` is the file's text (may be empty).
  std::string render(const std::string& source) const;

 private:
  SourceLoc loc_;
  std::string message_;
  bool unsupported_;
};

/// An invariant of axon itself was broken.
class InternalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
// Collects a message with operator<< and throws from its destructor's caller.
class ErrorStream {
 public:
  enum class Kind { Internal, Unsupported };
  ErrorStream(Kind kind, const char* file, int line, const char* cond);
  template <class T>
  ErrorStream& operator<<(const T& v) {
    msg_ << v;
    return *this;
  }
  [[noreturn]] void raise();

 private:
  Kind kind_;
  std::ostringstream msg_;
};
struct Raiser {
  // operator& binds looser than <<, so `Raiser() & stream << a << b` streams first.
  [[noreturn]] void operator&(ErrorStream& s) { s.raise(); }
  [[noreturn]] void operator&(ErrorStream&& s) { s.raise(); }
};
}  // namespace detail

/// Throws a user error at `loc`.
[[noreturn]] void fail_at(const SourceLoc& loc, const std::string& message);
/// Throws a known-gap error at `loc` ("error: unsupported: ...").
[[noreturn]] void fail_unsupported_at(const SourceLoc& loc, const std::string& message);

}  // namespace axon

// The for-statement (instead of an if) leaves no else to dangle.
#define AXON_CHECK(cond)                                                                  \
  for (bool axon_check_ok_ = static_cast<bool>(cond); !axon_check_ok_; axon_check_ok_ = true) \
  ::axon::detail::Raiser() & ::axon::detail::ErrorStream(                                 \
                                 ::axon::detail::ErrorStream::Kind::Internal, __FILE__,   \
                                 __LINE__, #cond)

#define AXON_UNSUPPORTED()                   \
  ::axon::detail::Raiser() &                 \
      ::axon::detail::ErrorStream(::axon::detail::ErrorStream::Kind::Unsupported, \
                                  __FILE__, __LINE__, "")
