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
def test_the_stacks_own_narrowest_group_or_unvalidated(stack: str, method: str) -> None:
    """A stack with MIN_CASES measured runs gets its (stack, method) group's band or its own;
    one with fewer is unvalidated and gets the wide band of all runs, never another stack's."""
    counts = groups()
    bands = published_bands()
    assert bands is not None
    band = band_for(stack, method)
    assert band is not None
    if counts.get((stack, None), 0) < MIN_CASES:
        assert not band.validated and band.stack == stack and band.method is None
        assert band.band == bands.unvalidated_band
        return
    assert band.validated and band.cases >= MIN_CASES, "never a band from a handful of runs"
    order = [(stack, method), (stack, None)]
    narrowest = next(k for k in order if counts.get(k, 0) >= MIN_CASES)
    assert (band.stack, band.method) == narrowest, f"{stack} {method}: the narrowest group"


def test_an_unvalidated_estimate_says_so() -> None:
    from tests.fakes.jobs import bare_input
    from tests.tools.memory.test_estimator_models import llama31_8b
    from tools.memory import estimate

    text = "\n".join(estimate(bare_input(model=llama31_8b(), stack="unsloth")).assumptions)
    assert "unvalidated for unsloth: fewer than four of its published GPU runs" in text


def test_bands_are_quantiles_not_worst_cases() -> None:
    bands = published_bands()
    assert bands is not None
    everything = next(g for g in bands.groups if g.stack is None and g.method is None)
    assert 0 < everything.band < bands.unvalidated_band < 1, "80 % within it; 95 % wider"
    assert "80%" in bands.rule and "published" in bands.source, "says what it is"
