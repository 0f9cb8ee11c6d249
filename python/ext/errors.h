// The Python exceptions of the axon package, raised from C++.
//
// The types themselves are defined in Python (axon/errors.py) and handed to
// the extension once, at import, by set_error_types(); the C++ code throws
// the plain exception classes below, and the translator installed by
// register_error_translator() turns them (and the library's own
// axon::Diagnostic and axon::InternalError) into those Python types:
//   SpecError          a bad spec: the CLI's "file:line:col: error:" text with its caret line
//   ShapeError         arguments that do not match the spec's annotations
//   VerificationError  no kernel passed its check against the float64 reference
//   InternalError      a bug of axon (the CLI's exit code 2)
#pragma once

#include <stdexcept>
#include <string>

#include <nanobind/nanobind.h>

namespace axon::python {

struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct VerificationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Stores the Python exception types (called once from axon/errors.py).
void set_error_types(nanobind::handle spec, nanobind::handle shape, nanobind::handle verification,
                     nanobind::handle internal);

/// Installs the translation of the exceptions above into the stored types.
void register_error_translator();

}  // namespace axon::python
