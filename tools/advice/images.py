"""Jobs on image models (diffusion pipelines, vision-language models) for `tools.advice`.

`image_fields` resolves such a job's open fields through the job defaults (recording each one
used) into the values the image estimator reads, which the ranking holds as an `ImageJob`
(`tools.advice.image_rank`); `estimate_image_spec` estimates them with the plan the spec gives;
`image_workload` sizes the run (steps x batch or images x epochs for diffusion; samples for
VLMs, as for language models). Which image model a job names is
`tools.advice.estimate.image_model`. Nothing here needs the ranking, so an image model's
estimate does not load it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tools.architectures.diffusion import DiffusionModel
from tools.job import JobSpec
from tools.job.spec import FIELD_GROUPS, IMAGE_FIELDS
from tools.memory.images.jobs import DIFFUSION_FIELDS, VLM_FIELDS, estimate_image_job
from tools.memory.images.stacks import check_stack

if TYPE_CHECKING:
    from tools.architectures.multimodal import MultimodalModel
    from tools.ranking.images import ImageJob

__all__ = ["estimate_image_spec", "image_fields", "image_workload"]

ValueOf = Callable[[str, Any], Any]
_LANGUAGE_SHOWN = (
    "method", "precision", "optimizer", "lora_rank", "micro_batch_size", "seq_len",
    "gradient_checkpointing",
)  # fmt: skip
_LORA_FIELDS = ("lora_rank", "lora_alpha", "lora_targets", "lora_dropout")
# Diffusion fields an image trainer's profile fills when the job leaves them open.
_STACK_FILLED = ("lora_rank", "train_text_encoder", "cache_latents", "cache_text_embeddings")


def image_fields(
    spec: JobSpec, model: MultimodalModel, value_of: ValueOf, side: int, plan: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the image estimator's fields, a VLM's language-model estimator fields) of the job on
    `model` at `side` px, every default used recorded by `value_of`: what an `ImageJob` holds.
    `plan` keeps the spec's plan (GPUs, ZeRO) for an estimate, else the ranking chooses it."""
    method = value_of("method", None)
    if isinstance(model, DiffusionModel):
        check_stack(spec.stack, "diffusion")
        names = [n for n in DIFFUSION_FIELDS if n not in ("method", "resolution", "num_gpus")]
        values = {name: _diffusion_value(spec, name, value_of, method) for name in names}
        values.update(method=method, resolution=side, stack=spec.stack)
        if plan:
            values["num_gpus"] = value_of("num_gpus", method)
        else:
            values["gradient_accumulation_steps"] = value_of("gradient_accumulation_steps", method)
        return values, {}
    check_stack(spec.stack, "language")
    values = {n: value_of(n, method) for n in VLM_FIELDS if n != "resolution"}
    language: dict[str, Any] = {"method": method}
    for name in _LANGUAGE_SHOWN[1:]:
        if name in _LORA_FIELDS and method not in ("lora", "qlora"):
            continue
        language[name] = value_of(name, method)
    groups = FIELD_GROUPS["training"] + (FIELD_GROUPS["plan"] if plan else ())
    for name in groups:
        if name in IMAGE_FIELDS or name in language or name == "cuda_context_gib":
            continue
        if getattr(spec, name) is not None:
            language[name] = getattr(spec, name)
    return {**values, "resolution": side}, language


def _diffusion_value(spec: JobSpec, name: str, value_of: ValueOf, method: str | None) -> Any:
    """The job's value, None where its image trainer (`stack`) fills what is left open, else
    the job default."""
    if spec.stack is not None and name in _STACK_FILLED and getattr(spec, name) is None:
        return None
    return value_of(name, method)


def estimate_image_spec(spec: JobSpec, model: MultimodalModel, value_of: ValueOf, side: int) -> Any:
    """The MemoryEstimate of `spec` on `model` at `side` px, on the plan the spec gives; every
    default used is recorded by `value_of`."""
    values, language = image_fields(spec, model, value_of, side, plan=True)
    return estimate_image_job(model, values, language)


def image_workload(spec: JobSpec, job: ImageJob, value_of: ValueOf) -> tuple[float, float, str]:
    """(training images or samples over the run, distinct images staged, how it was reckoned).

    Diffusion: steps x images per step (micro-batch x accumulation) when steps are given or
    nothing is, else images x epochs. VLMs: samples x epochs, or images / images per sample,
    steps x batch, or tokens / (text + image tokens) as for a language model (its default
    token count when nothing is given)."""
    if isinstance(job.model, DiffusionModel):
        batch = int(job.values["micro_batch_size"]) * int(job.values["gradient_accumulation_steps"])
        if spec.steps is not None or spec.images is None:
            steps = int(value_of("steps", None))
            images = float(steps * batch)
            text = f"{steps} steps x {batch} image(s) per step = {images:,.0f} training images"
            return images, float(spec.images or images), text
        epochs = float(value_of("epochs", None))
        text = f"{spec.images:,} images x {epochs:g} epoch(s) = {spec.images * epochs:,.0f}"
        return spec.images * epochs, float(spec.images), f"{text} training images"
    return _vlm_workload(spec, job, value_of)


def _vlm_workload(spec: JobSpec, job: ImageJob, value_of: ValueOf) -> tuple[float, float, str]:
    assert not isinstance(job.model, DiffusionModel)
    per_sample = int(job.values["images_per_sample"])
    seq = int(job.language.get("seq_len") or 2048)
    seq += per_sample * job.model.image_tokens(int(job.values["resolution"]))
    if spec.steps is not None:
        batch = int(job.language.get("micro_batch_size") or 1)
        batch *= int(spec.gradient_accumulation_steps or 1)
        samples = float(spec.steps * batch)
        text = f"{spec.steps} steps x {batch} sample(s) per step = {samples:,.0f} samples"
        return samples, samples * per_sample, text
    if spec.samples is not None:
        per_epoch, what = float(spec.samples), f"{spec.samples:,} samples"
    elif spec.images is not None:
        per_epoch = float(spec.images) / max(1, per_sample)
        what = f"{spec.images:,} images / {max(1, per_sample)} per sample"
    else:
        tokens = float(value_of("tokens", None))
        per_epoch, what = tokens / seq, f"{tokens:,.0f} tokens / {seq:,} tokens per sample"
    epochs = float(value_of("epochs", None))
    samples = per_epoch * epochs
    text = f"{what} x {epochs:g} epoch(s) = {samples:,.0f} image-text samples of {seq:,} tokens"
    return samples, max(1.0, per_epoch * per_sample), text
