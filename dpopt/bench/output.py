"""Writing a benchmark's results: runs.csv, summary.json and table.txt in one folder."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any


def _clean(v: Any) -> Any:
    """JSON-ready: non-finite floats become null, keys become strings."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def write_outputs(out: Path, run_type: type, runs: list[Any], summary: dict[str, Any], text: str) -> None:
    """Write ``runs`` (dataclass instances of ``run_type``) as CSV, ``summary`` as JSON and ``text``."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "runs.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=[f.name for f in fields(run_type)])
        w.writeheader()
        for r in runs:
            w.writerow(asdict(r))
    (out / "summary.json").write_text(json.dumps(_clean(summary), indent=2) + "\n")
    (out / "table.txt").write_text(text + "\n")
