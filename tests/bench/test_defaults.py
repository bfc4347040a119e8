"""`dpopt bench defaults` runs on a small setting, and its candidates vary the real defaults."""

import inspect
import json

import dpopt as dp
from dpopt.bench import get
from dpopt.bench.defaults import CANDIDATES, summarize


def test_every_candidate_changes_one_default_of_dpgd():
    """The comparison is against DPGradientDescent's actual defaults: each candidate sets one
    keyword of its signature to a value other than the default."""
    defaults = {k: p.default for k, p in inspect.signature(dp.DPGradientDescent).parameters.items()}
    defaults["steps"] = dp.DPGradientDescent(1.0, 1e-6).plan(_problem()).parameters["steps"]
    assert CANDIDATES["default"] == {}
    for name, kw in CANDIDATES.items():
        if name == "default":
            continue
        ((key, value),) = kw.items()
        assert key in defaults and value != defaults[key], name


def _problem():
    import numpy as np

    X = np.random.default_rng(0).uniform(-0.5, 0.5, (100, 3))
    data = dp.Dataset(X, np.sign(X[:, 0]), x_bound=1.0)
    th = dp.Variable(3)
    return dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 10.0))


def test_summary_is_relative_to_the_default():
    from dpopt.bench.defaults import Run

    runs = [Run("t", "default", 1.0, 0, 0.8), Run("t", "default", 2.0, 0, 0.9),
            Run("t", "x", 1.0, 0, 0.85), Run("t", "x", 2.0, 0, 0.97)]
    rows = {r["candidate"]: r for r in summarize(runs)}
    assert rows["default"]["mean_difference"] == 0.0 and not rows["default"]["better"]
    assert abs(rows["x"]["mean_difference"] - 0.06) < 1e-12 and rows["x"]["cells"] == 2


def test_defaults_bench_small(tmp_path, capsys):
    code = get("defaults").main(["--tables", "breast-cancer,synthetic-b", "--samples", "2000", "--seeds", "2",
                                 "--epsilons", "1", "--candidates", "steps=25", "--out", str(tmp_path)])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    names = [c["candidate"] for c in summary["candidates"]]
    assert names == ["default", "steps=25"]
    assert summary["candidates"][1]["cells"] == 2
    assert "wrote" in capsys.readouterr().out
    assert get("defaults").main(["--candidates", "magic", "--out", str(tmp_path)]) == 2
