"""Training memory of a vision-language model: the language model with the image tokens in its
sequence, plus the vision tower and projector, each frozen or trained.

The language model is counted by the estimator (tools/memory/estimator.py) over a sequence of
the text tokens plus every image's tokens (LLaVA 1.5: 576 per image at 336 px; Qwen2-VL: one
per 28 x 28 pixels). The vision side, as the common trainers run it:
- LLaVA's scripts/v1_5/finetune_lora.sh trains LoRA on the language model and the projector in
  full (`mm_projector_lr`), the CLIP tower frozen (`freeze_vision_tower`); full fine-tuning
  (finetune.sh) trains the projector and the language model, the tower still frozen;
- Qwen2-VL full fine-tuning (e.g. LLaMA-Factory's qwen2vl_full_sft.yaml, `freeze_vision_tower`
  true by default) keeps the tower frozen too; `train_vision_tower` trains it.
A frozen tower runs without an autograd graph (its parameters do not require gradients and the
pixels do not either), so it keeps no activations; its weights sit in 16-bit, as the language
model's frozen base. A trained part is counted at the language model's bytes per trained
parameter (weights, gradients, optimizer state of the same precision and optimizer), sharded
as the language model's under ZeRO (stage 1 the optimizer state, 2 also gradients, 3 also
weights, frozen ones included). A trained
tower keeps 34 bytes per token x width per layer (Korthikanti et al. 2022, section 4.1, without
dropout and with fused attention), or its layer inputs (2 bytes) plus one layer under
recomputation.
Llama 3.2 Vision (mllama) adds no image token to the sequence: the language model (a Llama
decoder with its 8 cross-attention layers counted as decoder layers over the text) keeps, per
image, the projected vision states (vision tokens x hidden, 16-bit; the input of every
cross-attention k/v projection) and each cross-attention layer's k and v over the vision tokens
(one layer's under recomputation).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tools.architectures.vision import VisionLanguageModel
from tools.errors import InvalidInputError
from tools.job.limits import MAX_SEQ_LEN
from tools.memory.estimator import estimate
from tools.memory.inputs import EstimateInput
from tools.memory.results import MemoryBreakdown, MemoryEstimate

__all__ = ["VlmEstimate", "estimate_vlm"]

BF16, FP32 = 2, 4.0
TOWER_ACT_BYTES = 34
CHECKPOINT_INPUT_BYTES = 2


class VlmEstimate(BaseModel):
    """Peak bytes per GPU: the language model's estimate and the vision side added to it."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    model_name: str
    per_gpu: MemoryBreakdown
    language: MemoryEstimate
    image_tokens_per_image: int
    seq_len: int = Field(description="language-model tokens per sample, images included")
    total_params: int
    trainable_params: int
    assumptions: list[str]


def _tower_activations(vlm: VisionLanguageModel, images: int, resolution: int, ckpt: bool) -> int:
    tower = vlm.vision
    elements = vlm.vision_tokens(resolution) * tower.width
    per_layer = TOWER_ACT_BYTES * elements
    if ckpt:
        return images * (tower.layers * CHECKPOINT_INPUT_BYTES * elements + per_layer)
    return images * tower.layers * per_layer


def _cross_attention_activations(
    vlm: VisionLanguageModel, images: int, resolution: int, ckpt: bool
) -> int:
    extras = vlm.cross_attention
    if extras is None:
        return 0
    tokens = images * vlm.vision_tokens(resolution)
    states = tokens * vlm.language.hidden_size * BF16
    kv = tokens * 2 * extras.kv_width * BF16
    return states + (1 if ckpt else extras.layers) * kv


def _image_line(vlm: VisionLanguageModel, images: int, side: int, seq_len: int) -> str:
    if vlm.cross_attention is not None:
        return (
            f"{images} image(s) of {side} px per sample: {vlm.vision_tokens(side)} vision"
            f" tokens each, attended by {vlm.cross_attention.layers} cross-attention layers"
            f" (not in the sequence); {seq_len} text tokens"
        )
    per_image = vlm.image_tokens(side)
    return (
        f"{images} image(s) of {side} px per sample: {per_image} image tokens"
        f" each, {seq_len} language-model tokens with {seq_len - images * per_image} text tokens"
    )


def estimate_vlm(
    vlm: VisionLanguageModel,
    *,
    text_tokens: int = 512,
    images_per_sample: int = 1,
    resolution: int | None = None,
    train_vision_tower: bool = False,
    train_projector: bool = True,
    **settings: Any,
) -> VlmEstimate:
    """Peak training memory per GPU of `vlm`; `settings` are the estimator's fields for the
    language model (method, precision, optimizer, micro_batch_size, checkpointing, ...)."""
    side = resolution or vlm.default_resolution
    per_image = vlm.image_tokens(side)
    seq_len = text_tokens + images_per_sample * per_image
    if seq_len > MAX_SEQ_LEN or images_per_sample < 0:
        raise InvalidInputError("images_per_sample", images_per_sample, "0 or more images")
    lm = estimate(EstimateInput(model=vlm.language, seq_len=seq_len, **settings))
    job = EstimateInput(model=vlm.language, **settings)
    trained = vlm.projector_params() if train_projector else 0
    frozen = 0 if train_projector else vlm.projector_params()
    if train_vision_tower:
        trained += vlm.vision_params()
    else:
        frozen += vlm.vision_params()
    images = images_per_sample * job.micro_batch_size
    ckpt = job.gradient_checkpointing != "none"
    acts = _tower_activations(vlm, images, side, ckpt) if train_vision_tower else 0
    acts += _cross_attention_activations(vlm, images, side, ckpt)
    extra = vlm.cross_attention_params()  # beyond the decoder: trained as the decoder is
    if job.method in ("full", "pretrain"):
        trained += extra
    else:
        frozen += extra
    b, dp, zero = lm.per_gpu, job.num_gpus, job.zero_stage
    shard_w, shard_g, shard_o = (
        (dp if zero >= 3 else 1),
        (dp if zero >= 2 else 1),
        (dp if zero else 1),
    )
    # a trained part of a LoRA job is trained in full, in fp32 as the adapters are
    per_weight = lm.bytes_per_param.weights if job.method in ("full", "pretrain") else FP32
    extra_weights = (frozen * BF16 + round(trained * per_weight)) // shard_w
    gradients = round(trained * lm.bytes_per_param.gradients) // shard_g
    extra_states = gradients + round(trained * lm.bytes_per_param.optimizer) // shard_o
    per_gpu = MemoryBreakdown(
        weights=b.weights + extra_weights,
        gradients=b.gradients + gradients,
        optimizer=b.optimizer + extra_states - gradients,
        activations=b.activations + acts,
        overhead=b.overhead,
        total=b.total + extra_weights + extra_states + acts,
    )
    return VlmEstimate(
        model_id=vlm.id,
        model_name=vlm.name,
        per_gpu=per_gpu,
        language=lm,
        image_tokens_per_image=per_image,
        seq_len=seq_len,
        total_params=vlm.total_params(),
        trainable_params=lm.trainable_params + trained,
        assumptions=[
            _image_line(vlm, images_per_sample, side, seq_len),
            "vision tower trained"
            if train_vision_tower
            else "vision tower frozen: 16-bit weights, no activations kept",
            "projector trained in full" if train_projector else "projector frozen",
            *lm.assumptions,
        ],
    )
