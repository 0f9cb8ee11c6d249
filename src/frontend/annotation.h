// Parameter annotations: the string that gives an entry parameter its type.
//
//   "f32[M, 4096]"   dtype, then dims in brackets: integers or named dims
//   "f32[]" / "f32"  a 0-d array
// The dtype is an IR name (bool, i32, i64, f16, bf16, f32, f64) or numpy's
// spelling (float32, int64, ...). Named dims take their sizes from the -D
// bindings. Errors point into the string at the offending character.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/type.h"
#include "support/diagnostic.h"

namespace axon::frontend {

/// `text` is the annotation's contents and `loc` the position of its opening quote.
ir::Type parse_annotation(const std::string& text, const SourceLoc& loc, const std::map<std::string, int64_t>& dims);

/// An annotation read without binding its named dims: `type.shape[i]` is the
/// size of a numbered dim and -1 for a named one, whose name is `names[i]`
/// ("" for a numbered dim). Used to bind named dims from arrays' shapes.
struct AnnotationPattern {
  ir::Type type;
  std::vector<std::string> names;
};
AnnotationPattern read_annotation_pattern(const std::string& text, const SourceLoc& loc);

}  // namespace axon::frontend
