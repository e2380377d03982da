"""Image-model jobs (diffusion pipelines, vision-language models) as a `MemoryEstimate`.

`estimate_image_job(model, values)` takes the job's resolved values (JobSpec field names) and
returns the same `MemoryEstimate` a language-model job gives, so every interface shows these
jobs unchanged: a diffusion job through tools/memory/images/diffusion.py (one GPU's bytes;
data parallelism replicates them), a vision-language job through tools/memory/images/vision.py
(the language model's estimate with the vision side added).
"""

from __future__ import annotations

from typing import Any

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.vision import VisionLanguageModel
from tools.errors import InvalidInputError
from tools.memory.images.diffusion import DiffusionJob, estimate_diffusion
from tools.memory.images.vision import estimate_vlm
from tools.memory.results import (
    ActivationsDetail,
    BytesPerParam,
    HostRam,
    MemoryEstimate,
    ModelStatesDetail,
    MomentBytes,
    OverheadDetail,
    ReportedFigures,
)

__all__ = ["DIFFUSION_FIELDS", "VLM_FIELDS", "diffusion_job", "estimate_image_job"]

# The job fields each kind of image model reads (the rest of a job's training fields are the
# language model's, for VLMs, or not used, for diffusion).
DIFFUSION_FIELDS = (
    "method", "precision", "optimizer", "lora_rank", "micro_batch_size", "gradient_checkpointing",
    "resolution", "dreambooth", "prior_preservation", "train_text_encoder", "cache_latents",
    "cache_text_embeddings", "ema", "num_gpus",
)  # fmt: skip
VLM_FIELDS = ("resolution", "train_vision_tower", "images_per_sample")
_DIFFUSION_VALID = {
    "method": "lora or full for a diffusion model",
    "precision": "bf16-mixed, fp16-mixed or bf16 for a diffusion model",
    "optimizer": "adamw, adamw-8bit or adafactor for a diffusion model",
}


def diffusion_job(model: DiffusionModel, values: dict[str, Any]) -> DiffusionJob:
    """The one-GPU diffusion setup `values` describe (JobSpec field names), checked."""
    for name, valid in _DIFFUSION_VALID.items():
        allowed = valid.split(" for ")[0].replace(" or ", ", ").split(", ")
        if values[name] not in allowed:
            raise InvalidInputError(name, values[name], valid)
    return DiffusionJob(
        model=model,
        method=values["method"],
        dreambooth=bool(values["dreambooth"]),
        precision=values["precision"],
        optimizer=values["optimizer"],
        lora_rank=values["lora_rank"],
        resolution=values["resolution"] or model.default_resolution,
        micro_batch_size=values["micro_batch_size"],
        gradient_checkpointing=values["gradient_checkpointing"] != "none",
        train_text_encoder=values["train_text_encoder"],  # None: the stack's
        prior_preservation=bool(values["prior_preservation"]),
        cache_latents=values["cache_latents"],
        cache_text_embeddings=values["cache_text_embeddings"],
        ema=bool(values["ema"]),
        stack=values.get("stack"),
    )


def _diffusion(model: DiffusionModel, values: dict[str, Any]) -> MemoryEstimate:
    job = diffusion_job(model, values)
    est = estimate_diffusion(job)
    b = est.per_gpu
    transient = b.activations + b.gradients
    dp = int(values.get("num_gpus") or 1)
    replicated = [f"{dp} GPUs in data parallel: each holds all of this"] if dp > 1 else []
    return MemoryEstimate(
        model_id=est.model_id,
        model_name=est.model_name,
        per_gpu=b,
        cpu_offload_bytes=0,
        host_ram=HostRam(),
        total_params=est.total_params,
        trainable_params=est.trainable_params,
        data_parallel=dp,
        tensor_parallel=1,
        total_gpus=dp,
        bytes_per_param=BytesPerParam(
            weights=b.weights / est.total_params,
            gradients=b.gradients / max(1, est.trainable_params),
            optimizer=b.optimizer / max(1, est.trainable_params),
        ),
        model_states=ModelStatesDetail(
            unsharded_weights=b.weights,
            unsharded_gradients=b.gradients,
            unsharded_optimizer=b.optimizer,
            zero3_gathered_weights=0,
            zero3_gathered_gradients=0,
            qlora_dequant_buffer=0,
        ),
        activations=ActivationsDetail(
            layers=[], head={}, logits_peak=0, recompute_working_set=0, total=b.activations
        ),
        overhead=OverheadDetail(
            cuda_context=job.cuda_context_bytes,
            comm_buffers=0,
            fragmentation=b.overhead - job.cuda_context_bytes,
            transient=transient,
        ),
        peak_moment="backward",
        moments=[
            MomentBytes(
                name="backward",
                weights=b.weights,
                gradients=b.gradients,
                optimizer=b.optimizer,
                activations=b.activations,
                total=b.total - b.overhead,
            )
        ],
        figures=ReportedFigures(
            allocated=b.total - b.overhead,
            reserved=b.total - job.cuda_context_bytes,
            device=b.total,
            evictable=0,
            required=b.total,
        ),
        uncertainty=None,
        assumptions=[*est.assumptions, *replicated],
        engine="pytorch",
        optimizer_impl="foreach",
    )


def _vlm(model: VisionLanguageModel, values: dict[str, Any], lm: dict[str, Any]) -> MemoryEstimate:
    images = values["images_per_sample"]
    text = int(lm.pop("seq_len", 2048))
    est = estimate_vlm(
        model,
        text_tokens=text,
        images_per_sample=images,
        resolution=values["resolution"],
        train_vision_tower=bool(values["train_vision_tower"]),
        **lm,
    )
    figures = est.language.figures
    added = est.per_gpu.total - est.language.per_gpu.total
    return est.language.model_copy(
        update={
            "model_id": est.model_id,
            "model_name": est.model_name,
            "per_gpu": est.per_gpu,
            "total_params": est.total_params,
            "trainable_params": est.trainable_params,
            "figures": figures.model_copy(
                update={
                    "allocated": figures.allocated + added,
                    "reserved": figures.reserved + added,
                    "device": est.per_gpu.total,
                    "required": figures.required + added,
                }
            ),
            "assumptions": [
                *est.assumptions[:3],
                f"seq_len {text} is the text part; with the images {est.seq_len} tokens",
                *est.assumptions[3:],
            ],
        }
    )


def estimate_image_job(
    model: DiffusionModel | VisionLanguageModel,
    values: dict[str, Any],
    language_fields: dict[str, Any] | None = None,
) -> MemoryEstimate:
    """The estimate of an image-model job: `values` holds the job's resolved image fields (and,
    for diffusion, its training fields and `stack`: the fields it fills are None when open);
    `language_fields` the estimator fields for a VLM's language model."""
    if isinstance(model, DiffusionModel):
        return _diffusion(model, values)
    return _vlm(model, values, dict(language_fields or {}))
