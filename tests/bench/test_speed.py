"""``dpopt bench speed`` runs on a small setting (a smoke test, not a timing) and times the documented encodings."""

import numpy as np

# -- the benchmark -------------------------------------------------------------------------


def test_speed_benchmark_is_registered_and_writes_its_rows(tmp_path, capsys):
    import json

    from dpopt import bench

    assert "speed" in bench.names()
    out = tmp_path / "speed.json"
    code = bench.get("speed").main(["--repeats", "1", "--n", "1500", "--encoding", "paper23", "--no-diffprivlib",
                                    "--json", str(out)])
    assert code == 0
    rows = json.loads(out.read_text())
    assert [(r["data"], r["d"]) for r in rows] == [("adult-paper23", 23)] * 3 + [("synthetic-104", 104)] * 3
    assert [r["problem"] for r in rows[:3]] == ["L2Squared", "L2Ball(10) + L2Squared", "L2Ball(10)"]
    assert all(r["nonprivate_s"] > 0 and r["private_s"] > 0 and r["diffprivlib_s"] is None for r in rows)
    assert "dpopt private s" in capsys.readouterr().out


def test_speed_benchmark_rejects_bad_arguments():
    from dpopt.bench import speed

    assert speed.main(["--repeats", "0"]) == 2
    assert speed.main(["--delta", "1.5"]) == 2
    assert speed.main(["--encoding", "onehot"]) == 2


def test_speed_benchmark_times_the_standard_adult_encoding_by_default():
    from dpopt.bench import speed

    args = speed.build_parser().parse_args(["--n", "200"])
    assert [(name, data.n_features) for name, data in speed.datasets(args)] == [
        ("adult-paper23", 23), ("adult-standard", 109), ("synthetic-104", 104)]
    args = speed.build_parser().parse_args(["--n", "200", "--encoding", "standard"])
    assert [name for name, _ in speed.datasets(args)] == ["adult-standard", "synthetic-104"]


def test_synthetic_rows_have_the_standard_encoding_shape():
    from dpopt.bench.speed import synthetic_onehot

    data = synthetic_onehot(500, seed=1)
    assert data.X.shape == (500, 104) and set(np.unique(data.y)) == {-1.0, 1.0}
    assert np.all(np.linalg.norm(data.X, axis=1) <= 1.0 + 1e-12)
    assert np.all((data.X[:, :98] > 0).sum(axis=1) == 8)  # one entry per one-hot block
