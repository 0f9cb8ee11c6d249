#include "errors.h"

#include "support/diagnostic.h"

namespace nb = nanobind;

namespace axon::python {

namespace {
// Strong references, kept for the life of the process.
PyObject* g_spec = nullptr;
PyObject* g_shape = nullptr;
PyObject* g_verification = nullptr;
PyObject* g_internal = nullptr;

void raise(PyObject* type, PyObject* fallback, const char* what) {
  PyErr_SetString(type ? type : fallback, what);
}
}  // namespace

void set_error_types(nb::handle spec, nb::handle shape, nb::handle verification, nb::handle internal) {
  g_spec = nb::borrow(spec).release().ptr();
  g_shape = nb::borrow(shape).release().ptr();
  g_verification = nb::borrow(verification).release().ptr();
  g_internal = nb::borrow(internal).release().ptr();
}

void register_error_translator() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const SpecError& e) {
      raise(g_spec, PyExc_ValueError, e.what());
    } catch (const ShapeError& e) {
      raise(g_shape, PyExc_ValueError, e.what());
    } catch (const VerificationError& e) {
      raise(g_verification, PyExc_RuntimeError, e.what());
    } catch (const Diagnostic& d) {
      // A user error with no spec text at hand (a database, a compile folder).
      raise(g_spec, PyExc_ValueError, d.render("").c_str());
    } catch (const InternalError& e) {
      std::string text = std::string(e.what()) + "\nthis is a bug in axon; please report it with the spec that caused it";
      raise(g_internal, PyExc_RuntimeError, text.c_str());
    }
  });
}

}  // namespace axon::python
