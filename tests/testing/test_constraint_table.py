"""The docs' table of which mechanisms take which constraints is the one the code generates.

docs/declaring.md shows :func:`dpopt.testing.constraint_table.constraint_table` between two
markers; a change to a mechanism's checks or a set's declarations fails here until the page is
regenerated (``python -m dpopt.testing.constraint_table --write docs/declaring.md``).  The table
is also checked against itself: a cell it marks as accepted really releases a point in the set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import dpopt as dp
from dpopt.testing.constraint_table import COLUMNS, END, ROWS, START, constraint_table, public_data

PAGE = Path(__file__).resolve().parents[2] / "docs" / "declaring.md"


def test_the_page_shows_the_generated_table() -> None:
    text = PAGE.read_text()
    shown = text[text.index(START) + len(START):text.index(END)].strip()
    assert shown == constraint_table(), "regenerate: python -m dpopt.testing.constraint_table --write docs/declaring.md"


def test_an_accepted_cell_releases_inside_the_set_and_a_refused_one_charges_nothing() -> None:
    rows = constraint_table().splitlines()[2:]
    data = public_data()
    label, make = ROWS[5]  # [w >= 0, norm1(w) <= r]: a mix of accepted and refused cells
    cells = [c.strip() for c in rows[5].strip("|").split("|")][1:]
    assert label in rows[5] and "✓" in cells and "—" in cells
    for (name, build), cell in zip(COLUMNS, cells, strict=True):
        w = dp.Variable(4)
        loss = dp.SquaredLoss(data, w) if name == "AdaSSP" else dp.LogisticLoss(data, w)
        problem = dp.Problem(loss, constraint=make(w), regularizer=dp.L2Squared(w, 0.1))
        mechanism = build()
        try:
            theta = mechanism.run(problem, seed=0).theta
        except dp.errors.DpoptError:
            assert cell == "—" and mechanism.ledger.charges == (), name
            continue
        assert cell.startswith("✓") and problem.constraint.contains(theta, tol=1e-9), name
        assert np.all(theta >= 0.0)
