"""Test that a pre-data decision reads declarations only (docs/design.md, "Privacy rules").

A decision dpopt takes before the charge (which backend ``solver="auto"`` picks, which
verifier cross-checks it, ...) may read the data's *shape* (n and d are public under
replace-one) but no value.  :func:`hide_data_values` swaps a discrete problem's data for
:class:`ShapeOnly` stand-ins that keep the shape and raise on any read of a value, so a
test can run the decision again and require the same answer.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ShapeOnly", "hide_data_values"]

#: what a read of a hidden value raises (tests match on it)
READ_MESSAGE = "a pre-data decision read a data value"


class ShapeOnly:
    """An array stand-in with a public shape; reading any value raises AssertionError."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape, self.ndim = shape, len(shape)

    def __len__(self) -> int:
        return self.shape[0]

    def _read(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError(READ_MESSAGE)

    __array__ = __getitem__ = __iter__ = __float__ = _read


def hide_data_values(monkeypatch: Any, problem: Any) -> None:
    """Replace the X and y of ``problem``'s dataset by :class:`ShapeOnly` stand-ins and make its
    0/1 loss's ``weights`` and ``integer_rows`` unreadable, for the rest of the test.

    Parameters
    ----------
    monkeypatch : pytest.MonkeyPatch
        Undoes the change when the test ends.
    problem : DiscreteProblem
        The problem whose data is hidden (every Dataset and ZeroOneLoss is patched: the
        attributes are shadowed by properties on the classes).
    """
    import dpopt as dp

    def stand_in(shape: tuple[int, ...]) -> property:
        return property(lambda self: ShapeOnly(shape))

    data = problem.loss.data
    for name, shape in {"X": data.X.shape, "y": data.y.shape}.items():
        monkeypatch.setattr(dp.Dataset, name, stand_in(tuple(shape)), raising=False)
    for name in ("weights", "integer_rows"):
        monkeypatch.setattr(dp.ZeroOneLoss, name, property(ShapeOnly._read), raising=False)
