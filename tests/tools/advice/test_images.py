"""Image-model jobs through the job model: estimate end to end, defaults listed, bad input."""

from __future__ import annotations

import pytest

from tools.advice import estimate_job, rank_job
from tools.catalog import builtin_catalog
from tools.errors import InvalidInputError
from tools.job import JobSpec
from tools.units import GIB


def test_sdxl_dreambooth_lora_at_1024() -> None:
    resolved, est = estimate_job(JobSpec(model="sdxl", dreambooth=True, resolution=1024))
    assumed = resolved.assumed_values()
    assert assumed["method"] == "lora" and assumed["prior_preservation"] is False
    assert "resolution" not in assumed  # given
    assert est.model_name == "Stable Diffusion XL base 1.0"
    assert est.per_gpu.total == sum(
        getattr(est.per_gpu, p) for p in ("weights", "gradients", "optimizer", "activations",
                                          "overhead")
    )  # fmt: skip
    assert any("text encoders not resident" in a for a in est.assumptions)
    assert 4 * GIB < est.per_gpu.total < 24 * GIB


def test_flux_lora_defaults_to_its_resolution() -> None:
    resolved, est = estimate_job(JobSpec(model="FLUX.1-dev", method="lora"))
    assert resolved.assumed_values()["resolution"] == 1024
    assert est.total_params == 16_870_599_139
    assert any("4096 image tokens" in a for a in est.assumptions)


def test_vlm_jobs() -> None:
    _, llava = estimate_job(JobSpec(model="llava 1.5 7b", method="lora"))
    assert llava.total_params == 7_063_427_072
    assert any("576 image tokens" in a for a in llava.assumptions)
    resolved, qwen = estimate_job(
        JobSpec(model="Qwen2-VL-7B", method="full", zero_stage=3, num_gpus=8)
    )
    assert qwen.trainable_params == 7_615_616_512  # tower frozen by default
    assert resolved.assumed_values()["train_vision_tower"] is False
    assert qwen.per_gpu.total < 40 * GIB


def test_image_fields_on_a_language_model_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="diffusion or vision-language"):
        estimate_job(JobSpec(model="llama 3.1 8b", resolution=1024))
    resolved, _ = estimate_job(JobSpec(model="llama 3.1 8b", resolution=1024), strict=False)
    assert "resolution" not in resolved.assumed_values()


def test_bad_values_for_diffusion_say_what_is_valid() -> None:
    with pytest.raises(InvalidInputError, match="lora or full"):
        estimate_job(JobSpec(model="sdxl", method="qlora"))
    with pytest.raises(InvalidInputError, match="lora or full"):
        rank_job(JobSpec(model="sdxl", method="qlora"), builtin_catalog())
    resolved, result = rank_job(JobSpec(model="sdxl", method="qlora"), builtin_catalog(),
                                strict=False)  # fmt: skip
    assert [n.field for n in resolved.notices] == ["method"], "dropped with a notice"
    assert result.job.method == "lora" and result.ranked, "ranked with the default method"
