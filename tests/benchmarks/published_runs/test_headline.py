"""The leave-one-source-out headline on the published set (the shared development cases and the
project's additions, their frozen half left out): the split, the fitting and the issue's
targets where they are met (skipped, saying why, when ../shared is absent)."""

from __future__ import annotations

import math
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from benchmarks.published_runs.evidence import evidence, publication_of, split_of
from benchmarks.published_runs.headline import BEFORE_FITTED, memory_scores
from benchmarks.published_runs.loso import Scored, time_scores, within
from tools.ranking.time.fitted import FITTED


@cache
def memory_rows() -> tuple[Scored, ...]:
    return tuple(memory_scores(evidence("memory", ("dev", "tune")), "stated"))


@cache
def time_rows() -> tuple[Scored, ...]:
    return tuple(time_scores(evidence("throughput", ("dev", "tune")), FITTED))


def test_the_split_follows_the_publication_alone(shared_dir: Path) -> None:
    """Every case of one publication falls in one half, and the half is the citation's."""
    halves: dict[str, set[str]] = defaultdict(set)
    for kind in ("memory", "throughput", "vision"):
        for case in evidence(kind, ("tune", "frozen")):  # type: ignore[arg-type]
            halves[publication_of(case.raw)].add(case.origin)
            assert case.origin == split_of(case.raw)
    assert halves and all(len(h) == 1 for h in halves.values()), "one half per publication"
    assert {o for h in halves.values() for o in h} == {"tune", "frozen"}, "both halves used"
    assert not evidence("memory", ("tune",), added=Path("/nonexistent")), "no added folder"


def test_memory_targets_on_the_tuned_set(shared_dir: Path) -> None:
    """Issue 24's memory targets, with each case's stated mechanisms, over dev + tune: >= 60 %
    within +-10 % and >= 85 % within +-20 % (no memory constant is fitted: left one source out
    is the plain figure)."""
    rows = memory_rows()
    assert all(r.loso == r.ratio for r in rows), "nothing fitted"
    measured = [r for r in rows if r.ratio is not None]
    assert len(measured) >= 60, "the development set and the additions"
    assert within(measured, 0.10) >= 0.60, f"{within(measured, 0.10):.0%} within +-10 %"
    assert within(measured, 0.20) >= 0.85, f"{within(measured, 0.20):.0%} within +-20 %"


def test_time_targets_on_the_tuned_set(shared_dir: Path) -> None:
    """Issue 24's time targets over dev + tune (quality ok): >= 70 % within +-25 % and >= 90 %
    within +-50 %, with nothing fitted to the scored runs."""
    assert FITTED == (), "the shipped time model fits nothing"
    ok = [r for r in time_rows() if r.quality == "ok"]
    assert len(ok) >= 30
    assert all(r.loso == r.ratio for r in ok), "left one source out equals shipped"
    assert within(ok, 0.25) >= 0.70, f"{within(ok, 0.25):.0%} within +-25 %"
    assert within(ok, 0.50) >= 0.90, f"{within(ok, 0.50):.0%} within +-50 %"


def test_fitted_constants_never_see_their_own_source(shared_dir: Path) -> None:
    """With the 2026-12-01 fitted constants, the one run that alone informs the QLoRA
    de-quantization constant (LitGPT's) is scored with the uninformed middle of its bounds, and
    every run of a source is scored with constants fitted on the other sources."""
    rows = time_scores(evidence("throughput", ("dev",)), BEFORE_FITTED)
    litgpt = next(r for r in rows if r.id == "litgpt_llama2_7b_qlora_overhead_a100")
    shipped = time_scores(evidence("throughput", ("dev",)), ())
    plain = next(r for r in shipped if r.id == litgpt.id)
    assert litgpt.loso is not None and plain.ratio is not None
    # the extra time is inversely proportional to the de-quantization share
    middle = math.sqrt(0.1 * 1.0)
    assert litgpt.loso == pytest.approx(plain.ratio * 0.80 / middle, rel=1e-9)
    assert any(r.loso != r.ratio for r in rows), "the fitted constants moved something"
