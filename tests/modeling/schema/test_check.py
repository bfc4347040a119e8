"""Checking one's own table against a schema: Schema.check (a NOT private report for the curator),
errors that name the column and the file with a did-you-mean, and clip=False refusing instead of
silently clipping."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DataError
from dpopt.modeling.schema import Binary, Categorical, Fill, Numeric, Schema, SchemaCheck

pd = pytest.importorskip("pandas")

SCHEMA = Schema({"age": Numeric(0, 60, grid=1), "score": Numeric(0, 1, grid="1/4", missing=Fill(0)),
                 "sex": Categorical(["F", "M"]), "union": Binary()})


def table(**overrides: object) -> pd.DataFrame:
    cols = {"age": [20, 142, 30.5, 40], "score": [0.25, 0.3, None, 2.0], "sex": ["F", "X", None, "M"],
            "union": [1, 0, 0.5, 1], "y": ["no", "yes", "no", "yes"]}
    cols.update(overrides)
    return pd.DataFrame(cols)


# ---- Schema.check ----------------------------------------------------------------------------------


def test_check_counts_what_the_mapping_would_do_per_column():
    report = SCHEMA.check(table())
    assert isinstance(report, SchemaCheck) and report.n == 4
    age, score, sex, union = (report[name] for name in ("age", "score", "sex", "union"))
    assert (age.clipped, age.off_grid, age.missing) == (1, 1, 0)   # 142 outside [0, 60]; 30.5 off the grid
    assert (score.missing, score.clipped, score.off_grid) == (1, 1, 1)
    assert (sex.unseen, sex.missing) == (1, 1)                      # "X" undeclared; None missing
    assert union.off_grid == 1
    assert report.refusals == ["column 'sex' has missing entries and declares no missing-value policy"]
    assert score.refused == ""  # a missing score has a declared policy


def test_check_says_it_is_not_private_and_charges_nothing():
    ledger = dp.default_ledger()
    before = len(ledger.charges)
    report = SCHEMA.check(table())
    assert "NOT PRIVATE" in repr(report) and report.summary().startswith("NOT PRIVATE")
    assert "NOT private" in (Schema.check.__doc__ or "") and "NOT PRIVATE" in (SchemaCheck.__doc__ or "")
    assert report.to_dict()["private"] is False
    assert len(ledger.charges) == before


def test_check_agrees_with_what_the_dataset_refuses():
    """Every refusal the report predicts is what Dataset.from_frame refuses, and a clean report builds."""
    clean = table(sex=["F", "X", "M", "M"])
    assert SCHEMA.check(clean).refusals == []
    dp.Dataset.from_frame(clean, SCHEMA, label="y", classes=["no", "yes"])
    with pytest.raises(DataError, match="column 'sex'"):
        dp.Dataset.from_frame(table(), SCHEMA, label="y", classes=["no", "yes"])
    absent = SCHEMA.check(table().rename(columns={"age": "Age"}))
    assert not absent["age"].present and "did you mean 'Age'" in absent["age"].refused
    text = SCHEMA.check(table(age=["20", "old", np.inf, 40]))
    assert text["age"].not_numeric == 2 and "not finite numbers" in text["age"].refused


# ---- errors name the column and the file -----------------------------------------------------------


def test_an_unknown_column_or_label_gets_a_did_you_mean_and_no_value():
    with pytest.raises(DataError) as refused:
        dp.Dataset.from_frame(table(sex=["F", "M", "F", "M"]).rename(columns={"union": "unoin"}), SCHEMA,
                              label="y", classes=["no", "yes"])
    assert "no column 'union'" in str(refused.value) and "did you mean 'unoin'?" in str(refused.value)
    with pytest.raises(DataError, match="no label column 'income'; did you mean 'incom'"):
        dp.Dataset.from_frame(table(sex=["F", "M", "F", "M"]).rename(columns={"y": "incom"}), SCHEMA,
                              label="income", classes=["no", "yes"])
    with pytest.raises(DataError) as far:
        dp.Dataset.from_frame(table().drop(columns="union"), SCHEMA, label="y", classes=["no", "yes"])
    assert "did you mean" not in str(far.value)  # nothing close: no guess


def test_from_csv_prefixes_the_file_to_every_refusal(tmp_path: Path):
    path = tmp_path / "people.csv"
    table(sex=["F", "M", "F", "M"]).rename(columns={"score": "scor"}).to_csv(path, index=False)
    with pytest.raises(DataError) as refused:
        dp.Dataset.from_csv(path, SCHEMA, label="y", classes=["no", "yes"])
    message = str(refused.value)
    assert message.startswith(f"{path}: ") and "'score'" in message and "did you mean 'scor'" in message


# ---- clip=False with a schema ----------------------------------------------------------------------


def test_clip_false_refuses_a_value_outside_its_declared_range_before_the_charge():
    """clip=False used to change nothing with a schema (142 declared [0, 60] became 60 without a word);
    it now refuses, naming the column and its declared range, never the value."""
    frame = table(sex=["F", "M", "F", "M"])
    mapped = dp.Dataset.from_frame(frame, SCHEMA, label="y", classes=["no", "yes"], scale=False)
    assert mapped.X[1, 0] == 60.0  # the default: mapped onto the declaration
    with pytest.raises(DataError) as refused:
        dp.Dataset.from_frame(frame, SCHEMA, label="y", classes=["no", "yes"], clip=False)
    message = str(refused.value)
    assert "'age' [0, 60]" in message and "'score' [0, 1]" in message and "not private" in message
    assert "142" not in message and "'union'" not in message


def test_clip_false_accepts_in_range_rows_and_still_rounds_to_the_grid():
    frame = table(age=[20, 60, 30.4, 0], score=[0.25, 0.3, None, 1.0], sex=["F", "M", "F", "M"],
                  union=[1, 0, 1, 1])
    data = dp.Dataset.from_frame(frame, SCHEMA, label="y", classes=["no", "yes"], clip=False, scale=False)
    assert data.X[:, 0].tolist() == [20, 60, 30, 0] and data.X[1, 1] == 0.25  # the grid is the precision
    arrays = dp.Dataset(np.array([[0.0, 1.0]]), [1.0], schema=Schema.uniform(2, Numeric(0, 1, grid="1/2")),
                        clip=False)
    assert arrays.X.tolist() == [[0.0, 1.0]]
    with pytest.raises(DataError, match="'x1' \\[0, 1\\]"):
        dp.Dataset(np.array([[0.0, 1.5]]), [1.0], schema=Schema.uniform(2, Numeric(0, 1, grid="1/2")), clip=False)
