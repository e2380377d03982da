"""Leave-one-source-out scoring of the time model, and the row type both headlines share.

For every source (`evidence.source_of`: a repository or a page) the constants of
`tools.ranking.time.fitted.FITTED` are fitted on the runs of every *other* source (quality `ok`
only) and the source's own runs are scored with them. With no fitted constants the scores equal
the plain ones, which is the point: a constant from outside the set cannot have learned it.

Fitting: coordinate descent, two passes over the constants, each constant set to the point of a
33-point geometric grid over its bounds that minimises the mean |log(predicted / published)| of
the runs it informs (`Fitted.informs`), starting from the model's own values; a constant that no
other source's run informs takes the geometric middle of its bounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from benchmarks.published_runs.evidence import Tagged
from benchmarks.published_runs.time import predict
from benchmarks.published_runs.time_cases import ThroughputCase, case_gpu
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.fitted import Fitted, RunTraits

GRID_POINTS = 33
PASSES = 2


@dataclass(frozen=True)
class Scored:
    """One published run scored: its ratio with every constant as shipped (`ratio`) and with
    the fitted constants fitted without its source (`loso`); None where the run has no figure
    (a fit outcome), whose decision is in `ok`."""

    id: str
    origin: str
    source: str
    stack: str
    method: str
    generation: str
    gpu: str
    quality: str
    ratio: float | None
    loso: float | None
    ok: bool | None = None  # a fit outcome's decision (ran: not rejected; oom: predicted)
    outcome: str = "ran"
    tight: bool = False  # ran, and the ranking keeps it as tight (the card, not the margin)


@dataclass(frozen=True)
class _Run:
    case: ThroughputCase
    tagged: Tagged
    traits: RunTraits


def _runs(cases: Iterable[Tagged]) -> list[_Run]:
    out = []
    for tagged in cases:
        case = ThroughputCase.model_validate(tagged.raw)
        gpu = case_gpu(case)
        traits = RunTraits(gpu.architecture, case.precision, case.method, case.stack)
        out.append(_Run(case, tagged, traits))
    return out


def _loss(runs: Sequence[_Run], a: ThroughputAssumptions) -> float:
    return sum(abs(math.log(predict(r.case, a).ratio)) for r in runs) / len(runs)


def _grid(low: float, high: float) -> list[float]:
    step = (high / low) ** (1 / (GRID_POINTS - 1))
    return [low * step**i for i in range(GRID_POINTS)]


def fit(
    runs: Sequence[_Run], constants: Sequence[Fitted], start: ThroughputAssumptions
) -> ThroughputAssumptions:
    """The assumptions with every constant fitted on `runs` (see the module docstring)."""
    a = start
    for _ in range(PASSES):
        for constant in constants:
            informed = [r for r in runs if constant.informs(r.traits)]
            if not informed:  # nothing else informs it: an uninformed guess, not the
                # shipped value, which may have been fitted on the left-out source itself
                a = constant.with_value(a, math.sqrt(constant.low * constant.high))
                continue
            best = min(
                _grid(constant.low, constant.high),
                key=lambda v: _loss(informed, constant.with_value(a, v)),
            )
            a = constant.with_value(a, best)
    return a


def time_scores(
    cases: Iterable[Tagged],
    constants: Sequence[Fitted],
    start: ThroughputAssumptions | None = None,
    fit_on: Callable[[Tagged], bool] = lambda t: t.raw.get("quality") == "ok",
) -> list[Scored]:
    """Every run's ratio as shipped and left one source out (see the module docstring)."""
    a = start or ThroughputAssumptions()
    runs = _runs(cases)
    fitted: dict[str, ThroughputAssumptions] = {}
    for source in sorted({r.tagged.source for r in runs}):
        others = [r for r in runs if r.tagged.source != source and fit_on(r.tagged)]
        fitted[source] = fit(others, constants, a) if constants else a
    out = []
    for r in runs:
        shipped = predict(r.case, a).ratio
        held_out = predict(r.case, fitted[r.tagged.source]).ratio
        out.append(
            Scored(
                id=r.case.id,
                origin=r.tagged.origin,
                source=r.tagged.source,
                stack=r.case.stack,
                method=r.case.method,
                generation=r.traits.architecture,
                gpu=r.case.gpu.type,
                quality=r.case.quality,
                ratio=shipped,
                loso=held_out,
            )
        )
    return out


def within(rows: Iterable[Scored], band: float, loso: bool = True) -> float:
    """Share of rows with a figure whose ratio (left one source out, or as shipped) is within
    1 +- band."""
    ratios = [r.loso if loso else r.ratio for r in rows]
    found = [x for x in ratios if x is not None]
    return sum(abs(x - 1) <= band for x in found) / len(found) if found else 0.0
