"""The exceptions and warnings of the axon package.

SpecError          the spec (the function's source, or a spec file) is not one
                   axon accepts: the message is the CLI's, "file:line:col:
                   error: ..." followed by the source line and a caret.
ShapeError         arguments that do not match the spec's annotations (count,
                   rank, a dimension, a named dimension bound twice, the
                   dtype); also a TypeError, since a wrong dtype is one.
VerificationError  no kernel, not even the naive one, computed the spec within
                   its error budget against the float64 reference (the CLI's
                   exit code 3); the message names the output, the element
                   and the budget.
InternalError      a bug of axon (the CLI's exit code 2).
CopyWarning        an argument had to be copied for a call (not C-contiguous).
SearchWarning      a part of the search failed and was skipped, or the search
                   was interrupted and the best kernel so far is used.
"""

import os
import sys
import warnings

from . import _axon


class SpecError(ValueError):
    pass


class ShapeError(ValueError, TypeError):
    pass


class VerificationError(RuntimeError):
    pass


class InternalError(RuntimeError):
    pass


class CopyWarning(UserWarning):
    pass


class SearchWarning(UserWarning):
    pass


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def warn(message, category):
    """warnings.warn, attributed to the first caller outside the package."""
    level, f = 1, sys._getframe(1)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _PACKAGE_DIR:
        level, f = level + 1, f.f_back
    warnings.warn(message, category, stacklevel=level)


_axon.set_error_types(SpecError, ShapeError, VerificationError, InternalError)
