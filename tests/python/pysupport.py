"""What the Python package's tests share: the package under test, a private
tuning database, and numpy's float64 evaluation of a spec.

The package is imported from $AXON_PYTHONPATH (ctest sets it to the build
folder's staged package, build/python), else from build/python of this
checkout when it exists, else from wherever Python finds it (an installed
axon). Every search of these tests goes to a fresh database in a temporary
folder ($AXON_DB), so that the user's own database is never read or written
and a first call really searches.
"""

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

SOURCE_DIR = Path(__file__).resolve().parents[2]
_staged = os.environ.get("AXON_PYTHONPATH") or str(SOURCE_DIR / "build" / "python")
if Path(_staged, "axon").is_dir():
    sys.path.insert(0, _staged)

DB_DIR = tempfile.mkdtemp(prefix="axon-pytest-")
os.environ["AXON_DB"] = os.path.join(DB_DIR, "tuning.sqlite")

import axon  # noqa: E402

# Small searches: a few seconds each.
FAST = dict(budget=3, trials=3)


def float64_reference(fn, *args):
    """fn (the spec, plain numpy) run by numpy itself on float64 copies of the arguments."""
    fn = getattr(fn, "__axon_function__", fn)
    ref = fn(*[np.asarray(a, dtype=np.float64) for a in args])
    return ref


def assert_close(got, ref, rtol=2e-5, atol=2e-6):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64),
                               rtol=rtol, atol=atol)
