"""The uncertainty band shown beside an estimate: how far estimates fall from published GPU runs.

`python -m benchmarks.published_runs.headline --write-band` compares the estimator, like for
like, with the measured peaks of published training runs (the shared development set and the
project's additions, benchmarks/published_runs/evidence.py), each job as a user who names only
the stack would describe it (the stack's defaults; no memory constant is fitted to these runs,
so this is the leave-one-source-out spread), and stores, per training stack and method, the 80th
percentile of |estimate / measured - 1|, rounded up to a whole percent, in
tools/data/memory_published_band.json. Nothing here is typed in: the band is what that run
measured. A job takes its (stack, method) group's band when the group has at least MIN_CASES
cases, else its stack's. A stack with fewer than MIN_CASES measured runs is *unvalidated*: it
borrows no other stack's band but gets the wide one that 19 in 20 of all published runs fell
within (`unvalidated_band`), and says so.
The CPU calibration's band (tools/memory/bands/calibration.py) measures the tensor count against
exact CPU measurements; it says nothing about GPUs and is not shown as the estimate's band.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "BAND_FILE", "MIN_CASES", "QUANTILE", "UNVALIDATED_QUANTILE", "BandGroup", "PublishedBands",
    "band_for", "published_bands",
]  # fmt: skip

BAND_FILE: Final = "data/memory_published_band.json"
MIN_CASES: Final = 4  # a group with fewer published cases borrows a wider group's band
QUANTILE: Final = 0.8
UNVALIDATED_QUANTILE: Final = 0.95


class BandGroup(BaseModel):
    """One group of published cases: a stack, a method, both, or neither (all cases)."""

    model_config = ConfigDict(frozen=True)

    stack: str | None = None
    method: str | None = None
    cases: int = Field(gt=0)
    band: float = Field(ge=0, description="80th percentile of |ratio - 1|, rounded up to 1%")
    median_ratio: float = Field(gt=0, description="median of estimate / measured")
    validated: bool = Field(True, description="at least MIN_CASES published runs of the stack")

    @property
    def label(self) -> str:
        parts = [p for p in (self.stack, self.method) if p]
        return " ".join(parts) if parts else "all"


class PublishedBands(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    rule: str
    source: str
    date: str
    groups: list[BandGroup]
    unvalidated_band: float = Field(
        0.5, ge=0, description="95th percentile of |ratio - 1| over every published run"
    )


@cache
def published_bands() -> PublishedBands | None:
    """The bands stored with the package, or None when the file is absent or unreadable."""
    try:
        text = resources.files("tools").joinpath(BAND_FILE).read_text(encoding="utf-8")
        return PublishedBands.model_validate(json.loads(text))
    except (FileNotFoundError, json.JSONDecodeError, ValidationError):
        return None


@cache  # every estimate asks; the bands are read once (`published_bands`)
def band_for(stack: str, method: str) -> BandGroup | None:
    """The band of the stack's narrowest group with at least MIN_CASES published runs; for a
    stack with fewer, an unvalidated group with the wide band of all runs."""
    bands = published_bands()
    if bands is None:
        return None
    index = {(g.stack, g.method): g for g in bands.groups}
    own = index.get((stack, None))
    if own is None or own.cases < MIN_CASES:
        everything = index.get((None, None))
        median = everything.median_ratio if everything else 1.0
        cases = own.cases if own else 0
        return BandGroup(stack=stack, cases=max(cases, 1), band=bands.unvalidated_band,
                         median_ratio=median, validated=False)  # fmt: skip
    pair = index.get((stack, method))
    return pair if pair is not None and pair.cases >= MIN_CASES else own
