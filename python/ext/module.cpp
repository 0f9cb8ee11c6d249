// _axon: the extension module of the axon Python package (python/axon/).
//
// The package's Python code does the Python-side work (reading a function's
// source, binding named dims from argument shapes, the caches); everything
// about specs, searches and kernels is the C++ library's, reached through
// the few calls bound here:
//   parse_text_spec, load_file_spec   a spec -> Program (program.h)
//   annotation_pattern                an annotation with its named dims unbound
//   search, naive                     optimize/optimize.h, GIL released (search.h)
//   Kernel, Dispatcher                compiled kernels called on arrays (kernel.h)
//   set_error_types                   the Python exception types (errors.h)
//   default_db_path                   the tuning database used when none is given
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "codegen/kernel_source.h"
#include "errors.h"
#include "kernel.h"
#include "program.h"
#include "search.h"
#include "tuning/tuning_db.h"

namespace nb = nanobind;
using namespace nb::literals;
using namespace axon::python;

namespace {

nb::tuple type_tuple(const axon::ir::Type& t) {
  return nb::make_tuple(std::string(axon::ir::dtype_name(t.dtype)), nb::tuple(nb::cast(t.shape)));
}

nb::dict result_dict(const SearchResult& r) {
  nb::dict d;
  d["source"] = r.kernel.source;
  d["header"] = r.kernel.header;
  d["entry"] = r.kernel.entry;
  d["report"] = r.report_json;
  d["axon_ms"] = r.axon_ms;
  d["naive_ms"] = r.naive_ms;
  d["from_db"] = r.from_db;
  d["interrupted"] = r.interrupted;
  d["stop_reason"] = r.stop_reason;
  d["warnings"] = r.warnings;
  d["compile_flags"] = r.compile_flags;
  return d;
}

SearchResult result_from(const nb::dict& d) {
  SearchResult r;
  r.kernel.source = nb::cast<std::string>(d["source"]);
  r.kernel.header = nb::cast<std::string>(d["header"]);
  r.kernel.entry = nb::cast<std::string>(d["entry"]);
  r.compile_flags = nb::cast<std::vector<std::string>>(d["compile_flags"]);
  return r;
}

}  // namespace

NB_MODULE(_axon, m) {
  m.doc() = "axon's C++ library, as the axon package calls it";
  // Kernels registered as torch ops live until the interpreter exits, past
  // nanobind's leak check: that is their normal life, not a leak.
  nb::set_leak_warnings(false);
  register_error_translator();
  m.def("set_error_types", &set_error_types, "spec"_a, "shape"_a, "verification"_a, "internal"_a);
  m.def("default_db_path", &axon::tuning::default_db_path);

  nb::class_<Program>(m, "Program")
      .def_prop_ro("path", [](const Program& p) { return p.path; })
      .def_prop_ro("entry", [](const Program& p) { return p.graph.entry; })
      .def_prop_ro("params",
                   [](const Program& p) {
                     nb::list l;
                     for (const auto& prm : p.graph.params) {
                       nb::tuple t = type_tuple(prm.type);
                       l.append(nb::make_tuple(prm.name, t[0], t[1]));
                     }
                     return l;
                   })
      .def_prop_ro("outputs", [](const Program& p) {
        nb::list l;
        for (axon::ir::NodeId o : p.graph.outputs) l.append(type_tuple(p.graph[o].type));
        return l;
      });

  m.def("load_file_spec", &load_file_spec, "path"_a, "entry"_a, "dims"_a);
  m.def("parse_text_spec", &parse_text_spec, "path"_a, "text"_a, "entry"_a, "dims"_a, "line_map"_a);
  m.def(
      "annotation_pattern",
      [](const std::string& text, const std::string& where) {
        axon::frontend::AnnotationPattern p = annotation_pattern(text, where);
        return nb::make_tuple(std::string(axon::ir::dtype_name(p.type.dtype)), nb::tuple(nb::cast(p.type.shape)),
                              nb::tuple(nb::cast(p.names)));
      },
      "text"_a, "where"_a);

  m.def(
      "search",
      [](const Program& p, double budget, int trials, uint64_t seed, const std::string& db, bool use_db, bool resume,
         bool rewrites, bool progress, bool catch_sigint) {
        SearchOptions o;
        o.budget_s = budget;
        o.trials = trials;
        o.seed = seed;
        o.db_path = db;
        o.use_db = use_db;
        o.resume = resume;
        o.rewrites = rewrites;
        o.progress = progress;
        o.catch_sigint = catch_sigint;
        return result_dict(search(p, o));
      },
      "program"_a, "budget"_a, "trials"_a, "seed"_a, "db"_a, "use_db"_a, "resume"_a, "rewrites"_a, "progress"_a,
      "catch_sigint"_a);
  m.def("naive", [](const Program& p) { return result_dict(naive(p)); }, "program"_a);

  nb::class_<Kernel>(m, "Kernel")
      .def("__init__",
           [](Kernel* k, const Program& p, const nb::dict& result) { new (k) Kernel(p, result_from(result)); },
           "program"_a, "result"_a)
      .def("__call__", &Kernel::call)
      .def("time_raw", &Kernel::time_raw, "args"_a, "reps"_a)
      .def_prop_ro("library", &Kernel::library);

  nb::class_<Dispatcher>(m, "Dispatcher")
      .def(nb::init<nb::object>(), "miss"_a)
      .def("__call__", &Dispatcher::call)
      .def("add", &Dispatcher::add, "kernel"_a)
      .def("__len__", &Dispatcher::size);
}
