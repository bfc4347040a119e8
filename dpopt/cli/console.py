"""What the ``dpopt`` command prints: lines on stdout and stderr, and tables.

Every line is flushed at once, so the order of stdout and stderr is the order of the run
(a progress display on stderr is drawn between lines, :mod:`dpopt.progress`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["err", "format_table", "out", "table"]


def out(text: str = "") -> None:
    """Print one line on stdout."""
    print(text, file=sys.stdout, flush=True)


def err(text: str) -> None:
    """Print one line on stderr."""
    print(text, file=sys.stderr, flush=True)


def table(title: str, headers: list[str], rows: list[list[str]]) -> None:
    """Print a table: a rich table on a terminal, aligned plain text otherwise."""
    if sys.stdout.isatty():
        try:
            from rich.console import Console
            from rich.table import Table

            t = Table(title=title)
            for h in headers:
                t.add_column(h, overflow="fold")
            for r in rows:
                t.add_row(*r)
            Console().print(t)
            return
        except ImportError:  # pragma: no cover - rich is a dependency
            pass
    out(title)
    out(format_table(headers, rows))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Plain-text table with left-aligned columns separated by two spaces."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)
