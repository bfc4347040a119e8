"""The progress display (dpopt.progress): off unless asked for and on a terminal, public counts
only in a private run, data-dependent counts and values only with diagnostics, --quiet."""

from __future__ import annotations

import io
import re
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

import dpopt as dp
from dpopt import progress
from dpopt.cli.main import main
from dpopt.datasets import make_classification

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _terminal() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, force_terminal=True, color_system=None, width=220), buf


def _text(buf: io.StringIO) -> str:
    return ANSI.sub("", buf.getvalue())


def _logistic() -> dp.Problem:
    data, _ = make_classification(200, 4, seed=0)
    theta = dp.Variable(4)
    return dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 5.0))


def _dpgd(steps: int = 37) -> dp.DPGradientDescent:
    return dp.DPGradientDescent(1.0, 1e-6, steps=steps, ledger=dp.Ledger())


# ---------------------------------------------------------------------------
# off, not a terminal
# ---------------------------------------------------------------------------


def test_off_by_default_loops_are_plain_ranges_and_nothing_is_drawn():
    assert not progress.is_enabled()
    assert progress.counted(5, "x") == range(5)
    assert progress.track("x", 3) is progress.OFF
    console, buf = _terminal()
    with progress.show_progress(False, console=console):
        _dpgd().run(_logistic(), seed=0)
    assert buf.getvalue() == ""


def test_not_a_terminal_draws_nothing():
    buf = io.StringIO()
    with progress.show_progress(console=Console(file=buf)):  # a file, not a terminal
        assert progress.track("x", 3) is progress.OFF
        _dpgd().run(_logistic(), seed=0)
    assert buf.getvalue() == ""
    with progress.show_progress():  # rich's stderr console: pytest captures stderr
        assert progress.track("x", 3) is progress.OFF


def test_the_switch_is_a_call_and_a_context_manager_that_restores():
    with progress.show_progress():
        assert progress.is_enabled()
        with progress.show_progress(False):
            assert not progress.is_enabled()
        assert progress.is_enabled()
        progress.show_progress(False)  # a plain call: off until the block's end restores
        assert not progress.is_enabled()
    assert not progress.is_enabled()


# ---------------------------------------------------------------------------
# what is shown
# ---------------------------------------------------------------------------


def test_dp_gd_shows_its_iterations_out_of_t():
    console, buf = _terminal()
    with progress.show_progress(console=console):
        release = _dpgd(37).run(_logistic(), seed=0)
    text = _text(buf)
    assert "DPGradientDescent iterations" in text and "37/37" in text
    assert "DPGradientDescent: private run" in text
    ref = _dpgd(37).run(_logistic(), seed=0)  # the display changes nothing in the run
    np.testing.assert_array_equal(release.theta, ref.theta)


def test_counted_loops_count_public_items_and_close_when_left_early():
    console, buf = _terminal()
    with progress.show_progress(console=console):
        assert list(progress.counted(["a", "b", "c"], "letters")) == ["a", "b", "c"]
        for i in progress.counted(10, "early exit"):
            if i == 2:
                break
        assert progress._display.users == 0 and progress._display.progress is None
    text = _text(buf)
    assert "letters" in text and "3/3" in text and "early exit" in text


def _grouped_problem() -> dp.DiscreteProblem:
    rng = np.random.default_rng(0)
    n = 40
    X = np.empty((n, 3))
    X[:, 0] = rng.integers(0, 2, size=n)
    X[:, 1:] = rng.integers(-4, 5, size=(n, 2)) / 4.0
    y = rng.choice([-1.0, 1.0], size=n)
    schema = dp.Schema([("b", dp.Binary()), ("x1", dp.Numeric(-1, 1, grid="1/4")),
                        ("x2", dp.Numeric(-1, 1, grid="1/4"))])
    data = dp.Dataset(X, y, schema=schema)
    return dp.DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(3), dp.IntegerGrid(1.0, -2, 2)))


def _opdisc_display(keep_diagnostics: bool) -> tuple[str, dp.Release]:
    console, buf = _terminal()
    with progress.show_progress(console=console):
        release = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(
            _grouped_problem(), solver="highs-grouped", seed=3, keep_diagnostics=keep_diagnostics)
    return _text(buf), release


def test_grouped_oracle_private_display_shows_no_data_dependent_number():
    if not dp.backends.get("highs-grouped").available():
        pytest.skip("highs-grouped: highspy not installed")
    private, _ = _opdisc_display(False)
    shown, release = _opdisc_display(True)
    result = release.diagnostics.oracle_results[0]
    total = int(re.search(r"(\d+) enumerated points", result.message).group(1))
    pruned = int(re.search(r"(\d+) points pruned", result.message).group(1))
    mips = int(re.search(r"(\d+) point MIPs solved", result.message).group(1))
    incumbent = f"{result.primal_bound:.6g}"
    assert pruned > 0 and len(incumbent) >= 4  # the values below are meaningful
    # with diagnostics: the points, the pruned count and the incumbent
    assert f"{total}/{total}" in shown and "MIP pass" in shown
    assert f"pruned={pruned}" in shown and f"mips={mips}" in shown and f"incumbent={incumbent}" in shown
    # private: the public total and a spinner, nothing else about the search
    assert f"highs-grouped: {total} enumerated points" in private and "OPDisc: private run" in private
    for leak in ("pruned", "mips", "incumbent", incumbent, f"/{total}", "MIP pass"):
        assert leak not in private, leak


def test_nested_private_runs_draw_nothing_without_diagnostics():
    """PrivateSelection's candidate count K is secret: its candidates' lines are not drawn."""
    grid = [{"steps": 5}, {"steps": 9}]

    def build(params, budget):
        return dp.DPGradientDescent(budget.epsilon, budget.delta, steps=params["steps"], ledger=dp.Ledger())

    def run(keep: bool) -> str:
        console, buf = _terminal()
        sel = dp.PrivateSelection(1.0, 1e-6, candidates=grid, build=build, stopping="papernot-steinke",
                                  expected_trials=3, ledger=dp.Ledger())
        with progress.show_progress(console=console):
            sel.run(_logistic(), seed=1, keep_diagnostics=keep)
        return _text(buf)

    private = run(False)
    assert "PrivateSelection: private run" in private
    assert "DPGradientDescent" not in private
    assert "DPGradientDescent iterations" in run(True)


def test_data_counts_are_hidden_in_a_thread_without_a_scope_while_a_private_run_is_under_way():
    console, _ = _terminal()
    seen: dict[str, bool] = {}

    def probe(key: str) -> None:
        with progress.track("probe", 4, counts="data") as bar:
            seen[key] = bar.counting or bar.detailed

    with progress.show_progress(console=console):
        probe("outside")
        with progress.private_run("X", diagnostics=False):
            probe("inside")
            t = threading.Thread(target=probe, args=("thread",))
            t.start()
            t.join()
        with progress.private_run("X", diagnostics=True):
            probe("diagnostics")
    assert seen == {"outside": True, "inside": False, "thread": False, "diagnostics": True}


# ---------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------

_MODEL = """
import dpopt as dp
from dpopt.datasets import make_classification

data, _ = make_classification(200, 4, seed=0)
theta = dp.Variable(4)
problem = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 5.0))
mechanism = dp.DPGradientDescent(1.0, 1e-6, steps=23)
"""


def test_cli_solve_shows_progress_on_a_terminal_and_quiet_silences_it(tmp_path: Path, capsys):
    model = tmp_path / "model.py"
    model.write_text(textwrap.dedent(_MODEL))
    console, buf = _terminal()
    with progress.show_progress(False, console=console):  # the CLI turns it on itself
        assert main(["solve", str(model), "--seed", "1"]) == 0
        assert "23/23" in _text(buf)
        buf.seek(0)
        buf.truncate()
        assert main(["solve", str(model), "--seed", "1", "--quiet"]) == 0
        assert buf.getvalue() == ""
        assert main(["bench", "--quiet", "--list"]) == 0
    assert not progress.is_enabled()
    out = capsys.readouterr().out
    assert out.count("DP") >= 2  # both runs printed their release
