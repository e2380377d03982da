"""Trainer profiles for diffusion jobs: they fill what a job leaves open, what it sets wins."""

from __future__ import annotations

import pytest

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.multimodal import find_multimodal
from tools.errors import InvalidInputError
from tools.memory.images.diffusion import DiffusionJob, estimate_diffusion
from tools.memory.images.stacks import IMAGE_STACKS, check_stack


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
    assert set(IMAGE_STACKS) == {"diffusers", "simpletuner", "ai-toolkit", "kohya"}


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


def test_kohya_profile_defaults() -> None:
    """kohya sd-scripts: rank 4, text-encoder LoRA on, fp32 network, nothing cached."""
    kohya = IMAGE_STACKS["kohya"]
    assert (kohya.lora_rank, kohya.train_text_encoder, kohya.lora_dtype) == (4, True, "fp32")
    assert kohya.cache_latents is False and kohya.cache_text_embeddings is False
    assert kohya.max_sequence_length is None  # FLUX.1: the model's own T5 length
    flux = _flux()
    job = DiffusionJob(model=flux, stack="kohya", dreambooth=True)
    assert job.lora_rank == 4 and job.train_text_encoder and job.lora_storage == "fp32"
    assert not job.latents_cached and job.encoders_resident and job.text_tokens == 512
    plain = DiffusionJob(model=flux, dreambooth=True)
    assert plain.lora_rank == 16 and not plain.train_text_encoder and not plain.encoders_resident
    mine = DiffusionJob(model=flux, stack="kohya", lora_rank=32, train_text_encoder=False)
    assert mine.lora_rank == 32 and not mine.train_text_encoder  # what the job sets wins


def test_kohya_estimate_follows_its_defaults() -> None:
    sdxl = find_multimodal("sdxl")
    assert isinstance(sdxl, DiffusionModel)
    kohya = estimate_diffusion(DiffusionJob(model=sdxl, stack="kohya"))
    unet_only = estimate_diffusion(DiffusionJob(model=sdxl, lora_rank=4))
    assert kohya.trainable_params > unet_only.trainable_params  # + both text encoders' LoRA
    assert {"VAE", "CLIP-L", "OpenCLIP-bigG"} <= set(kohya.parts)
    assert any("kohya-ss sd-scripts" in a for a in kohya.assumptions)


def test_check_stack_names_what_is_valid_for_the_model_kind() -> None:
    check_stack(None, "diffusion")
    check_stack("kohya", "diffusion")
    check_stack("hf", "language")
    with pytest.raises(InvalidInputError, match="diffusers, simpletuner, ai-toolkit or kohya"):
        check_stack("hf", "diffusion")
    with pytest.raises(InvalidInputError, match=r"hf, litgpt, .* or megatron.*kohya is a diff"):
        check_stack("kohya", "language")
