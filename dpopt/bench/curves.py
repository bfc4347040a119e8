"""Privacy–utility curves from a benchmark's summary.json: score against ε, one line per method.

``dpopt bench tables`` and ``dpopt bench linear`` call :func:`write_curves` after writing their
summary, and the documentation build calls it on the summaries stored in ``docs/benchmarks/``
(so the pictures in the docs are drawn from exactly what the commands wrote):

``python -m dpopt.bench.curves SUMMARY.json OUT.png``

Each private method is a line through its mean score per ε with error bars of one standard
deviation over the seeds; each non-private baseline (a record without ε) is a dashed horizontal
line.  ε is on a log axis.  ``dpopt bench tables`` draws one panel per table (accuracy or R²);
``dpopt bench linear`` one panel (accuracy on Adult).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Panel", "main", "panels", "write_curves"]

#: R² below this is drawn at the floor (a method far below the mean predictor would flatten the panel)
R2_FLOOR = -0.5
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


@dataclass(frozen=True)
class Panel:
    """One plot: its title, y label, lines (method → [(ε, mean, sd)]) and baselines (name → score)."""

    title: str
    ylabel: str
    lines: dict[str, list[tuple[float, float, float]]]
    baselines: dict[str, float]
    floor: float | None = None


def _mean_sd(record: dict[str, Any]) -> tuple[float, float]:
    if "score_mean" in record:
        return float(record["score_mean"]), float(record.get("score_sd") or 0.0)
    return float(record["accuracy_mean"]), float(record.get("accuracy_sd") or 0.0)


def _panel(title: str, ylabel: str, records: Sequence[dict[str, Any]], floor: float | None = None) -> Panel:
    lines: dict[str, list[tuple[float, float, float]]] = {}
    baselines: dict[str, float] = {}
    for r in records:
        mean, sd = _mean_sd(r)
        if not math.isfinite(mean):
            continue
        if r.get("epsilon") is None:
            baselines[str(r["method"])] = mean
        else:
            lines.setdefault(str(r["method"]), []).append((float(r["epsilon"]), mean, sd))
    return Panel(title, ylabel, {k: sorted(v) for k, v in lines.items()}, baselines, floor)


def panels(summary: dict[str, Any]) -> list[Panel]:
    """The panels of a summary: one per table (``bench tables``) or one (``bench linear``)."""
    records = summary.get("records", [])
    if "tables" in summary:
        out = []
        for name, info in summary["tables"].items():
            metric = info.get("metric", "accuracy")
            label = "test R²" if metric == "r2" else "test accuracy"
            title = f"{name} (n = {info.get('n_train', '?')}, d = {info.get('d', '?')})"
            out.append(_panel(title, label, [r for r in records if r.get("table") == name],
                              R2_FLOOR if metric == "r2" else None))
        return out
    title = f"Adult, {summary.get('encoding', '')} encoding (n = {summary.get('n_train', '?')})"
    return [_panel(title, "test accuracy", records)]


def write_curves(summary: dict[str, Any], path: Path, *, columns: int = 2) -> Path | None:
    """Draw the summary's panels into ``path`` (PNG); None when matplotlib is not installed.

    Parameters
    ----------
    summary : dict
        A ``summary.json`` of ``dpopt bench tables`` or ``dpopt bench linear``.
    path : Path
        The image to write.
    columns : int
        Panels per row.
    """
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = [p for p in panels(summary) if p.lines or p.baselines]
    if not found:
        return None
    cols = min(columns, len(found))
    rows = math.ceil(len(found) / cols)
    fig = plt.figure(layout="constrained", figsize=(max(4.8 * cols, 8.0), 3.6 * rows + 1.4))
    axes = fig.subplots(rows, cols, squeeze=False)
    names = list(dict.fromkeys(m for p in found for m in (*p.lines, *p.baselines)))
    tab20 = plt.get_cmap("tab20")
    palette = [tab20(k) for k in range(20)]  # 20 distinct colours, then markers tell them apart
    style = {m: (palette[(2 * i) % 20 + (2 * i) // 20 % 2], _MARKERS[i % len(_MARKERS)]) for i, m in enumerate(names)}
    for ax, panel in zip(axes.ravel(), found, strict=False):
        _draw(ax, panel, style)
    for ax in axes.ravel()[len(found):]:
        ax.set_visible(False)
    handles = {label: h for ax in axes.ravel()[:len(found)]
               for h, label in zip(*ax.get_legend_handles_labels(), strict=True)}
    seeds = summary.get("seeds")
    note = f"mean ± sd over {seeds} seeds" if seeds else "mean ± sd over the seeds"
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=min(len(handles), 4),
               frameon=False)
    fig.suptitle(f"test score against ε — {note}; dashed lines: non-private baselines", fontsize=11)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _draw(ax: Any, panel: Panel, style: dict[str, tuple[Any, str]]) -> None:
    top = 1.0
    if panel.floor is not None:  # R²: from the floor to just above the best mean
        means = [p[1] for points in panel.lines.values() for p in points] + list(panel.baselines.values())
        top = min(1.0, max(means, default=1.0)) + 0.05
    for method, points in panel.lines.items():
        eps = [p[0] for p in points]
        low = -math.inf if panel.floor is None else panel.floor
        mean = [max(p[1], low) for p in points]
        # error bars cut at the panel's range (R² far below the floor would fill the panel)
        cut = [panel.floor is not None and p[1] < low for p in points]  # drawn at the floor: no bar
        below = [0.0 if c else min(p[2], m - low) for p, m, c in zip(points, mean, cut, strict=True)]
        above = [0.0 if c else p[2] if panel.floor is None else max(0.0, min(p[2], top - m))
                 for p, m, c in zip(points, mean, cut, strict=True)]
        colour, marker = style[method]
        ax.errorbar(eps, mean, yerr=[below, above], marker=marker, markersize=4, capsize=3, label=method,
                    color=colour)
    for method, value in panel.baselines.items():
        shown = value if panel.floor is None else max(value, panel.floor)
        ax.axhline(shown, linestyle="--", linewidth=1, color=style[method][0], label=method)
    ax.set_xscale("log")
    ticks = sorted({p[0] for points in panel.lines.values() for p in points})
    if ticks:
        from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("ε")
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title, fontsize=10)
    if panel.floor is not None:
        ax.set_ylim(panel.floor - 0.05, top)
    ax.grid(True, alpha=0.3)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dpopt.bench.curves SUMMARY.json OUT.png``: 0, or 2 for a usage error."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m dpopt.bench.curves SUMMARY.json OUT.png", file=sys.stderr)
        return 2
    written = write_curves(json.loads(Path(args[0]).read_text()), Path(args[1]))
    if written is None:
        print("matplotlib is not installed (pip install 'dpopt[bench]'): no figure", file=sys.stderr)
        return 2
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
