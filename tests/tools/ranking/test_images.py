"""Image-model jobs through the ranking: invariants of work, memory, plans and interfaces.

The golden figures of the four issue-16 jobs are in tests/assistant/cli/test_rank_images.py;
these tests check how the figures move when the job changes.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.catalogs import image_catalog
from tools.advice import estimate_job, rank_job
from tools.job import JobSpec
from tools.ranking import RankedOption, RankResult
from tools.ranking.images import ImageRankRequest, ImageSearch
from tools.ranking.plans import NoFit, PlanFit
from tools.units import GIB, format_gib

SDXL = {"model": "sdxl", "method": "lora", "dreambooth": True, "resolution": 1024}
QWEN_FULL = {"model": "qwen2-vl-7b", "method": "full", "samples": 20_000}


def _rank(**fields: Any) -> RankResult:
    return rank_job(JobSpec(**fields), image_catalog())[1]


def _row(result: RankResult, instance_id: str) -> RankedOption:
    return next(row for row in result.ranked if row.instance_id == f"testcloud/{instance_id}")


def test_more_images_take_longer() -> None:
    """Work is steps x batch (or images x epochs): twice the steps, twice the training."""
    short, long = _rank(**SDXL, steps=500), _rank(**SDXL, steps=1000)
    assert long.job.images == 2 * short.job.images == 1000
    assert long.job.training_flops == pytest.approx(2 * short.job.training_flops)
    a, b = _row(short, "l40s-1x"), _row(long, "l40s-1x")
    assert b.training_hours == pytest.approx(2 * a.training_hours, rel=1e-9)
    assert b.hours > a.hours and b.total_cost > a.total_cost
    epochs = _rank(**SDXL, images=20, epochs=50)
    assert epochs.job.images == 1000, "20 images x 50 epochs"
    assert _row(epochs, "l40s-1x").training_hours == pytest.approx(b.training_hours)


def test_batch_and_accumulation_set_the_images_per_step() -> None:
    result = _rank(**SDXL, steps=100, micro_batch_size=2, gradient_accumulation_steps=4)
    assert result.job.images == 800
    assert any("100 steps x 8 image(s) per step" in line for line in result.job.assumptions)


def test_cached_latents_need_less_memory() -> None:
    plain, cached = _rank(**SDXL), _rank(**SDXL, cache_latents=True)
    need = _row(plain, "l40s-1x").need_per_gpu_bytes
    assert _row(cached, "l40s-1x").need_per_gpu_bytes < need, "no VAE resident"
    assert cached.job.training_flops < plain.job.training_flops, "no VAE encode per image"


def test_prior_preservation_doubles_the_batch() -> None:
    plain, prior = _rank(**SDXL), _rank(**SDXL, prior_preservation=True)
    assert prior.job.images == plain.job.images, "instance images; class images ride along"
    assert prior.job.training_flops == pytest.approx(2 * plain.job.training_flops, rel=1e-12)
    a, b = _row(plain, "l40s-1x"), _row(prior, "l40s-1x")
    assert 1.9 < b.training_hours / a.training_hours <= 2.0, "compute x2, optimizer step x1"
    assert b.need_per_gpu_bytes > a.need_per_gpu_bytes, "twice the activations"
    assert any(line.startswith("prior preservation:") for line in prior.job.assumptions)


def test_diffusion_ddp_replicates_the_job() -> None:
    """DDP: the same need per GPU as one GPU, about half the training time on two."""
    result = _rank(**SDXL, steps=4000)
    one, two = _row(result, "l4-1x"), _row(result, "l4-2x")
    assert (one.plan, two.plan) == ("single", "ddp")
    assert two.need_per_gpu_bytes == one.need_per_gpu_bytes
    assert 0.5 <= two.training_hours / one.training_hours < 0.6, "plus the gradient all-reduce"
    assert {row.plan for row in result.ranked} <= {"single", "ddp"}, "no ZeRO for diffusion"


def test_vlm_plans_shard_with_zero() -> None:
    result = _rank(**QWEN_FULL)
    best = _row(result, "h100-8x")
    assert best.plan == "zero2" and best.gpu_count == 8
    _, single = estimate_job(JobSpec(**QWEN_FULL))
    assert best.need_per_gpu_bytes < single.per_gpu.total < 192 * GIB
    resolved, _ = rank_job(JobSpec(**QWEN_FULL), image_catalog())
    assert isinstance(resolved.request, ImageRankRequest)
    search = ImageSearch(resolved.request.job, 0.1)
    zero2, zero3 = search.estimate("zero2", 8), search.estimate("zero3", 8)
    assert zero3.per_gpu.total < zero2.per_gpu.total < search.estimate("ddp", 8).per_gpu.total


@pytest.mark.parametrize(
    "fields",
    [SDXL, {"model": "flux.1-dev", "method": "lora"},
     {"model": "llava-1.5-7b", "method": "lora", "samples": 20_000}, QWEN_FULL],
)  # fmt: skip
def test_one_gpu_figures_are_the_estimate(fields: dict[str, Any]) -> None:
    """A one-GPU row needs what `estimate` says; a one-GPU exclusion quotes that need."""
    _, estimate = estimate_job(JobSpec(**fields))
    result = _rank(**fields)
    singles = [row for row in result.ranked if row.plan == "single"]
    assert all(row.need_per_gpu_bytes == estimate.per_gpu.total for row in singles)
    misses = [e for e in result.excluded if e.kind == "memory" and "on 1 GPU" in e.reason]
    assert singles or misses, "every job has one-GPU figures to compare"
    shown = format_gib(estimate.per_gpu.total)
    assert all(f"{shown} + 10% margin" in e.reason for e in misses)


def test_vlm_samples_from_images_or_tokens() -> None:
    per_two = _rank(model="llava-1.5-7b", method="lora", images=8000, images_per_sample=2)
    assert per_two.job.images == 4000, "8000 images, 2 per sample"
    default = _rank(model="llava-1.5-7b", method="lora")
    seq = 2048 + 576  # text + one 336 px image's tokens
    assert default.job.images == pytest.approx(1e8 / seq), "the language default of 100M tokens"
    assert default.job.tokens == pytest.approx(1e8)


def test_a_frozen_tower_costs_forward_flops_only() -> None:
    frozen = _rank(model="llava-1.5-7b", method="lora", samples=1000)
    trained = _rank(model="llava-1.5-7b", method="lora", samples=1000, train_vision_tower=True)
    assert trained.job.training_flops > frozen.job.training_flops
    assert trained.job.trainable_params > frozen.job.trainable_params


def test_an_image_plan_under_the_card_but_not_the_margin_is_tight() -> None:
    resolved, _ = rank_job(JobSpec(**SDXL), image_catalog())
    assert isinstance(resolved.request, ImageRankRequest)
    need = ImageSearch(resolved.request.job, 0.1).estimate("single", 1).per_gpu.total
    search = ImageSearch(resolved.request.job, 0.1)
    roomy, tight = (
        search.fit(1, need * 1.2, range(1, 2), None),
        search.fit(1, need * 1.05, range(1, 2), None),
    )
    assert isinstance(roomy, PlanFit) and not roomy.tight
    assert isinstance(tight, PlanFit) and tight.tight and tight.plan == "single"
    assert isinstance(search.fit(1, need * 0.95, range(1, 2), None), NoFit)
