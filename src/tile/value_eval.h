// evaluate<S>: a tile Value in the scalar domain S of ir/element_def.h. The
// interpreter instantiates it with ir::Real, the C++ printer with
// codegen::CScalar; each Apply is ir::body, the one definition of meaning.
#pragma once

#include "ir/element_def.h"
#include "tile/value.h"

namespace axon::tile {

template <class S, class LikeFn, class LoadFn, class IndexFn>
S evaluate(const Value& v, LikeFn&& like, LoadFn&& load, IndexFn&& index) {
  switch (v.kind()) {
    case ValueKind::Load: return load(v);
    case ValueKind::IndexOf: return index(v.index());
    case ValueKind::Apply: {
      std::vector<S> args;
      args.reserve(v.args().size());
      for (const Value& a : v.args()) args.push_back(evaluate<S>(a, like, load, index));
      return ir::body<S>(v.op(), args, like(v.dtype()));
    }
  }
  return like(v.dtype());
}

}  // namespace axon::tile
