"""A progress display for long runs, on stderr, drawn with rich; off unless asked for.

Turning it on
-------------
One switch, :func:`show_progress`, which works as a call and as a context manager::

    import dpopt as dp
    dp.show_progress()                 # on for the rest of the process
    with dp.show_progress():           # on inside the block only (the old setting comes back)
        release = dp.OPDisc(0.5, 1e-8).run(problem, solver="highs-grouped")
    dp.show_progress(False)            # off again

The Python API starts with the display off; ``dpopt solve`` and ``dpopt bench`` turn it on
(``--quiet`` keeps it off).  Even when on, nothing is drawn unless the console is a
terminal (rich's ``Console(stderr=True).is_terminal``): output piped to a file, a CI log or
pytest's captured stderr never gets a display.  ``show_progress(console=...)`` draws on
another rich console (tests pass ``Console(file=io.StringIO(), force_terminal=True)``).

Long loops call :func:`counted` (``for t in counted(T, "DP-GD iterations")``): with the
display off it returns ``range(T)`` itself, so the off path costs one attribute check per
loop, not per iteration; when on, the count is pushed to rich at most every
:data:`THROTTLE` seconds.  Other work opens a :func:`track`\\ er and calls ``advance()``.

What the display may show (privacy)
-----------------------------------
A display the user sees is an output of the program, like a log: in a private run it may
show only what is the same on neighbouring datasets, except time (below).  So:

* *Counts whose sequence is public* are shown: iterations t of T of DP-GD, DP-SGD,
  Frank–Wolfe, mirror descent and dual Frank–Wolfe (T is calibrated from declared
  constants; every iteration runs, whatever the data), a benchmark's seeds and ε values, the
  enumerated total of the grouped oracle (read from the schema).  Such a tracker is
  ``track(..., counts="public")``.
* *Counts whose sequence depends on the data* are hidden in a private run.  The grouped
  oracle (:mod:`dpopt.backends.highs_grouped`) prunes a point when an LP bound computed
  from the data exceeds the incumbent: how many points are pruned, how many MIPs are
  solved, the incumbent's value and the gap are data-dependent numbers.  Even a plain
  "points visited i/N" counter would leak them, although every point is visited: pruned
  points pass in microseconds and solved ones in seconds, so the counter's jumps spell out
  which and how many points were pruned.  A ``counts="data"`` tracker (the grouped
  oracle's) therefore shows, in a private run, only its public label with the public
  total, a spinner and the elapsed time; its count, phases and values appear only with
  diagnostics on.
* *Values* (``advance(incumbent=..., pruned=...)``, :meth:`Tracker.note`) appear only with
  diagnostics on.
* *Diagnostics on* means: inside a private run that keeps diagnostics
  (``run(..., keep_diagnostics=True)``, ``dpopt solve --diagnostics``; the run's outcome
  is then NOT private anyway), or outside any private run (a direct backend call or a
  benchmark's non-private baseline: its caller gets the full solver record back) while no
  private run is under way in the process (code without a scope in a thread that a private
  run started must not count as outside it).
  :func:`dpopt.mechanisms.pipeline.run_private` opens the scope with :func:`private_run`.
* *Nested private runs* (the candidates of :class:`~dpopt.mechanisms.selection.PrivateSelection`)
  draw nothing unless diagnostics are on for the outer and the inner run: the number of
  candidate runs K is secret (the random-stopping guarantee holds only while K is
  hidden), and one line per candidate would show it.

Time.  The elapsed-time column, the pace of a counter and the moment a line appears or
disappears depend on the data, as does the process's run time, which private mode does not
hide (anyone who can watch the process can time it, and its phases).  The display shows
this same side channel, no count or value of its own that depends on the data; it is
transient (erased when the run ends, leaving no number in the terminal's scrollback), it is
never written to a file, and no elapsed time ever goes into a Release, its JSON or the
CLI's output (``dpopt solve`` prints the wall time only under ``--diagnostics``, marked NOT
private).  Whoever must hide the run time from an observer hides the process, not only
the display (``--quiet``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, Task, TaskID
    from rich.text import Text

__all__ = ["OFF", "THROTTLE", "Tracker", "counted", "in_private_run", "is_enabled", "private_run", "show_progress", "track"]

#: seconds between two pushes of a count to the display
THROTTLE = 0.1

T = TypeVar("T")
Counts = Literal["public", "data"]


class _Display:
    """The process-wide switch and the one live rich display shared by all open trackers."""

    def __init__(self) -> None:
        self.enabled = False
        self.console: Console | None = None  # None: rich's stderr console, made when first needed
        self.progress: Progress | None = None
        self.users = 0
        self.private_runs = 0  # private runs under way in any thread of the process
        self.lock = threading.Lock()

    def target(self) -> Console:
        if self.console is None:
            from rich.console import Console

            self.console = Console(stderr=True)
        return self.console

    def acquire(self, console: Console) -> Progress | None:
        """The live display (started by its first user); None if rich cannot start one."""
        with self.lock:
            if self.progress is None:
                try:
                    progress = _new_progress(console)
                    progress.start()
                except Exception:  # noqa: BLE001 — e.g. another live display on this console
                    return None
                self.progress = progress
            self.users += 1
            return self.progress

    def release(self) -> None:
        with self.lock:
            self.users -= 1
            if self.users == 0 and self.progress is not None:
                progress, self.progress = self.progress, None
                progress.stop()


_display = _Display()


@dataclass(frozen=True)
class _Scope:
    """Where the current code runs: inside a private run or not."""

    diagnostics: bool  # values and data-dependent counts may be shown
    muted: bool  # nothing may be drawn (a nested private run)


#: outside any private run: a direct, non-private call (its caller gets the full record)
_OUTSIDE = _Scope(diagnostics=True, muted=False)
#: no scope while a private run is under way somewhere (e.g. a thread started by one): fail safe
_UNKNOWN = _Scope(diagnostics=False, muted=False)
_scope: ContextVar[_Scope | None] = ContextVar("dpopt_progress_scope", default=None)


class show_progress:  # noqa: N801 — a function-like switch that is also a context manager
    """Turn the progress display on or off; as a context manager, only inside the block.

    Parameters
    ----------
    enabled : bool
        Draw progress (on a terminal only; see the module docstring).
    console : rich.console.Console, optional
        Where to draw; by default the current one (initially rich's stderr console).

    Examples
    --------
    >>> import dpopt as dp
    >>> with dp.show_progress(False):
    ...     pass
    """

    def __init__(self, enabled: bool = True, *, console: Console | None = None) -> None:
        self._previous = (_display.enabled, _display.console)
        _display.enabled = bool(enabled)
        if console is not None:
            _display.console = console

    def __enter__(self) -> show_progress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _display.enabled, _display.console = self._previous


def is_enabled() -> bool:
    """Whether the display is switched on (it may still draw nothing: not a terminal)."""
    return _display.enabled


class Tracker:
    """One line of the display; a no-op when the display is off.

    Attributes
    ----------
    on : bool
        The line is drawn.
    counting : bool
        ``advance`` counts are shown (always for public counts; data-dependent ones only
        with diagnostics on).
    detailed : bool
        Values passed to ``advance``/``note`` are shown (diagnostics on).
    """

    __slots__ = ("on", "counting", "detailed", "_progress", "_task", "_done", "_next", "_notes")

    def __init__(self, progress: Progress | None = None, task: TaskID | None = None, *,
                 counting: bool = False, detailed: bool = False) -> None:
        self.on = progress is not None
        self.counting = self.on and counting
        self.detailed = self.on and detailed
        self._progress = progress
        self._task = task
        self._done = 0
        self._next = 0.0
        self._notes: dict[str, Any] = {}

    def advance(self, n: int = 1, **values: Any) -> None:
        """Count ``n`` units done; ``values`` (e.g. an incumbent) are shown only with diagnostics."""
        if not self.counting:
            return
        self._done += n
        if values and self.detailed:
            self._notes.update(values)
        now = time.monotonic()
        if now >= self._next:
            self._next = now + THROTTLE
            self._push()

    def note(self, **values: Any) -> None:
        """Show data-dependent ``values`` next to the line (only with diagnostics on)."""
        if self.detailed:
            self._notes.update(values)
            self._push()

    def phase(self, description: str, total: int | None) -> None:
        """Start a new phase of the same work with its own count (hidden with the count)."""
        if not self.counting:
            return
        assert self._progress is not None and self._task is not None
        self._done = 0
        self._progress.update(self._task, description=description, total=total, completed=0)

    def close(self) -> None:
        """Draw the final count once and remove the line (idempotent)."""
        if not self.on:
            return
        self.on = self.counting = self.detailed = False
        assert self._progress is not None and self._task is not None
        try:
            self._push(refresh=True)
            self._progress.remove_task(self._task)
        finally:
            _display.release()

    def _push(self, refresh: bool = False) -> None:
        assert self._progress is not None and self._task is not None
        note = "  ".join(f"{k}={_fmt(v)}" for k, v in self._notes.items())
        self._progress.update(self._task, completed=self._done, note=note, refresh=refresh)

    def __enter__(self) -> Tracker:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


#: the tracker of every call made while the display is off
OFF = Tracker()


def track(description: str, total: int | None = None, *, counts: Counts = "public") -> Tracker:
    """Open a line of the display (use as a context manager, or ``close()`` it).

    Parameters
    ----------
    description : str
        A public label (no data-dependent values: it is always shown).
    total : int, optional
        The public number of units; None for a spinner.
    counts : {"public", "data"}
        Whether the sequence of ``advance`` calls is the same on neighbouring datasets
        ("public") or not ("data": shown only with diagnostics on; module docstring).

    Returns
    -------
    Tracker
        :data:`OFF` when the display is off, muted, or not on a terminal.
    """
    if not _display.enabled:
        return OFF
    scope = _scope.get() or (_UNKNOWN if _display.private_runs else _OUTSIDE)
    console = _display.target()
    if scope.muted or not console.is_terminal:
        return OFF
    progress = _display.acquire(console)
    if progress is None:
        return OFF
    counting = counts == "public" or scope.diagnostics
    task = progress.add_task(description, total=total if counting else None, note="")
    return Tracker(progress, task, counting=counting, detailed=scope.diagnostics)


@overload
def counted(items: int, description: str) -> Iterable[int]: ...
@overload
def counted(items: Sequence[T], description: str) -> Iterable[T]: ...
def counted(items: int | Sequence[Any], description: str) -> Iterable[Any]:
    """``range(items)`` (or ``items``) with a public count on the display.

    ``for t in counted(T, "DP-GD iterations")``: with the display off this *is* ``range(T)``.
    The count must be public (the same on neighbouring datasets, e.g. a calibrated T).
    """
    seq = range(items) if isinstance(items, int) else items
    if not _display.enabled:
        return seq
    return _count(seq, description)


def _count(seq: Sequence[T], description: str) -> Iterator[T]:
    with track(description, len(seq)) as bar:
        for item in seq:
            yield item
            bar.advance()


def in_private_run() -> bool:
    """Whether the caller runs inside a mechanism's data-touching work (a nested run: the
    candidates of a selection, charged as part of the outer run)."""
    return _scope.get() is not None


@contextmanager
def private_run(name: str, *, diagnostics: bool) -> Iterator[None]:
    """The scope of a mechanism's data-touching work (entered by ``run_private``).

    Inside it, data-dependent counts and values are shown only when ``diagnostics`` is on
    (and was on for every enclosing private run); a nested run draws nothing without
    diagnostics.  The run itself gets a spinner line labelled ``name`` (public).
    """
    outer = _scope.get()
    if outer is None:
        scope = _Scope(diagnostics=bool(diagnostics), muted=False)
    else:
        shown = bool(diagnostics) and outer.diagnostics
        scope = _Scope(diagnostics=shown, muted=outer.muted or not shown)
    token = _scope.set(scope)
    with _display.lock:
        _display.private_runs += 1
    try:
        with track(f"{name}: private run"):
            yield
    finally:
        with _display.lock:
            _display.private_runs -= 1
        _scope.reset(token)


def _fmt(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _new_progress(console: Console) -> Progress:
    from rich.progress import (
        BarColumn,
        Progress,
        ProgressColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class CountColumn(ProgressColumn):
        """``done/total`` for a counted line, nothing for a spinner line."""

        def render(self, task: Task) -> Text:
            return Text("" if task.total is None else f"{int(task.completed)}/{int(task.total)}")

    return Progress(
        SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(bar_width=24), CountColumn(),
        TimeElapsedColumn(), TextColumn("{task.fields[note]}", markup=False),
        console=console, transient=True, refresh_per_second=1 / THROTTLE,
    )
