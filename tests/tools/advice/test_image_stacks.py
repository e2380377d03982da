"""The one job `stack` field: image trainers for diffusion jobs, language stacks otherwise."""

from __future__ import annotations

import pytest

from tools.advice import estimate_job, resolve_job
from tools.errors import InvalidInputError
from tools.job import JobSpec
from tools.units import GIB


def test_an_image_trainer_reaches_the_diffusion_estimator() -> None:
    _, plain = estimate_job(JobSpec(model="sdxl", method="lora"))
    _, kohya = estimate_job(JobSpec(model="sdxl", method="lora", stack="kohya"))
    assert any("kohya-ss sd-scripts" in a for a in kohya.assumptions)
    assert kohya.trainable_params != plain.trainable_params  # rank 4 + text-encoder LoRA
    assert kohya.per_gpu.total / GIB == pytest.approx(9.13, abs=0.01)
    _, simpletuner = estimate_job(JobSpec(model="flux dev", method="lora", stack="simpletuner"))
    _, cached = estimate_job(
        JobSpec(model="flux dev", method="lora", cache_latents=True, cache_text_embeddings=True)
    )
    assert simpletuner.per_gpu.weights < cached.per_gpu.weights  # bf16 LoRA weights


def test_what_the_job_sets_wins_over_the_trainer() -> None:
    """The job's cache_latents and lora_rank win; the fields left open are kohya's."""
    _, got = estimate_job(JobSpec(model="sdxl", stack="kohya", cache_latents=True, lora_rank=8))
    _, spelled = estimate_job(
        JobSpec(model="sdxl", cache_latents=True, lora_rank=8, train_text_encoder=True,
                cache_text_embeddings=False)
    )  # fmt: skip
    assert got.per_gpu.total == spelled.per_gpu.total
    assert got.trainable_params == spelled.trainable_params


@pytest.mark.parametrize(
    ("model", "stack", "valid"),
    [
        ("sdxl", "hf", "diffusers, simpletuner, ai-toolkit or kohya for a diffusion model"),
        ("llama 3.1 8b", "kohya", r"hf, litgpt, .* or megatron for a language model"),
        ("llava 1.5 7b", "simpletuner", "for a language model"),
    ],
)
def test_a_stack_of_the_wrong_kind_is_refused(model: str, stack: str, valid: str) -> None:
    with pytest.raises(InvalidInputError, match=valid):
        estimate_job(JobSpec(model=model, stack=stack))


def test_a_language_ranking_refuses_an_image_trainer() -> None:
    with pytest.raises(InvalidInputError, match="stack"):
        resolve_job(JobSpec(model="llama 3.1 8b", stack="ai-toolkit"))
