"""The job's fields by name and group, without the model that holds them (`tools.job.spec`).

`FIELD_GROUPS` orders the fields in five groups (the model, how it trains, the parallel plan of
one estimate, the data, the limits and objective of a ranking); every interface lists them in
that order. `MECHANISM_FIELDS` are a training stack's memory mechanisms, `IMAGE_FIELDS` how image
models train; `FieldName` names every field (checked against `JobSpec` where it is defined).
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["FIELD_GROUPS", "IMAGE_FIELDS", "MECHANISM_FIELDS", "FieldGroup", "FieldName"]

FieldGroup = Literal["model", "training", "plan", "data", "limits"]

# The memory mechanisms of a training stack: each open one takes the stack profile's value
# (tools/memory/stacks/profiles.py).
MECHANISM_FIELDS: Final = (
    "loss", "selective_checkpointing", "activation_offload", "optimizer_in_backward",
    "frozen_base_dtype", "qlora_keeps_input", "qlora_lm_head", "repeat_kv", "fused_rmsnorm",
    "compile", "loop_keeps_output",
)  # fmt: skip
# How image models train (diffusion and vision-language models); open ones take the values of
# tools/job/defaults.py for those models and are not used for language models.
IMAGE_FIELDS: Final = (
    "resolution", "dreambooth", "prior_preservation", "train_text_encoder", "cache_latents",
    "cache_text_embeddings", "ema", "train_vision_tower", "images_per_sample",
)  # fmt: skip
FIELD_GROUPS: Final[dict[FieldGroup, tuple[str, ...]]] = {
    "model": ("model",),
    "training": (
        "method", "precision", "optimizer", "lora_rank", "lora_alpha", "lora_targets",
        "lora_dropout", "qlora_double_quant", "micro_batch_size", "seq_len",
        "gradient_checkpointing", "attention", "gradient_accumulation_steps", "tensor_parallel",
        "sequence_parallel", "engine", "optimizer_impl", "cuda_context_gib", "fragmentation",
        "stack", "stack_version", *MECHANISM_FIELDS, *IMAGE_FIELDS,
    ),
    "plan": ("num_gpus", "zero_stage", "sharding", "offload_optimizer", "offload_params"),
    "data": ("tokens", "samples", "epochs", "images", "steps"),
    "limits": (
        "max_price_per_hour", "budget", "deadline_hours", "spot", "providers", "regions", "gpus",
        "max_vram_gib", "min_gpus", "max_gpus", "interconnect", "max_nodes", "objective",
    ),
}  # fmt: skip
FieldName = Literal[
    "model", "method", "precision", "optimizer", "lora_rank", "lora_alpha", "lora_targets",
    "lora_dropout", "qlora_double_quant", "micro_batch_size", "seq_len", "gradient_checkpointing",
    "attention", "gradient_accumulation_steps", "tensor_parallel", "sequence_parallel", "engine",
    "optimizer_impl", "cuda_context_gib", "fragmentation", "stack", "stack_version", "loss",
    "selective_checkpointing", "activation_offload", "optimizer_in_backward", "frozen_base_dtype",
    "qlora_keeps_input", "qlora_lm_head", "repeat_kv", "fused_rmsnorm", "compile",
    "loop_keeps_output", "resolution", "dreambooth", "prior_preservation", "train_text_encoder",
    "cache_latents",
    "cache_text_embeddings", "ema", "train_vision_tower", "images_per_sample", "num_gpus",
    "zero_stage", "sharding", "offload_optimizer", "offload_params", "tokens", "samples", "epochs",
    "images", "steps", "max_price_per_hour", "budget", "deadline_hours", "spot", "providers",
    "regions", "gpus", "max_vram_gib", "min_gpus", "max_gpus", "interconnect", "max_nodes",
    "objective",
]  # fmt: skip
