"""Diffusion fine-tuning memory: goldens for the done-when jobs and the mechanisms' invariants."""

from __future__ import annotations

import pytest

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.multimodal import find_multimodal
from tools.memory.images.diffusion import DiffusionJob, estimate_diffusion, lora_params
from tools.memory.images.diffusion_acts import denoiser_activations
from tools.units import GIB


def _model(name: str) -> DiffusionModel:
    model = find_multimodal(name)
    assert isinstance(model, DiffusionModel)
    return model


def _total(name: str, **settings: object) -> float:
    job = DiffusionJob(model=_model(name), **settings)
    return estimate_diffusion(job).per_gpu.total / GIB


def test_goldens() -> None:
    """Values of the current model (regressions show up here; the mechanisms are tested below)."""
    sdxl = _total("sdxl", dreambooth=True, lora_rank=4, gradient_checkpointing=True,
                  optimizer="adamw-8bit")  # fmt: skip
    assert sdxl == pytest.approx(7.55, abs=0.01)
    flux = _total("flux dev", dreambooth=True, gradient_checkpointing=True, cache_latents=True)
    assert flux == pytest.approx(26.27, abs=0.01)
    sd21 = _total("sd 2.1", lora_rank=8, resolution=768, gradient_checkpointing=True)
    assert sd21 == pytest.approx(3.64, abs=0.01)
    refiner = _total("sdxl refiner", lora_rank=8, gradient_checkpointing=True, cache_latents=True)
    assert refiner == pytest.approx(6.94, abs=0.01)


def test_sd21_and_the_sdxl_refiner_count_their_own_parts() -> None:
    """SD 2.1 runs one OpenCLIP-H text encoder; the refiner only OpenCLIP-bigG (no CLIP-L)."""
    sd21, refiner = _model("sd 2.1"), _model("sdxl refiner")
    est = estimate_diffusion(DiffusionJob(model=sd21, lora_rank=4))
    assert est.parts["OpenCLIP-H"] == 2 * 340_387_840 and "CLIP-L" not in est.parts
    assert est.parts["VAE"] == 2 * sd21.vae.num_params()  # only SDXL's VAE is kept in fp32
    ref = estimate_diffusion(DiffusionJob(model=refiner, lora_rank=4))
    assert set(ref.parts) == {"unet", "OpenCLIP-bigG", "VAE", "LoRA adapters"}
    assert ref.parts["VAE"] == 4 * refiner.vae.num_params()


def test_parts_add_up_and_weights_follow_the_dtypes() -> None:
    sdxl = _model("sdxl")
    est = estimate_diffusion(DiffusionJob(model=sdxl, lora_rank=4))
    b = est.per_gpu
    assert b.total == b.weights + b.gradients + b.optimizer + b.activations + b.overhead
    assert b.weights == sum(est.parts.values())
    assert est.parts["unet"] == 2 * sdxl.denoiser_params()
    assert est.parts["VAE"] == 4 * sdxl.vae.num_params()  # SDXL's VAE kept in fp32
    fixed = estimate_diffusion(DiffusionJob(model=sdxl, lora_rank=4, fixed_vae=True))
    assert fixed.parts["VAE"] == 2 * sdxl.vae.num_params()
    assert est.trainable_params == lora_params(sdxl, 4)
    assert lora_params(sdxl, 8) == 2 * lora_params(sdxl, 4)


def test_caching_removes_the_encoders_and_the_vae() -> None:
    flux = _model("flux dev")
    base = estimate_diffusion(DiffusionJob(model=flux))
    assert {"T5-XXL", "CLIP-L", "VAE"} <= set(base.parts)
    cached = estimate_diffusion(
        DiffusionJob(model=flux, cache_latents=True, cache_text_embeddings=True)
    )
    assert set(cached.parts) == {"flux", "LoRA adapters"}
    dreambooth = estimate_diffusion(DiffusionJob(model=flux, dreambooth=True))
    assert "T5-XXL" not in dreambooth.parts  # fixed prompt: encoded once, encoders freed
    trained = estimate_diffusion(DiffusionJob(model=flux, dreambooth=True, train_text_encoder=True))
    assert "T5-XXL" in trained.parts and trained.trainable_params > dreambooth.trainable_params


def test_activations_scale_with_resolution_batch_and_prior_preservation() -> None:
    flux = _model("flux dev")
    a512, a1024 = (denoiser_activations(flux, r).full for r in (512, 1024))
    tokens = [flux.image_tokens(r) + flux.text_tokens() for r in (512, 1024)]
    assert a1024 / a512 == pytest.approx(tokens[1] / tokens[0])  # linear in tokens (fused attn)
    unet = denoiser_activations(_model("sdxl"), 1024)
    assert unet.full == 4 * denoiser_activations(_model("sdxl"), 512).full  # latent pixels
    assert unet.kept(True) < unet.kept(False)
    sdxl = _model("sdxl")
    one = estimate_diffusion(DiffusionJob(model=sdxl, cache_latents=True)).per_gpu.activations
    two = estimate_diffusion(
        DiffusionJob(model=sdxl, cache_latents=True, prior_preservation=True)
    ).per_gpu.activations
    batch2 = estimate_diffusion(
        DiffusionJob(model=sdxl, cache_latents=True, micro_batch_size=2)
    ).per_gpu.activations
    assert two == batch2 == 2 * one


def test_full_fine_tuning_optimizers_and_ema() -> None:
    sd15 = _model("sd 1.5")
    n = sd15.denoiser_params()
    adam = estimate_diffusion(DiffusionJob(model=sd15, method="full", resolution=512))
    assert adam.trainable_params == n
    assert adam.per_gpu.gradients == 4 * n and adam.per_gpu.optimizer == 8 * n
    ema = estimate_diffusion(DiffusionJob(model=sd15, method="full", resolution=512, ema=True))
    assert ema.per_gpu.optimizer - adam.per_gpu.optimizer == 4 * n
    for opt, per in (("adamw-8bit", 2), ("prodigy", 16), ("adafactor", 0)):
        est = estimate_diffusion(DiffusionJob(model=sd15, method="full", optimizer=opt))
        assert est.per_gpu.optimizer == per * n
    assert any("optimizer adamw" in a for a in adam.assumptions)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="resolution"):
        DiffusionJob(model=_model("sdxl"), resolution=10)
    with pytest.raises(ValueError, match="optimizer"):
        DiffusionJob(model=_model("sdxl"), optimizer="sgd")


def test_quantised_base_bytes_per_weight() -> None:
    """NF4: two codes a byte and an fp32 absmax per 64 weights; quanto int4: a 16-bit scale and
    shift per 128; int8 / fp8 one byte; only the frozen denoiser shrinks."""
    flux = _model("flux dev")
    n = flux.denoiser_params()
    parts = {
        p: estimate_diffusion(DiffusionJob(model=flux, base_precision=p)).parts
        for p in ("16-bit", "int8", "int4", "nf4")
    }
    assert parts["16-bit"]["flux"] == 2 * n
    assert parts["int8"]["flux"] == n
    assert parts["int4"]["flux"] == pytest.approx(0.53125 * n, abs=1)
    assert parts["nf4"]["flux"] == pytest.approx(0.5625 * n, abs=1)
    assert parts["nf4"]["T5-XXL"] == parts["16-bit"]["T5-XXL"]  # encoders keep their dtype
    fp8 = estimate_diffusion(DiffusionJob(model=flux, fp8_base=True))
    assert fp8.parts["flux"] == n and fp8.parts["T5-XXL"] < parts["16-bit"]["T5-XXL"]
    nf4 = estimate_diffusion(DiffusionJob(model=flux, base_precision="nf4"))
    assert any("nf4" in a for a in nf4.assumptions)
    with pytest.raises(ValueError, match="quantised base"):
        DiffusionJob(model=flux, method="full", base_precision="nf4")


def test_lora_targets_dtype_and_optimizers() -> None:
    flux = _model("flux dev")
    # the HF flux-qlora post prints 4,669,440 trainable parameters for rank 4 on to_q, to_k,
    # to_v and to_out.0 (19 double-stream blocks x 4 + 38 single-stream blocks x 3 linears)
    assert lora_params(flux, 4, targets="attention") == 4_669_440
    assert lora_params(flux, 4, targets="attention") < lora_params(flux, 4)
    sdxl = _model("sdxl")
    assert lora_params(sdxl, 4, targets="attention") == lora_params(sdxl, 4)  # UNet: same set
    fp32 = estimate_diffusion(DiffusionJob(model=flux, cache_latents=True))
    bf16 = estimate_diffusion(DiffusionJob(model=flux, cache_latents=True, lora_dtype="bf16"))
    t = fp32.trainable_params
    assert fp32.per_gpu.gradients == 4 * t and bf16.per_gpu.gradients == 2 * t
    assert fp32.parts["LoRA adapters"] - bf16.parts["LoRA adapters"] == 2 * t
    for opt, per in (("adamw-bf16", 6), ("lion", 4), ("lion-8bit", 1)):
        est = estimate_diffusion(DiffusionJob(model=flux, optimizer=opt))
        assert est.per_gpu.optimizer == per * est.trainable_params


def test_prompt_length_sets_the_transformer_tokens() -> None:
    flux = _model("flux dev")
    default = DiffusionJob(model=flux, cache_latents=True)
    short = DiffusionJob(model=flux, cache_latents=True, max_sequence_length=77)
    assert default.text_tokens == 512 and short.text_tokens == 77
    a, b = (estimate_diffusion(j).per_gpu.activations for j in (default, short))
    image = flux.image_tokens(1024)
    assert b / a == pytest.approx((image + 77) / (image + 512))
    sd3 = DiffusionJob(model=_model("sd 3.5 large"), max_sequence_length=77)
    assert sd3.text_tokens == 77 + 77  # CLIP's 77 joined to T5's
    sdxl = DiffusionJob(model=_model("sdxl"), max_sequence_length=77)
    assert sdxl.text_tokens == 77  # a UNet attends to CLIP's 77 whatever is set
    assert any("77 prompt tokens" in a for a in estimate_diffusion(short).assumptions)
