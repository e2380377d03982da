"""The memory estimator against the published GPU runs in ../shared: the issue's targets, so a
regression shows (skipped, saying why, when ../shared is absent).

Targets (issue 12): at least 85 % of measured peaks within ±20 % and 60 % within ±10 %, like for
like; no run that ran left out (the estimate over the card; under the 10 % margin it is tight,
ranked last and flagged); every published
OOM predicted. The stored band file is what the same run gives.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from benchmarks.published_runs.headline import band_rows
from benchmarks.published_runs.memory import CaseResult, band_groups, quantile_band, run, summarise
from tools.memory.bands.published_band import band_for, published_bands


@cache
def results(path: Path) -> tuple[CaseResult, ...]:
    return tuple(run(path))


@pytest.fixture
def published(shared_dir: Path) -> tuple[CaseResult, ...]:
    return results(shared_dir / "calibration" / "gpu_memory_published.json")


def test_within_20_and_10_percent(published: tuple[CaseResult, ...]) -> None:
    summary = summarise("all", published)
    assert summary is not None and summary.cases >= 40, "measured peaks"
    assert summary.within_20 >= 0.85, f"{summary.within_20:.0%} within ±20 % (target 85 %)"
    assert summary.within_10 >= 0.60, f"{summary.within_10:.0%} within ±10 % (target 60 %)"


def test_no_run_that_ran_is_rejected(published: tuple[CaseResult, ...]) -> None:
    rejected = {r.id for r in published if r.rejected}
    assert not rejected, f"left out though they ran: {rejected}"


def test_a_run_near_its_card_is_tight_not_left_out(published: tuple[CaseResult, ...]) -> None:
    """PEFT's Llama 2 70B LoRA under FSDP read "72-80 GB" of its 80 GB H100s: the estimate,
    73.1 GiB, holds on the card but not with the ranking's 10 % margin."""
    by_id = {r.id: r for r in published}
    peft = by_id["peft_llama2_70b_lora_fsdp_8xh100"]
    assert peft.tight and not peft.rejected
    assert all(r.outcome == "ran" for r in published if r.tight)


def test_every_published_oom_is_predicted(published: tuple[CaseResult, ...]) -> None:
    ooms = [r for r in published if r.outcome == "oom"]
    assert ooms, "the set has OOM outcomes"
    missed = [r.id for r in ooms if not r.oom_predicted]
    assert not missed, f"OOMs the estimate says fit: {missed}"


def test_compared_like_for_like(published: tuple[CaseResult, ...]) -> None:
    """An allocated figure is compared with the allocated estimate, which leaves out the
    context and the cache; a device figure with the whole device."""
    by_class = {r.metric_class: r for r in published if r.measured}
    assert set(by_class) == {"allocated", "reserved", "device"}, "all three classes occur"
    allocated = by_class["allocated"]
    assert allocated.predicted < allocated.estimate_device, "fewer bytes than the device"


def test_stored_band_is_this_run(shared_dir: Path) -> None:
    """The bands shipped with the package are what the headline's dev + tune runs give with
    the stacks' defaults (`headline --write-band`)."""
    stored = published_bands()
    assert stored is not None, "tools/data/memory_published_band.json ships with the package"
    rows = band_rows()
    fresh = band_groups(rows)
    assert [g.model_dump(exclude={"validated"}) for g in stored.groups] == fresh, (
        "re-run python -m benchmarks.published_runs.headline --write-band"
    )
    assert stored.unvalidated_band == quantile_band(
        [r.ratio for r in rows if r.ratio is not None], 0.95
    )
    assert json.dumps(fresh), "JSON-safe"


def test_a_stack_with_too_few_runs_is_unvalidated_with_the_wide_band() -> None:
    stored = published_bands()
    assert stored is not None
    unsloth = band_for("unsloth", "qlora")
    assert unsloth is not None and not unsloth.validated, "no measured unsloth peak yet"
    assert unsloth.band == stored.unvalidated_band > band_for("hf", "lora").band  # type: ignore[union-attr]
    hf = band_for("hf", "lora")
    assert hf is not None and hf.validated and (hf.stack, hf.method) == ("hf", "lora")


def test_litgpt_qlora_runs(published: tuple[CaseResult, ...]) -> None:
    """litgpt's QLoRA runs (bitsandbytes 0.42 under Lightning's plugin: 4-bit inputs kept on the
    graph the loop holds, a 4-bit lm_head): each within -15 % / +10 % of its measured peak."""
    ratios = {r.id: r.ratio for r in published if r.stack == "litgpt" and r.method == "qlora"}
    assert len(ratios) >= 6, "the set has litgpt QLoRA runs"
    off = {k: round(v, 2) for k, v in ratios.items() if v is None or not 0.85 <= v <= 1.10}
    assert not off, f"litgpt QLoRA off: {off}"
