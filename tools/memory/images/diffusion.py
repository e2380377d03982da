"""Training memory of a diffusion fine-tuning job (LoRA, DreamBooth, full), per GPU.

What the diffusers example scripts allocate (train_dreambooth_lora_sdxl.py,
train_dreambooth_lora_flux.py, train_text_to_image_lora.py, train_text_to_image.py):
- frozen parts are cast to the 16-bit `weight_dtype` ("For mixed precision training we cast all
  non-trainable weights ... to half-precision"); SDXL's VAE stays fp32 unless a fixed VAE is
  given (train_dreambooth_lora_sdxl.py: `vae.to(accelerator.device, dtype=torch.float32)`);
- trainable parameters are fp32: LoRA adapters upcast by `cast_training_params(..., torch.float32)`
  and a fully trained denoiser loaded in fp32 (train_text_to_image.py), with fp32 gradients;
- `--use_ema` keeps an fp32 `EMAModel` shadow copy of the trained parameters;
- `--with_prior_preservation` concatenates the class images to the instance images: each step
  runs twice the batch;
- with a fixed instance prompt and no text-encoder training the DreamBooth scripts encode the
  prompt once and delete the text encoders (`free_memory()`); `--cache_latents` encodes every
  image once and deletes the VAE.
Optimizer state per trained parameter: AdamW two fp32 moments (8 bytes); bitsandbytes 8-bit AdamW
two uint8 moments (2 bytes, block constants ignored); Adafactor (transformers, beta1=None) a
factored second moment of rows + columns per matrix, under 1 % of the weights, counted as zero;
Prodigy (prodigyopt Prodigy.step) exp_avg, exp_avg_sq, s and p0 in fp32 (16 bytes); SimpleTuner's
adamw_bf16 (helpers/training/adam_bfloat16: exp_avg, exp_avg_sq and the rounding `shift`, all bf16:
6 bytes); Lion one momentum (4 bytes fp32, 1 byte for bitsandbytes Lion8bit).

Quantised frozen denoisers (LoRA only), bytes per weight: bitsandbytes NF4 packs two 4-bit codes
per byte with an fp32 absmax per 64-weight block (Params4bit blocksize 64: 0.5 + 4/64), as
diffusers' research_projects/flux_lora_quantization and SimpleTuner's `bnb-nf4` load it;
optimum-quanto int4 packs two codes per byte with a 16-bit scale and shift per 128-weight group
(0.5 + 4/128); quanto int8 and kohya's / quanto's fp8 one byte (per-channel scales ignored).
SimpleTuner trains LoRA weights in bf16 (`base_model_default_dtype` bf16 with adamw_bf16), the
diffusers scripts in fp32 (`lora_dtype`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.diffusion_parts import ClipTextConfig, FluxConfig, MMDiTConfig, UNetConfig
from tools.memory.images.diffusion_acts import denoiser_activations
from tools.memory.images.stacks import IMAGE_STACKS, ImageStack, ImageStackProfile
from tools.memory.results import MemoryBreakdown
from tools.units import GIB

__all__ = ["DiffusionEstimate", "DiffusionJob", "estimate_diffusion", "lora_params"]

DiffusionOptimizer = Literal[
    "adamw", "adamw-8bit", "adamw-bf16", "adafactor", "prodigy", "lion", "lion-8bit"
]
OPTIMIZER_BYTES: dict[str, int] = {"adamw": 8, "adamw-8bit": 2, "adamw-bf16": 6, "adafactor": 0,
                                   "prodigy": 16, "lion": 4, "lion-8bit": 1}  # fmt: skip
BaseStorage = Literal["16-bit", "fp8", "int8", "int4", "nf4"]
BASE_BYTES: dict[str, float] = {"16-bit": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5 + 4 / 128,
                                "nf4": 0.5 + 4 / 64}  # fmt: skip
FP32, BF16, FP8 = 4, 2, 1
TEXT_ENCODER_ACT_BYTES = 34  # per token x width per layer (Korthikanti et al. 2022, no dropout)
VAE_ENCODE_TENSORS = 3  # live 128-channel full-resolution tensors while the VAE encodes


class DiffusionJob(BaseModel):
    """One diffusion fine-tuning setup on one GPU."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: DiffusionModel
    method: Literal["lora", "full"] = "lora"
    dreambooth: bool = Field(False, description="DreamBooth: a fixed instance prompt")
    precision: Literal["bf16-mixed", "fp16-mixed", "bf16"] = "bf16-mixed"
    optimizer: DiffusionOptimizer = "adamw"
    lora_rank: int = Field(16, gt=0, le=1024)
    resolution: int = Field(1024, ge=64, le=8192, description="image side, px")
    micro_batch_size: int = Field(1, gt=0, le=1024)
    gradient_checkpointing: bool = False
    train_text_encoder: bool = Field(False, description="LoRA on the CLIP text encoder(s) too")
    prior_preservation: bool = Field(False, description="DreamBooth class images: 2x the batch")
    cache_latents: bool | None = Field(
        None, description="latents pre-encoded, the VAE not kept; default: the stack's, else no"
    )
    cache_text_embeddings: bool | None = Field(
        None, description="prompt embeddings pre-computed; default: DreamBooth without TE training"
    )
    ema: bool = Field(False, description="an fp32 EMA copy of the trained parameters")
    fixed_vae: bool = Field(False, description="SDXL: a 16-bit-safe VAE (madebyollin fp16 fix)")
    fp8_base: bool = Field(
        False,
        description="kohya sd-scripts --fp8_base: the frozen denoiser and text encoders stored"
        " in FP8 (1 byte), up-cast per layer for compute",
    )
    base_precision: BaseStorage | None = Field(
        None,
        description="storage of the frozen denoiser under LoRA: 16-bit, fp8, int8, int4 (quanto)"
        " or nf4 (bitsandbytes); default fp8 with fp8_base, else 16-bit",
    )
    lora_dtype: Literal["fp32", "bf16"] | None = Field(
        None,
        description="LoRA weights and gradients: fp32 (diffusers), bf16 (SimpleTuner); default:"
        " the stack's, else fp32",
    )
    lora_targets: Literal["default", "attention"] = Field(
        "default",
        description="default: the scripts' targets (attention; FLUX / SD 3 also MLPs and context"
        " projections); attention: to_q, to_k, to_v, to_out.0 only",
    )
    max_sequence_length: int | None = Field(
        None,
        ge=1,
        le=512,
        description="T5 prompt tokens of FLUX.1 / SD 3 (diffusers' DreamBooth scripts: 77 by"
        " default, README_flux.md); default: the stack's, else the pipeline's maximum",
    )
    stack: ImageStack | None = Field(
        None, description="the trainer whose defaults fill what is left open (images/stacks.py)"
    )
    cuda_context_bytes: int = Field(int(0.75 * GIB), ge=0)
    fragmentation: float = Field(0.10, ge=0, le=1)

    @model_validator(mode="before")
    @classmethod
    def _stack_fills_rank_and_text_encoder(cls, data: Any) -> Any:
        """lora_rank and train_text_encoder left open (None): the stack's value, else this
        model's own defaults (rank 16, text encoders frozen)."""
        if not isinstance(data, dict):
            return data
        profile = IMAGE_STACKS.get(str(data.get("stack")))
        filled = dict(data)
        for name, default in (("lora_rank", 16), ("train_text_encoder", False)):
            if filled.get(name) is None:
                value = getattr(profile, name) if profile is not None else None
                filled[name] = default if value is None else value
        return filled

    @model_validator(mode="after")
    def _quantised_base_is_frozen(self) -> DiffusionJob:
        if self.method == "full" and (self.fp8_base or self.base_precision not in (None, "16-bit")):
            raise ValueError("a quantised base (fp8_base, base_precision) needs method 'lora'")
        return self

    @property
    def base_storage(self) -> str:
        if self.base_precision is not None:
            return self.base_precision
        return "fp8" if self.fp8_base else "16-bit"

    @property
    def profile(self) -> ImageStackProfile | None:
        return IMAGE_STACKS[self.stack] if self.stack else None

    @property
    def text_tokens(self) -> int:
        """Prompt tokens the denoiser attends to: SD 3 joins CLIP's 77 and T5's tokens."""
        model, length = self.model, self.max_sequence_length
        if length is None and self.profile is not None:
            length = self.profile.max_sequence_length
        if length is None or model.family not in ("flux", "sd3"):
            return model.text_tokens()
        return length + (77 if model.family == "sd3" else 0)

    @property
    def lora_storage(self) -> str:
        if self.lora_dtype is not None:
            return self.lora_dtype
        return self.profile.lora_dtype if self.profile else "fp32"

    @property
    def lora_bytes(self) -> int:
        return FP32 if self.lora_storage == "fp32" else BF16

    @property
    def latents_cached(self) -> bool:
        if self.cache_latents is not None:
            return self.cache_latents
        return bool(self.profile and self.profile.cache_latents)

    @property
    def encoders_resident(self) -> bool:
        cached = self.cache_text_embeddings
        if cached is None and self.profile is not None:
            cached = self.profile.cache_text_embeddings
        if cached is None:
            cached = self.dreambooth and not self.train_text_encoder
        return not cached or self.train_text_encoder


def _attention_only(model: DiffusionModel) -> list[tuple[int, int, int]]:
    """(d, d, count) of to_q, to_k, to_v and to_out.0 of a transformer denoiser (FLUX.1's
    single-stream blocks have no to_out: their output projection is proj_out)."""
    cfg = model.denoiser
    assert isinstance(cfg, MMDiTConfig | FluxConfig)
    if isinstance(cfg, FluxConfig):
        return [(cfg.width, cfg.width, 4 * cfg.num_layers + 3 * cfg.num_single_layers)]
    return [(cfg.width, cfg.width, 4 * (cfg.num_layers + len(cfg.dual_attention_layers)))]


def _attention_linears(model: DiffusionModel) -> list[tuple[int, int, int]]:
    """(d_in, d_out, count) of the denoiser's attention projections (to_q, to_k, to_v,
    to_out.0 and, for joint blocks, add_q/k/v_proj and to_add_out): the diffusers scripts'
    default LoRA targets for SDXL and SD 1.5; FLUX.1 and SD 3 add the MLPs (`ff_layers`)."""
    cfg = model.denoiser
    if isinstance(cfg, UNetConfig):
        out: list[tuple[int, int, int]] = []
        chans, layers = cfg.block_out_channels, cfg.transformer_layers_per_block
        downs = [i for i, k in enumerate(cfg.down_block_types) if k.startswith("CrossAttn")]
        ups = [i for i, k in enumerate(cfg.up_block_types) if k.startswith("CrossAttn")]
        blocks = [(chans[i], layers[i] * cfg.layers_per_block) for i in downs]
        blocks += [(chans[-1 - i], layers[-1 - i] * (cfg.layers_per_block + 1)) for i in ups]
        blocks.append((cfg.block_out_channels[-1], cfg.transformer_layers_per_block[-1]))
        for c, n in blocks:
            x = cfg.cross_attention_dim
            out += [(c, c, 6 * n), (x, c, 2 * n)]  # attn1 q k v out, attn2 q out; attn2 k v
        return out
    assert isinstance(cfg, MMDiTConfig | FluxConfig)
    d = cfg.width
    if isinstance(cfg, FluxConfig):
        double, single = cfg.num_layers, cfg.num_single_layers
        return [(d, d, 8 * double + 3 * single), (d, 4 * d, 2 * double + single),
                (4 * d, d, 2 * double), (5 * d, d, single)]  # fmt: skip
    n = cfg.num_layers
    return [
        (d, d, 8 * n + 4 * len(cfg.dual_attention_layers)),
        (d, 4 * d, 2 * n),
        (4 * d, d, 2 * n),
    ]


def lora_params(
    model: DiffusionModel, rank: int, text_encoder: bool = False, targets: str = "default"
) -> int:
    """LoRA A and B matrices: rank x (d_in + d_out) per adapted linear layer; with
    `text_encoder` also q, k, v and out_proj of every CLIP text encoder layer; `targets`
    "attention" keeps a transformer denoiser's to_q, to_k, to_v and to_out.0 only."""
    attention_only = targets == "attention" and not isinstance(model.denoiser, UNetConfig)
    linears = _attention_only(model) if attention_only else _attention_linears(model)
    total = sum(rank * (i + o) * n for i, o, n in linears)
    if text_encoder:
        for enc in model.text_encoders:
            if isinstance(enc.config, ClipTextConfig):
                total += 4 * enc.layers * rank * 2 * enc.width
    return total


class DiffusionEstimate(BaseModel):
    """Peak bytes on one GPU, by kind and by part, with what was assumed."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    model_name: str
    per_gpu: MemoryBreakdown
    parts: dict[str, int] = Field(description="resident weight bytes by part")
    total_params: int
    trainable_params: int
    activations_per_image: int
    assumptions: list[str]


def _weights(job: DiffusionJob, trainable: int) -> dict[str, int]:
    model = job.model
    frozen = FP8 if job.fp8_base else BF16
    base = FP32 if job.method == "full" else BASE_BYTES[job.base_storage]
    denoiser = round(model.denoiser_params() * base)
    parts: dict[str, int] = {model.denoiser_kind: denoiser}
    if job.encoders_resident:
        for enc in model.text_encoders:
            parts[enc.name] = enc.config.num_params() * frozen
    if not job.latents_cached:
        fp32_vae = model.family == "sdxl" and not job.fixed_vae
        parts["VAE"] = model.vae.num_params() * (FP32 if fp32_vae else BF16)
    if job.method == "lora":
        parts["LoRA adapters"] = trainable * job.lora_bytes
    return parts


def _text_encoder_acts(job: DiffusionJob) -> int:
    if not job.train_text_encoder:
        return 0
    return sum(
        TEXT_ENCODER_ACT_BYTES * e.max_tokens * e.width * e.layers
        for e in job.model.text_encoders
        if isinstance(e.config, ClipTextConfig)
    )


def estimate_diffusion(job: DiffusionJob) -> DiffusionEstimate:
    """Peak training memory per GPU of `job`: resident weights, fp32 gradients and optimizer
    state of the trained parameters, the EMA copy, and the saved activations of the denoiser
    (and trained text encoders) for the step's images, plus the CUDA context and the allocator
    margin on what a step allocates and frees."""
    model = job.model
    trainable = (
        model.denoiser_params()
        if job.method == "full"
        else lora_params(model, job.lora_rank, job.train_text_encoder, job.lora_targets)
    )
    parts = _weights(job, trainable)
    weights = sum(parts.values())
    gradients = trainable * (FP32 if job.method == "full" else job.lora_bytes)
    optimizer = trainable * OPTIMIZER_BYTES[job.optimizer] + (trainable * FP32 if job.ema else 0)
    images = job.micro_batch_size * (2 if job.prior_preservation else 1)
    per_image = denoiser_activations(model, job.resolution, job.text_tokens).kept(
        job.gradient_checkpointing
    )
    activations = images * (per_image + _text_encoder_acts(job))
    if not job.latents_cached:  # the VAE encodes the batch before the denoiser runs
        fp32_vae = model.family == "sdxl" and not job.fixed_vae
        vae_encode = VAE_ENCODE_TENSORS * 128 * job.resolution**2 * (FP32 if fp32_vae else BF16)
        activations = max(activations, images * vae_encode)
    transient = activations + gradients
    overhead = job.cuda_context_bytes + int(job.fragmentation * transient)
    total = weights + gradients + optimizer + activations + overhead
    return DiffusionEstimate(
        model_id=model.id,
        model_name=model.name,
        per_gpu=MemoryBreakdown(
            weights=weights,
            gradients=gradients,
            optimizer=optimizer,
            activations=activations,
            overhead=overhead,
            total=total,
        ),
        parts=parts,
        total_params=model.total_params(),
        trainable_params=trainable,
        activations_per_image=per_image,
        assumptions=_assumptions(job, images),
    )


def _assumptions(job: DiffusionJob, images: int) -> list[str]:
    model = job.model
    side = model.latent_side(job.resolution)
    said = [
        f"{model.name}: {job.resolution} px images give {side} x {side} latents"
        + (
            f", {model.image_tokens(job.resolution)} image tokens (2 x 2 patches) and"
            f" {job.text_tokens} prompt tokens"
            if model.token_patch > 1
            else ""
        )
        + f"; {images} image(s) per step"
        + (" (instance + class images: prior preservation)" if job.prior_preservation else ""),
        "frozen parts in 16-bit, trained parameters, gradients and EMA in fp32 (diffusers"
        " example scripts)"
        if job.method == "full" or job.lora_storage == "fp32"
        else "frozen parts in 16-bit, LoRA weights and gradients in bf16 (SimpleTuner)",
        f"optimizer {job.optimizer}: {OPTIMIZER_BYTES[job.optimizer]} bytes per trained parameter",
        "gradient checkpointing: each block's input kept, one block recomputed at a time"
        if job.gradient_checkpointing
        else "no gradient checkpointing: every block's activations kept",
        "text encoders resident"
        if job.encoders_resident
        else "prompt embeddings pre-computed: text encoders not resident",
        "latents cached: VAE not resident"
        if job.latents_cached
        else "VAE resident, encodes each batch",
    ]
    if job.method == "lora":
        said.append(
            f"LoRA rank {job.lora_rank} on the denoiser's attention"
            + (" and MLP" if model.denoiser_kind != "unet" else "")
            + " layers"
            + (" and the CLIP text encoder(s)" if job.train_text_encoder else "")
        )
    if job.ema:
        said.append("EMA: an fp32 copy of the trained parameters")
    if job.profile is not None:
        said.append(
            f"defaults left open taken from {job.profile.name} (tools/memory/images/stacks.py)"
        )
    if job.fp8_base:
        said.append("frozen denoiser and text encoders stored in FP8 (kohya --fp8_base)")
    elif job.base_storage != "16-bit":
        said.append(
            f"frozen {model.denoiser_kind} stored in {job.base_storage}:"
            f" {BASE_BYTES[job.base_storage]:.3g} bytes per weight"
        )
    return said
