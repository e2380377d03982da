"""`estimate_figures` (the plan search's estimator) and the remembered activations: the same
figures as `estimate`, whatever was estimated before."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.jobs import bare_input
from tools.memory import estimate
from tools.memory.estimator import estimate_figures, forget_remembered

LLAMA_8B = "meta-llama/Llama-3.1-8B"
JOBS: list[dict[str, Any]] = [
    {"model": LLAMA_8B, "method": "lora", "micro_batch_size": 4},
    {"model": LLAMA_8B, "method": "qlora", "gradient_checkpointing": "full"},
    {"model": LLAMA_8B, "zero_stage": 3, "num_gpus": 8, "seq_len": 4096},
    {"model": LLAMA_8B, "zero_stage": 2, "num_gpus": 4, "offload_optimizer": True},
    {"model": LLAMA_8B, "tensor_parallel": 2, "num_gpus": 4, "sequence_parallel": True},
    {"model": "7e9", "stack": "litgpt", "method": "lora"},
]


@pytest.mark.parametrize("settings", JOBS, ids=lambda s: "-".join(map(str, s.values())))
def test_figures_are_the_estimate_without_its_sentences(settings: dict[str, Any]) -> None:
    inp = bare_input(**settings)
    full, figures = estimate(inp), estimate_figures(inp)
    assert full.assumptions, "the estimate states its assumptions"
    assert figures.assumptions == [], "the figures-only form writes none"
    assert figures.model_dump(exclude={"assumptions"}) == full.model_dump(
        exclude={"assumptions"}
    ), "every figure is the estimate's"


def test_remembered_activations_and_rank_states_change_no_estimate() -> None:
    """Estimates of plans that share activations and a rank's model states (same job, other
    data ranks, ZeRO stages and offload) equal the ones made with nothing remembered."""
    plans = [bare_input(model=LLAMA_8B, zero_stage=z, num_gpus=n) for z in (0, 2, 3)
             for n in (2, 8)]  # fmt: skip
    plans += [bare_input(model=LLAMA_8B, zero_stage=3, num_gpus=4, offload_optimizer=True)]
    plans += [bare_input(model=LLAMA_8B, method="qlora", num_gpus=n) for n in (1, 4)]
    forget_remembered()
    cold = [estimate(plan_job).model_dump_json() for plan_job in plans]
    warm = [estimate(plan_job).model_dump_json() for plan_job in plans]
    forget_remembered()
    reversed_order = [estimate(plan_job).model_dump_json() for plan_job in reversed(plans)]
    assert cold == warm == list(reversed(reversed_order))
