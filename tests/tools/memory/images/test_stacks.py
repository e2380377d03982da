"""Trainer profiles for diffusion jobs: they fill what a job leaves open, what it sets wins."""

from __future__ import annotations

import pytest

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.multimodal import find_multimodal
from tools.memory.images.diffusion import DiffusionJob, estimate_diffusion
from tools.memory.images.stacks import IMAGE_STACKS


def _flux() -> DiffusionModel:
    model = find_multimodal("flux dev")
    assert isinstance(model, DiffusionModel)
    return model


def test_profiles_fill_open_fields() -> None:
    flux = _flux()
    plain = DiffusionJob(model=flux)
    assert plain.lora_storage == "fp32" and not plain.latents_cached and plain.text_tokens == 512
    diffusers = DiffusionJob(model=flux, stack="diffusers")
    assert diffusers.text_tokens == 77 and diffusers.lora_storage == "fp32"
    simpletuner = DiffusionJob(model=flux, stack="simpletuner")
    assert simpletuner.lora_storage == "bf16" and simpletuner.latents_cached
    assert not simpletuner.encoders_resident
    toolkit = DiffusionJob(model=flux, stack="ai-toolkit", dreambooth=True)
    assert toolkit.encoders_resident and toolkit.latents_cached  # captions encoded every step
    assert set(IMAGE_STACKS) == {"diffusers", "simpletuner", "ai-toolkit"}


def test_what_the_job_sets_wins() -> None:
    flux = _flux()
    job = DiffusionJob(
        model=flux,
        stack="simpletuner",
        lora_dtype="fp32",
        cache_latents=False,
        cache_text_embeddings=False,
        max_sequence_length=256,
    )
    assert job.lora_storage == "fp32" and not job.latents_cached and job.encoders_resident
    assert job.text_tokens == 256
    est = estimate_diffusion(job)
    assert "VAE" in est.parts and "T5-XXL" in est.parts
    assert any("SimpleTuner" in a for a in est.assumptions)


def test_profile_changes_the_estimate_by_its_mechanisms() -> None:
    flux = _flux()
    fp32 = estimate_diffusion(
        DiffusionJob(model=flux, cache_latents=True, cache_text_embeddings=True)
    )
    bf16 = estimate_diffusion(DiffusionJob(model=flux, stack="simpletuner"))
    t = fp32.trainable_params
    assert fp32.per_gpu.weights - bf16.per_gpu.weights == 2 * t  # LoRA weights 4 -> 2 bytes
    assert fp32.per_gpu.gradients == 2 * bf16.per_gpu.gradients
    with pytest.raises(ValueError, match="stack"):
        DiffusionJob(model=flux, stack="kohya-unknown")
