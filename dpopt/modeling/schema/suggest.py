"""The one suggestion rule for an unknown public name: :func:`did_you_mean` (column names,
backend options, schema declarations)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: object, known: Iterable[object]) -> str:
    """``"; did you mean 'a' or 'b'?"`` for the names in ``known`` close to ``name`` (empty if none).

    The names are public (a table's header, a schema's declarations), never values of the data.
    """
    close = difflib.get_close_matches(str(name), sorted({str(k) for k in known}), n=3, cutoff=0.6)
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""
