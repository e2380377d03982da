"""FLOPs per training image of diffusion jobs: scaling with resolution and the step's passes."""

from __future__ import annotations

import pytest

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.multimodal import find_multimodal
from tools.memory.images.diffusion import DiffusionJob
from tools.ranking.time.image_flops import denoiser_forward_flops, image_training_flops


def _model(name: str) -> DiffusionModel:
    model = find_multimodal(name)
    assert isinstance(model, DiffusionModel)
    return model


def test_flux_forward_is_its_per_token_weights_plus_joint_attention() -> None:
    flux = _model("flux dev")
    d, s = 3072, flux.image_tokens(1024) + flux.text_tokens()
    per_token_weights = (19 + 38) * 12 * d * d  # q k v out + 4x MLP per stream / single block
    expected = 2.0 * per_token_weights * s + (19 + 38) * 4.0 * s * s * d
    assert denoiser_forward_flops(flux, 1024) == pytest.approx(expected)


def test_resolution_scales_linear_work_and_attention() -> None:
    flux, sdxl = _model("flux dev"), _model("sdxl")
    ratio = denoiser_forward_flops(flux, 1024) / denoiser_forward_flops(flux, 512)
    tokens = (4096 + 512) / (1024 + 512)
    assert tokens < ratio < tokens**2
    unet = denoiser_forward_flops(sdxl, 1024) / denoiser_forward_flops(sdxl, 512)
    assert 4.0 <= unet < 16.0  # convolutions x4 with the pixels, self-attention up to x16
    assert denoiser_forward_flops(sdxl, 1024) == pytest.approx(6.76e12, rel=0.01)  # golden


def test_the_step_passes() -> None:
    sdxl = _model("sdxl")
    cached = {"model": sdxl, "cache_latents": True, "cache_text_embeddings": True}
    forward = denoiser_forward_flops(sdxl, 1024)
    full = image_training_flops(DiffusionJob(method="full", **cached))
    assert full == pytest.approx(3.0 * forward)  # forward + backward of trained weights
    recompute = image_training_flops(
        DiffusionJob(method="full", gradient_checkpointing=True, **cached)
    )
    assert recompute == pytest.approx(4.0 * forward)
    lora = image_training_flops(DiffusionJob(method="lora", **cached))
    assert 2.0 * forward < lora < 2.1 * forward  # frozen base backward: input gradients only
    prior = image_training_flops(DiffusionJob(method="lora", prior_preservation=True, **cached))
    assert prior == pytest.approx(2 * lora)
    uncached = image_training_flops(DiffusionJob(model=sdxl, method="lora"))
    assert uncached > lora  # the VAE and the text encoders run once per image
