"""Random numpy programs for the property suite, and a shrinker.

A Program is data: named dims with sizes, annotated parameters, a list of
`name = expression` statements and the names returned. Expressions are trees
of format templates ('({0} + {1})'); a template may name a dim as '<d1>',
which is rendered from the current sizes, so that shrinking a dim keeps
reshapes and fresh parameters consistent.

numpy decides what is well typed: the generator evaluates every statement
as it builds it, and the shrinker keeps a candidate only if numpy still runs
it. Nothing here knows axon; the tests pass in a predicate that does.

Numerics are kept tame on purpose, so that a failure means a bug rather than
an ill-conditioned program: exp only of bounded values, log/sqrt/division
only of arguments bounded away from zero, and comparisons only of parameters
(which are exact inputs, so the float32 kernel and the float64 reference
take the same branch).
"""

import itertools
import random
import re
from dataclasses import dataclass, field, replace

import numpy as np

MAX_ELEMENTS = 400


@dataclass(frozen=True)
class Expr:
    fmt: str
    args: tuple = ()
    var: bool = False  # a leaf naming a parameter or an earlier statement

    def render(self, dims):
        text = self.fmt.format(*[a.render(dims) for a in self.args]) if self.args else self.fmt
        return re.sub(r"<(d\d+)>", lambda m: str(dims[m.group(1)]), text)

    def nodes(self):
        yield self
        for a in self.args:
            yield from a.nodes()

    def size(self):
        return 1 + sum(a.size() for a in self.args)

    def uses(self):
        return {n.fmt for n in self.nodes() if n.var}

    def replace_node(self, path, new):
        """A copy with the node at `path` (a tuple of child indices) replaced."""
        if not path:
            return new
        i = path[0]
        args = list(self.args)
        args[i] = args[i].replace_node(path[1:], new)
        return replace(self, args=tuple(args))

    def paths(self, prefix=()):
        yield prefix, self
        for i, a in enumerate(self.args):
            yield from a.paths(prefix + (i,))

    def rename(self, old, new):
        if self.var and self.fmt == old:
            return Expr(new, var=True)
        if not self.args:
            return self
        return replace(self, args=tuple(a.rename(old, new) for a in self.args))


def V(name):
    return Expr(name, var=True)


@dataclass(frozen=True)
class Param:
    name: str
    dtype: str
    dims: tuple  # each '<dK>' or a literal like '1'


@dataclass(frozen=True)
class Program:
    dims: tuple      # ((sym, size), ...)
    params: tuple    # (Param, ...)
    stmts: tuple     # ((name, Expr), ...)
    outputs: tuple   # (name, ...)
    entry: str = "prog"

    def dim_sizes(self):
        return dict(self.dims)

    def param_shape(self, p):
        d = self.dim_sizes()
        return tuple(int(re.sub(r"<(d\d+)>", lambda m: str(d[m.group(1)]), s)) for s in p.dims)

    def source(self):
        d = self.dim_sizes()
        sig = ", ".join(f'{p.name}: "{p.dtype}[{", ".join(str(s) for s in self.param_shape(p))}]"'
                        for p in self.params)
        lines = ["import numpy as np", "", "", f"def {self.entry}({sig}):"]
        lines += [f"    {name} = {e.render(d)}" for name, e in self.stmts]
        lines.append("    return " + ", ".join(self.outputs))
        return "\n".join(lines) + "\n"

    def size(self):
        """What the shrinker minimises."""
        return (sum(e.size() for _, e in self.stmts) + len(self.stmts) + len(self.params) + len(self.outputs)
                + sum(s for _, s in self.dims))


# --------------------------------------------------------------------------
# Running a program under numpy


def numpy_inputs(prog, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for p in prog.params:
        shape = prog.param_shape(p)
        out.append(rng.random(shape) < 0.5 if p.dtype == "bool" else rng.standard_normal(shape))
    return out


def run_numpy(prog, inputs=None):
    """The program's outputs under numpy; raises if numpy rejects it."""
    scope = {}
    exec(compile(prog.source(), "<generated>", "exec"), scope)
    with np.errstate(all="ignore"):
        res = scope[prog.entry](*(inputs if inputs is not None else numpy_inputs(prog)))
    return res if isinstance(res, tuple) else (res,)


def is_valid(prog):
    if not prog.outputs:
        return False
    defined = {p.name for p in prog.params}
    for name, e in prog.stmts:
        if not e.uses() <= defined:
            return False
        defined.add(name)
    if not set(prog.outputs) <= defined:
        return False
    try:
        outs = run_numpy(prog)
    except Exception:
        return False
    return all(np.asarray(o).size <= MAX_ELEMENTS for o in outs)


# --------------------------------------------------------------------------
# The generator

UNARY = [
    "np.tanh({0})", "np.abs({0})", "(-{0})", "np.exp(np.tanh({0}))", "np.log(np.abs({0}) + 1.0)",
    "np.sqrt(np.abs({0}) + 0.5)", "({0} * {0})", "({0} ** 2)", "np.maximum({0}, 0.0)",
    "({0} * 0.5 + 1.0)", "np.exp(-np.abs({0}))", "(1.0 / (np.abs({0}) + 1.0))", "(2.0 - {0})",
]
BINARY = [
    "({0} + {1})", "({0} - {1})", "({0} * {1})", "({0} / (np.abs({1}) + 1.0))",
    "np.maximum({0}, {1})", "np.minimum({0}, {1})",
]
REDUCE = ["sum", "mean", "max", "min"]
SLICES = ["::-1", "1:", ":-1", "::2", "1::2", "-2:"]
KINDS = {"unary": 3, "binary": 4, "where": 1, "reduce": 2, "matmul": 2, "transpose": 1,
         "reshape": 1, "slice": 1, "concat": 1}


class _Builder:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        sizes = self.rng.sample([2, 3, 4, 5, 6], 3)
        self.dims = {f"d{i}": s for i, s in enumerate(sizes)}
        self.params = []
        self.stmts = []
        self.values = {}  # name -> numpy value (at generation-time sizes)
        self.is_param = {}
        self.np_rng = np.random.default_rng(seed)

    def sym(self, size):
        """The dim template for a size: '<dK>' if a dim has that size, else the literal."""
        for k, v in self.dims.items():
            if v == size and size > 1:
                return f"<{k}>"
        return str(size)

    def new_param(self, dims_templates, dtype="f32"):
        name = f"p{len(self.params)}"
        p = Param(name, dtype, tuple(dims_templates))
        self.params.append(p)
        shape = tuple(int(re.sub(r"<(d\d+)>", lambda m: str(self.dims[m.group(1)]), s)) for s in p.dims)
        self.values[name] = self.np_rng.standard_normal(shape)
        self.is_param[name] = True
        return name

    def random_param(self):
        base = list(self.dims)
        rank = self.rng.choice([0, 1, 2, 2, 2, 3, 3])
        syms = [f"<{d}>" for d in base[len(base) - rank:]] if rank <= 3 else []
        if self.rng.random() < 0.25:
            self.rng.shuffle(syms)
        syms = ["1" if self.rng.random() < 0.2 else s for s in syms]
        return self.new_param(syms)

    def pick(self, pred=lambda v: True):
        """A value satisfying `pred`, recent ones likelier, so that
        statements build on each other rather than all on the parameters."""
        names = [n for n, v in self.values.items() if pred(v)]
        if not names:
            return None
        weights = [2.0 ** min(i, 6) for i in range(len(names))]
        return self.rng.choices(names, weights)[0]

    def build(self, kind):
        r = self.rng
        a = self.pick(lambda v: v.ndim >= 1) if kind not in ("unary", "binary") else self.pick()
        if a is None:
            return None
        va = self.values[a]
        if kind == "unary":
            return Expr(r.choice(UNARY), (V(a),))
        if kind == "binary":
            def fits(v):
                try:
                    return int(np.prod(np.broadcast_shapes(v.shape, va.shape))) <= MAX_ELEMENTS
                except ValueError:
                    return False
            b = self.pick(fits)
            other = Expr(r.choice(["2.0", "0.5", "3"])) if r.random() < 0.2 else V(b)
            args = (V(a), other) if r.random() < 0.5 else (other, V(a))
            return Expr(r.choice(BINARY), args)
        if kind == "where":
            conds = [n for n in self.values if self.is_param[n] and _broadcasts(self.values[n].shape, va.shape)]
            if not conds:
                return None
            c = r.choice(conds)
            b = self.pick(lambda v: _broadcasts(v.shape, va.shape, self.values[c].shape))
            return Expr("np.where({0} > 0.0, {1}, {2})", (V(c), V(a), V(b) if r.random() < 0.7 else Expr("0.0")))
        if kind == "reduce":
            fn = r.choice(REDUCE)
            nd = va.ndim
            choice = r.random()
            if choice < 0.15:
                axis = "None"
            elif choice < 0.6:
                ax = r.randrange(nd)
                axis = str(ax - nd if r.random() < 0.5 else ax)
            else:
                axes = sorted(r.sample(range(nd), r.randint(1, nd)))
                axes = [x - nd if r.random() < 0.4 else x for x in axes]
                r.shuffle(axes)
                axis = "(" + ", ".join(map(str, axes)) + ("," if len(axes) == 1 else "") + ")"
            kd = r.random() < 0.4
            if r.random() < 0.3:
                return Expr(f"{{0}}.{fn}(axis={axis}" + (", keepdims=True)" if kd else ")"), (V(a),))
            return Expr(f"np.{fn}({{0}}, axis={axis}" + (", keepdims=True)" if kd else ")"), (V(a),))
        if kind == "matmul":
            k = va.shape[-1]
            def fits(v):
                if v.ndim == 1:
                    return v.shape[0] == k
                if v.ndim < 2 or v.shape[-2] != k:
                    return False
                try:
                    out = np.matmul(va, v)
                except ValueError:
                    return False
                return out.size <= MAX_ELEMENTS
            b = self.pick(fits)
            if b is None or r.random() < 0.5:
                n = r.choice(list(self.dims))
                b = self.new_param([self.sym(k), f"<{n}>"])
            if r.random() < 0.15:
                return Expr('np.einsum("...ij,jk->...ik", {0}, {1})', (V(a), V(b))) \
                    if va.ndim >= 2 and self.values[b].ndim == 2 else Expr("({0} @ {1})", (V(a), V(b)))
            return Expr("({0} @ {1})", (V(a), V(b)))
        if kind == "transpose":
            nd = va.ndim
            if nd < 2:
                return None
            c = r.random()
            if c < 0.3:
                return Expr("{0}.T", (V(a),))
            if c < 0.6:
                i, j = r.sample(range(nd), 2)
                return Expr(f"np.swapaxes({{0}}, {i}, {j - nd})", (V(a),))
            perm = list(range(nd))
            r.shuffle(perm)
            return Expr(f"np.transpose({{0}}, ({', '.join(map(str, perm))}))", (V(a),))
        if kind == "reshape":
            c = r.random()
            if c < 0.3:
                return Expr("{0}.reshape(-1)", (V(a),))
            if c < 0.6 and va.ndim >= 2:
                return Expr(f"{{0}}.reshape({self.sym(va.shape[0])}, -1)", (V(a),))
            ax = r.randrange(va.ndim + 1)
            return Expr(f"np.expand_dims({{0}}, {ax})", (V(a),))
        if kind == "slice":
            nd = va.ndim
            ax = r.randrange(nd)
            c = r.random()
            if c < 0.15:
                return Expr("{0}[" + ":, " * ax + "None]", (V(a),))
            if c < 0.25:
                return Expr("{0}[..., 0]" if r.random() < 0.5 else "{0}[-1]", (V(a),))
            s = r.choice(SLICES)
            if va.shape[ax] < 2:
                s = "::-1"
            if r.random() < 0.5 and ax == nd - 1:
                return Expr("{0}[..., " + s + "]", (V(a),))
            return Expr("{0}[" + ":, " * ax + s + "]", (V(a),))
        if kind == "concat":
            nd = va.ndim
            ax = r.randrange(nd)
            b = self.pick(lambda v: v.ndim == nd and all(v.shape[i] == va.shape[i] for i in range(nd) if i != ax))
            axis = ax - nd if r.random() < 0.5 else ax
            return Expr(f"np.concatenate([{{0}}, {{1}}], axis={axis})", (V(a), V(b)))
        raise AssertionError(kind)

    def program(self):
        names = [n for n in self.values if not self.is_param[n]]
        outs = [names[-1]] if names else [self.params[0].name]
        if len(names) > 2 and self.rng.random() < 0.3:
            outs = [self.rng.choice(names[:-1]), names[-1]]
        return Program(tuple(self.dims.items()), tuple(self.params), tuple(self.stmts), tuple(outs))


def _broadcasts(*shapes):
    try:
        return int(np.prod(np.broadcast_shapes(*shapes))) <= MAX_ELEMENTS
    except ValueError:
        return False


def generate(seed, statements=None, builder=None):
    """A random well-typed program; the same seed gives the same program.
    `builder` replaces _Builder (a subclass with more forms: tests/property/fuzzgen.py)."""
    b = (builder or _Builder)(seed)
    for _ in range(b.rng.randint(1, 3)):
        b.random_param()
    n = statements if statements is not None else b.rng.randint(2, 7)
    kinds, weights = zip(*KINDS.items())
    attempts = 0
    while len(b.stmts) < n and attempts < 200:
        attempts += 1
        kind = b.rng.choices(kinds, weights)[0]
        params_before = len(b.params)
        e = b.build(kind)
        if e is None:
            del b.params[params_before:]
            continue
        name = f"v{len(b.stmts)}"
        scope = dict(b.values)
        try:
            with np.errstate(all="ignore"):
                value = np.asarray(eval(e.render(b.dims), {"np": np}, scope))
        except Exception:
            value = None
        if value is None or value.size > MAX_ELEMENTS or value.dtype == bool:
            for p in b.params[params_before:]:
                del b.values[p.name]
            del b.params[params_before:]
            continue
        b.stmts.append((name, e))
        b.values[name] = value
        b.is_param[name] = False
    prog = b.program()
    assert is_valid(prog), prog.source()
    return prog


# --------------------------------------------------------------------------
# The shrinker


def dead_code_eliminated(prog):
    live = set(prog.outputs)
    kept = []
    for name, e in reversed(prog.stmts):
        if name in live:
            kept.append((name, e))
            live |= e.uses()
    params = tuple(p for p in prog.params if p.name in live)
    used_dims = {m for p in params for s in p.dims for m in re.findall(r"<(d\d+)>", s)}
    used_dims |= {m for _, e in kept for n in e.nodes() for m in re.findall(r"<(d\d+)>", n.fmt)}
    dims = tuple((k, v) for k, v in prog.dims if k in used_dims)
    return replace(prog, stmts=tuple(reversed(kept)), params=params, dims=dims)


def _candidates(prog):
    """Smaller variants of `prog`, the boldest first; some may be invalid."""
    # Fewer outputs.
    if len(prog.outputs) > 1:
        for o in prog.outputs:
            yield replace(prog, outputs=(o,))
    # Return an earlier value instead (drops everything after it).
    for name, _ in prog.stmts:
        if name not in prog.outputs:
            yield replace(prog, outputs=(name,))
    for p in prog.params:
        yield replace(prog, outputs=(p.name,))
    # Delete a statement nothing reads (it may still matter: axon, like
    # Python, evaluates every statement, so dead code can be what fails).
    read = set(prog.outputs) | {u for _, e in prog.stmts for u in e.uses()}
    for i, (name, e) in enumerate(prog.stmts):
        if name not in read:
            yield replace(prog, stmts=prog.stmts[:i] + prog.stmts[i + 1:])
    # Delete a statement: its uses read one of its operands instead.
    for i, (name, e) in enumerate(prog.stmts):
        for u in sorted(e.uses()):
            stmts = prog.stmts[:i] + tuple((n, x.rename(name, u)) for n, x in prog.stmts[i + 1:])
            outputs = tuple(u if o == name else o for o in prog.outputs)
            yield replace(prog, stmts=stmts, outputs=outputs)
    # Replace a subexpression by one of its operands, or by a parameter.
    for i, (name, e) in enumerate(prog.stmts):
        for path, node in e.paths():
            for child in node.args:
                yield _with_stmt(prog, i, e.replace_node(path, child))
            if node.size() > 1:
                for p in prog.params:
                    yield _with_stmt(prog, i, e.replace_node(path, V(p.name)))
    # Smaller dims.
    for k, v in prog.dims:
        for smaller in sorted({1, v - 1, v // 2}):
            if 1 <= smaller < v:
                yield replace(prog, dims=tuple((kk, smaller if kk == k else vv) for kk, vv in prog.dims))


def _with_and_without_dead_code(candidates):
    for cand in candidates:
        yield dead_code_eliminated(cand)
        yield cand


def _with_stmt(prog, i, e):
    stmts = list(prog.stmts)
    stmts[i] = (stmts[i][0], e)
    return replace(prog, stmts=tuple(stmts))


@dataclass
class ShrinkResult:
    program: Program
    evaluations: int
    steps: int
    log: list = field(default_factory=list)


def shrink(prog, still_fails, max_evaluations=150):
    """Greedy shrinking: take the first smaller valid variant on which
    `still_fails(program)` is true, until none is or the budget is spent.
    Each variant is tried with its dead code removed first, then as it is."""
    current = prog
    result = ShrinkResult(current, 0, 0)
    seen = {current.source()}
    progress = True
    while progress and result.evaluations < max_evaluations:
        progress = False
        for cand in _with_and_without_dead_code(_candidates(current)):
            if cand.size() >= current.size():
                continue
            text = cand.source()
            if text in seen:
                continue
            seen.add(text)
            if not is_valid(cand):
                continue
            result.evaluations += 1
            if still_fails(cand):
                current = cand
                result.steps += 1
                result.log.append(cand.size())
                progress = True
                break
            if result.evaluations >= max_evaluations:
                break
    result.program = current
    return result
