"""CP-SAT solves in a child process, so that a crash inside OR-Tools fails closed.

OR-Tools 9.15 can abort the whole process from inside CP-SAT's presolve: an
uncaught ``std::out_of_range`` (``absl::btree_map::at``) in
``SolutionCrush``, nondeterministic across runs of the same model (or-tools
issues 5091 and 5288).  It happened here once, in ``dpopt bench opdisc`` at
n = 1000, and killed the benchmark and everything it had measured; the same
solve ran cleanly three times afterwards.  A C++ ``terminate`` cannot be caught
in Python, so every CP-SAT solve of the ``cpsat`` backend runs in one
long-lived child process.  If the child dies, the solve returns
``crashed=True``, the backend reports ``OracleStatus.ERROR`` (uncertified, so
mechanisms release nothing and still charge the ledger), and the next solve
starts a new child.

The child is a fresh ``python`` running :func:`_serve`, talking pickled,
length-prefixed messages over pipes, not :mod:`multiprocessing`: its ``spawn``
and ``forkserver`` start methods re-import the user's ``__main__``, which would
re-run a model script written without a ``__main__`` guard, and ``fork`` would
copy a process whose solver threads are running.  The model crosses in
protobuf text format (the Python wrappers of OR-Tools 9.15 do not pickle), and
the child writes its C++ log output to stderr, keeping the protocol pipe clean.
It runs the callbacks the backend's certificate needs: stop at the first
solution at or below a threshold, and stop once the proven bound exceeds
another (recording every bound it saw).
"""

from __future__ import annotations

import atexit
import math
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

__all__ = ["IsolatedResult", "shutdown", "solve_isolated"]

#: seconds the parent waits beyond the solver's own time limit before it kills the child
GRACE_SECONDS = 60.0

_lock = threading.Lock()
_child: subprocess.Popen[bytes] | None = None
_HEADER = struct.Struct("<Q")


@dataclass(frozen=True)
class IsolatedResult:
    """What the parent learns of one child solve (mirrors the CpSolver attributes it uses).

    ``status`` is a ``cp_model.CpSolverStatus`` (``UNKNOWN`` when the child died);
    ``values`` maps proto variable indices to their values in the solution found.
    """

    status: Any
    status_name: str
    objective_value: float = math.nan
    best_objective_bound: float = math.nan
    bounds_seen: tuple[float, ...] = ()
    values: dict[int, int] = field(default_factory=dict)
    crashed: bool = False
    message: str = ""

    def value(self, var: Any) -> int:
        """The value of ``var`` (an IntVar of the solved model) in the child's solution."""
        return self.values[int(var.index)]


def _child_solve(model_text: str, params_text: str, indices: Sequence[int], stop_at_or_below: int | None,
                 stop_when_bound_above: int | None) -> tuple[int, str, float, float, list[float], list[int]]:
    """Runs in the child: rebuild the model and parameters, solve, return plain values."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    model.proto.parse_text_format(model_text)
    solver = cp_model.CpSolver()
    solver.parameters.parse_text_format(params_text)
    bounds: list[float] = []
    if stop_when_bound_above is not None:
        def on_bound(bound: float) -> None:
            bounds.append(bound)
            if bound > stop_when_bound_above:
                solver.stop_search()

        solver.best_bound_callback = on_bound
    callback = None
    if stop_at_or_below is not None:
        threshold = stop_at_or_below

        class StopAtOrBelow(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                if self.objective_value <= threshold:
                    self.stop_search()

        callback = StopAtOrBelow()
    status = solver.solve(model, callback)
    has_solution = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    values = [int(solver.value(model.get_int_var_from_proto_index(i))) for i in indices] if has_solution else []
    objective = float(solver.objective_value) if has_solution else math.nan
    return int(status), solver.status_name(status), objective, float(solver.best_objective_bound), bounds, values


def _write(stream: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the other end closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read(stream: IO[bytes]) -> Any:
    (size,) = _HEADER.unpack(_read_exact(stream, _HEADER.size))
    return pickle.loads(_read_exact(stream, size))  # noqa: S301 — our own child's answer


def _start_child() -> subprocess.Popen[bytes]:
    code = "from dpopt.backends.cpsat_isolated import _serve; _serve()"  # not -m: no second copy of the module
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # where dpopt lives
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            close_fds=True, env=env)


def _discard_child() -> None:
    """Kill the child (if any) and forget it; the next solve starts a new one."""
    global _child
    proc, _child = _child, None
    if proc is None:
        return
    for stream in (proc.stdin, proc.stdout):  # EOF on stdin ends a healthy child's loop
        if stream is not None:
            stream.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def shutdown() -> None:
    """Stop the child process (it restarts on demand)."""
    with _lock:
        _discard_child()


def _exchange(request: tuple[Any, ...], wait: float | None) -> Any:
    """Send one request to the child and return its answer (raises on death or timeout)."""
    global _child
    if _child is None or _child.poll() is not None:
        _discard_child()
        _child = _start_child()
        atexit.register(shutdown)  # idempotent: shutdown() of a stopped child does nothing
    proc = _child
    assert proc.stdin is not None and proc.stdout is not None
    _write(proc.stdin, request)
    if wait is not None and hasattr(select, "select"):
        ready, _, _ = select.select([proc.stdout], [], [], wait)
        if not ready:
            raise TimeoutError("the CP-SAT child did not answer in time")
    return _read(proc.stdout)


def solve_isolated(model: Any, parameters: Any, variables: Sequence[Any], *,
                   stop_at_or_below: int | None = None, stop_when_bound_above: int | None = None,
                   ) -> IsolatedResult:
    """Solve ``model`` (a ``cp_model.CpModel``) with ``parameters`` (``SatParameters``) in the child.

    Parameters
    ----------
    model, parameters
        The model and the solver parameters, as the parent built them.
    variables
        The IntVars whose values the caller reads from the solution.
    stop_at_or_below
        Stop at the first solution with objective ≤ this value.
    stop_when_bound_above
        Stop once the proven objective bound exceeds this value; every bound seen is returned.

    Returns
    -------
    IsolatedResult
        With ``crashed=True`` (and status UNKNOWN) when the child died or hung past the
        time limit plus :data:`GRACE_SECONDS`.
    """
    from ortools.sat.python import cp_model

    limit = float(parameters.max_time_in_seconds)
    wait = None if not math.isfinite(limit) or limit > 1e8 else limit + GRACE_SECONDS
    indices = [int(v.index) for v in variables]
    request = (str(model.proto), str(parameters), indices, stop_at_or_below, stop_when_bound_above)
    with _lock:
        try:
            code, name, objective, bound, seen, values = _exchange(request, wait)
        except (EOFError, OSError, TimeoutError, pickle.UnpicklingError, struct.error) as exc:
            _discard_child()
            what = "hung past its time limit" if isinstance(exc, TimeoutError) else "died (an OR-Tools crash)"
            return IsolatedResult(cp_model.UNKNOWN, "CRASHED", crashed=True,
                                  message=f"the CP-SAT child process {what}; nothing from it is used")
    return IsolatedResult(cp_model.CpSolverStatus(code), name, objective, bound, tuple(seen),
                          dict(zip(indices, values, strict=False)))


def _serve() -> None:
    """The child's loop: answer requests on the protocol pipe until the parent closes it."""
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # solver logs must not corrupt the protocol
    requests = sys.stdin.buffer
    while True:
        try:
            request = _read(requests)
        except EOFError:
            return
        _write(protocol_out, _child_solve(*request))

