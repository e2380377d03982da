"""Bare parameter counts: parsing, range checks, and the estimated Llama-style dimensions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.architectures.param_guess import (
    MAX_PARAMS,
    MIN_PARAMS,
    model_from_param_count,
    parse_param_count,
)
from tools.errors import InvalidInputError


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("7e9", 7e9),
        ("70B", 70e9),
        ("1.5b", 1.5e9),
        ("7 billion", 7e9),
        ("500M", 5e8),
        ("1,000,000,000", 1e9),
        ("1.2T", 1.2e12),
        ("8B params", 8e9),
        ("  13 bn parameters ", 13e9),
        (7e9, 7e9),
        (125_000_000, 1.25e8),
    ],
)
def test_parse_param_count(spec: str | float, expected: float) -> None:
    assert parse_param_count(spec) == pytest.approx(expected, rel=1e-12), f"{spec!r}"


@pytest.mark.parametrize("text", ["llama 3 8b", "gpt2", "7 bananas", "B7", "", "1.2.3b"])
def test_not_a_count(text: str) -> None:
    assert parse_param_count(text, strict=False) is None, f"{text!r} is not a count"
    with pytest.raises(InvalidInputError, match=r"parameter_count: got .*; valid: a parameter"):
        parse_param_count(text)


@pytest.mark.parametrize(
    "spec", [0, -5, "-7B", "1e14", "20T", float("nan"), float("inf"), "7", True]
)
def test_rejects_out_of_range(spec: str | float) -> None:
    with pytest.raises(InvalidInputError, match=r"between 5e7 and 1e13"):
        model_from_param_count(spec)


def test_seven_billion_looks_like_llama_2_7b() -> None:
    arch = model_from_param_count("7B")
    dims = (arch.hidden_size, arch.num_layers, arch.num_heads, arch.head_dim, arch.vocab_size)
    assert dims == (4096, 32, 32, 128, 32000), "hidden 4096 x 32 layers, as Llama 2 7B"
    assert arch.total_params() == pytest.approx(7e9, rel=0.01), "within 1% of the request"
    assert arch.estimated, "flagged as estimated"
    assert arch.id == "estimated-7B", "id says it is an estimate"
    assert "assuming a Llama-style decoder" in arch.assumptions[0], "the assumption is stated"
    assert "7.00e+09 parameters" in arch.assumptions[0], "the count it was made from"


def test_thirteen_billion_reproduces_llama_2_13b() -> None:
    arch = model_from_param_count(13e9)
    assert arch.total_params() == 13_015_864_320, "same shape as Llama 2 13B (5120 x 40, 13824)"


@given(st.floats(min_value=1e8, max_value=1e12))
def test_estimate_within_ten_percent(n: float) -> None:
    total = model_from_param_count(n).total_params()
    assert abs(total - n) <= 0.10 * n, f"{n:.4g} -> {total:.4g}"


@given(st.floats(min_value=MIN_PARAMS, max_value=MAX_PARAMS))
def test_estimate_within_ten_percent_over_the_accepted_range(n: float) -> None:
    total = model_from_param_count(n).total_params()
    assert abs(total - n) <= 0.10 * n, f"{n:.4g} -> {total:.4g}"


@given(st.floats(min_value=1e8, max_value=1e12), st.floats(min_value=1.25, max_value=100))
def test_more_params_requested_gives_more_params(n: float, factor: float) -> None:
    bigger = min(n * factor, MAX_PARAMS)
    assert model_from_param_count(bigger).total_params() > model_from_param_count(n).total_params()


@given(st.floats(min_value=MIN_PARAMS, max_value=MAX_PARAMS))
def test_estimated_shape_is_consistent(n: float) -> None:
    arch = model_from_param_count(n)
    assert arch.num_heads * arch.head_dim == arch.hidden_size, "heads tile the hidden size"
    assert arch.intermediate_size % 256 == 0, "MLP width rounded to 256"
    assert arch.hidden_size % 256 == 0, "hidden width rounded to 256"
