#include "support/diagnostic.h"

namespace axon {

namespace {
std::string format_head(const SourceLoc& loc, const std::string& message, bool unsupported) {
  std::ostringstream os;
  if (loc.valid()) os << loc.file << ":" << loc.line << ":" << loc.col << ": ";
  else if (!loc.file.empty()) os << loc.file << ": ";
  os << (unsupported ? "error: unsupported: " : "error: ") << message;
  return os.str();
}

std::string source_line(const std::string& source, int line) {
  int current = 1;
  size_t start = 0;
  while (current < line) {
    size_t nl = source.find('\n', start);
    if (nl == std::string::npos) return "";
    start = nl + 1;
    ++current;
  }
  size_t end = source.find('\n', start);
  return source.substr(start, end == std::string::npos ? std::string::npos : end - start);
}
}  // namespace

Diagnostic::Diagnostic(SourceLoc loc, std::string message, bool unsupported)
    : std::runtime_error(format_head(loc, message, unsupported)),
      loc_(std::move(loc)),
      message_(std::move(message)),
      unsupported_(unsupported) {}

std::string Diagnostic::render(const std::string& source) const {
  std::string out = what();
  out += "\n";
  if (!loc_.valid() || source.empty()) return out;
  std::string text = source_line(source, loc_.line);
  out += text + "\n";
  std::string caret;
  for (int i = 1; i < loc_.col && i <= static_cast<int>(text.size()); ++i)
    caret += text[i - 1] == '\t' ? '\t' : ' ';
  out += caret + "^\n";
  return out;
}

void fail_at(const SourceLoc& loc, const std::string& message) { throw Diagnostic(loc, message); }
void fail_unsupported_at(const SourceLoc& loc, const std::string& message) {
  throw Diagnostic(loc, message, /*unsupported=*/true);
}

namespace detail {
ErrorStream::ErrorStream(Kind kind, const char* file, int line, const char* cond) : kind_(kind) {
  if (kind == Kind::Internal)
    msg_ << "internal error at " << file << ":" << line << ": check failed: " << cond << ": ";
}
void ErrorStream::raise() {
  if (kind_ == Kind::Internal) throw InternalError(msg_.str());
  throw Diagnostic(SourceLoc{}, msg_.str(), /*unsupported=*/true);
}
}  // namespace detail

}  // namespace axon
