"""The time model's constants that are fitted to published runs, all in one place.

Every other constant of the time model (`assumptions.py`) rests on a source outside the scored
runs: kernel benchmarks, datasheets, papers' kernel tables, library code
(docs/time_model_sources.md lists them). A constant listed here is instead chosen to fit
published training throughputs. The benchmark (`python -m benchmarks.published_runs.headline`;
the scoring is in benchmarks/published_runs/loso.py) never scores a run with a value fitted on
that run's own source: for each source it fits every constant below on the other sources' runs
the constant applies to, within the bounds, and scores the left-out source with those values.

`path` names the assumption ("gemm_efficiency.Hopper" is `ThroughputAssumptions.
gemm_efficiency["Hopper"]`, "qlora_dequant_efficiency" a plain field).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tools.ranking.time.assumptions import ThroughputAssumptions


@dataclass(frozen=True, slots=True)
class RunTraits:
    """What decides whether a fitted constant bears on a published run."""

    architecture: str
    precision: str
    method: str
    stack: str


@dataclass(frozen=True, slots=True)
class Fitted:
    """One fitted constant: where it lives, its admissible range, the runs it is fitted on."""

    path: str
    low: float
    high: float
    informs: Callable[[RunTraits], bool]
    why: str

    def value(self, a: ThroughputAssumptions) -> float:
        field, _, key = self.path.partition(".")
        found = getattr(a, field)
        return float(found[key] if key else found)

    def with_value(self, a: ThroughputAssumptions, value: float) -> ThroughputAssumptions:
        field, _, key = self.path.partition(".")
        if key:
            return a.model_copy(update={field: {**getattr(a, field), key: value}})
        return a.model_copy(update={field: value})


FITTED: tuple[Fitted, ...] = ()
