#include "frontend/annotation.h"

#include <cctype>

#include "frontend/dtype_rules.h"

namespace axon::frontend {

namespace {

class AnnotationReader {
 public:
  // With `names`, a named dim is not looked up in `dims`: its name is
  // appended to `names` and its size read as -1 (numbers append "").
  AnnotationReader(const std::string& text, const SourceLoc& loc, const std::map<std::string, int64_t>& dims,
                   std::vector<std::string>* names = nullptr)
      : text_(text), loc_(loc), dims_(dims), names_(names) {}

  ir::Type read() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    std::string name = text_.substr(start, pos_ - start);
    if (name.empty()) fail(start, "expected a dtype such as f32");
    ir::Type t;
    if (!parse_dtype_name(name, &t.dtype))
      fail(start, "unknown dtype '" + name + "'; expected one of bool, i32, i64, f16, bf16, f32, f64");
    skip_space();
    if (pos_ == text_.size()) return t;
    if (text_[pos_] != '[') fail(pos_, "expected '[' after the dtype");
    ++pos_;
    skip_space();
    while (pos_ < text_.size() && text_[pos_] != ']') {
      t.shape.push_back(dim());
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        skip_space();
      } else if (pos_ < text_.size() && text_[pos_] != ']') {
        fail(pos_, "expected ',' or ']' after a dimension");
      }
    }
    if (pos_ == text_.size()) fail(pos_, "expected ']' to close the shape");
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail(pos_, "unexpected text after the shape");
    return t;
  }

 private:
  int64_t dim() {
    size_t start = pos_;
    unsigned char c = pos_ < text_.size() ? static_cast<unsigned char>(text_[pos_]) : 0;
    if (std::isdigit(c)) {
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (v > (INT64_MAX - 9) / 10) fail(start, "dimension is too large");
        v = v * 10 + (text_[pos_++] - '0');
      }
      if (names_) names_->emplace_back();
      return v;
    }
    if (std::isalpha(c) || c == '_') {
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
      std::string name = text_.substr(start, pos_ - start);
      if (names_) {
        names_->push_back(name);
        return -1;
      }
      auto it = dims_.find(name);
      if (it == dims_.end()) fail(start, "dimension " + name + " is not bound; pass -D " + name + "=<size>", false);
      if (it->second < 0)
        fail(start, "dimension " + name + " is bound to " + std::to_string(it->second) + "; sizes must be non-negative",
             false);
      return it->second;
    }
    fail(start, "expected a dimension (a number or a name)");
  }

  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }

  [[noreturn]] void fail(size_t at, const std::string& what, bool malformed = true) {
    SourceLoc loc = loc_;
    loc.col += 1 + static_cast<int>(at);  // past the opening quote
    fail_at(loc, malformed ? "malformed annotation \"" + text_ + "\": " + what : what);
  }

  const std::string& text_;
  const SourceLoc& loc_;
  const std::map<std::string, int64_t>& dims_;
  std::vector<std::string>* names_;
  size_t pos_ = 0;
};

}  // namespace

ir::Type parse_annotation(const std::string& text, const SourceLoc& loc, const std::map<std::string, int64_t>& dims) {
  return AnnotationReader(text, loc, dims).read();
}

AnnotationPattern read_annotation_pattern(const std::string& text, const SourceLoc& loc) {
  AnnotationPattern p;
  static const std::map<std::string, int64_t> kNoDims;
  p.type = AnnotationReader(text, loc, kNoDims, &p.names).read();
  return p;
}

}  // namespace axon::frontend
