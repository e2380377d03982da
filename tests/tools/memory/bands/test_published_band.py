"""The band beside a GPU estimate: the narrowest group of published GPU runs with enough cases."""

from __future__ import annotations

import pytest

from tools.memory.bands.published_band import MIN_CASES, band_for, published_bands


def groups() -> dict[tuple[str | None, str | None], int]:
    bands = published_bands()
    assert bands is not None, "tools/data/memory_published_band.json ships with the package"
    return {(g.stack, g.method): g.cases for g in bands.groups}


@pytest.mark.parametrize("stack", ["hf", "litgpt", "torchtune", "torchtitan", "unsloth"])
@pytest.mark.parametrize("method", ["pretrain", "full", "lora", "qlora"])
def test_narrowest_group_with_enough_cases(stack: str, method: str) -> None:
    counts = groups()
    band = band_for(stack, method)
    assert band is not None, "the all-cases group always answers"
    assert band.cases >= MIN_CASES, "never a band from a handful of runs"
    order = [(stack, method), (stack, None), (None, method), (None, None)]
    narrowest = next(k for k in order if counts.get(k, 0) >= MIN_CASES)
    assert (band.stack, band.method) == narrowest, f"{stack} {method}: the narrowest group"


def test_bands_are_quantiles_not_worst_cases() -> None:
    bands = published_bands()
    assert bands is not None
    everything = next(g for g in bands.groups if g.stack is None and g.method is None)
    assert 0 < everything.band < 0.5, "80 % of the runs within it"
    assert "80%" in bands.rule and "published" in bands.source, "says what it is"
