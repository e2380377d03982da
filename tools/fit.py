"""Fit checks: does a job fit the GPUs one has, by how much, and what would make it fit.

`check_fit(spec, vram_gib, gpu_count)` estimates the job as given on `gpu_count` GPUs of
`vram_gib` each (resolved leniently, as in a conversation) and each nearby change that lowers
the memory per GPU: QLoRA (or LoRA for a full fine-tune), a shorter sequence, micro-batch 1 with
gradient accumulation, full recomputation, an 8-bit optimizer, ZeRO-3 over the GPUs, optimizer
offload, and those that keep the method all together. Every figure is the estimator's.
A diffusion or vision-language job (no language estimator input) tries the changes its image
estimator reads: full recomputation, an 8-bit optimizer, LoRA for a full fine-tune and, for a
VLM on several GPUs, ZeRO-3.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.advice import Assumed, estimate_job
from tools.job import JobSpec
from tools.job.defaults import MEMORY_MARGIN
from tools.memory import EstimateInput
from tools.units import GIB

__all__ = ["FitChange", "FitCheck", "FitWay", "check_fit"]
FitChange = Literal[
    "qlora", "lora", "shorter_sequence", "micro_batch_1", "recomputation", "optimizer_8bit",
    "zero3", "offload_optimizer", "combined",
]  # fmt: skip
_SHORTEST_SEQ = 256
_SHOWN = ("method", "seq_len", "micro_batch_size", "gradient_checkpointing", "optimizer",
          "zero_stage")  # fmt: skip


class FitWay(BaseModel):
    """One change to the job and the memory per GPU it then needs."""

    model_config = ConfigDict(frozen=True)

    change: FitChange
    settings: dict[str, Any] = Field(description="the job fields this way changes, JSON-safe")
    need_bytes: int = Field(description="estimated peak memory per GPU with the change")
    fits: bool


class FitCheck(BaseModel):
    """Whether a job fits the memory of a GPU one has, by how much, and the nearest ways to fit."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    model_name: str
    gpu_count: int = Field(description="GPUs one has (the job's data-parallel degree)")
    vram_bytes: int = Field(description="memory per GPU checked against")
    need_bytes: int = Field(description="estimated peak memory per GPU of the job as given")
    spare_bytes: int = Field(description="vram - need: negative when it does not fit")
    fits: bool = Field(description="need <= vram")
    tight: bool = Field(
        False, description="it fits, but not with the ranking's memory margin: it may run out"
    )
    margin: float = Field(MEMORY_MARGIN, description="the margin `tight` is judged by")
    settings: dict[str, Any] = Field(description="the job's training and plan fields as resolved")
    ways: list[FitWay] = Field(description="single changes that lower the need, fitting first")
    assumed: list[Assumed] = Field(
        default_factory=list,
        description="the defaults the check used for open training and plan fields",
    )


def check_fit(
    spec: JobSpec, vram_gib: float, gpu_count: int = 1, margin: float = MEMORY_MARGIN
) -> FitCheck:
    """The job on `gpu_count` GPUs of `vram_gib` each (leniently resolved): the verdict (tight
    when it fits without `margin` but not with it, as the ranking judges), the spare (or
    missing) memory, and what each nearby change would need."""
    base_spec = spec.model_copy(update={"num_gpus": gpu_count})
    resolved, base = estimate_job(base_spec, strict=False)
    job = resolved.estimate_input
    vram = round(vram_gib * GIB)
    need = base.per_gpu.total
    ways = []
    if job is None:  # an image model: the fields its estimator read
        settings = {**resolved.assumed_values(), **base_spec.filled()}
        settings = {k: settings.get(k) for k in _SHOWN}
        candidates = _image_changes(settings, gpu_count)
    else:
        settings = job.model_dump(mode="json", include=set(_SHOWN))
        candidates = _fit_changes(job, gpu_count)
    keep_method = [change for name, change in candidates if name not in ("qlora", "lora")]
    if len(keep_method) > 1:  # every change that keeps the method, together
        merged: dict[str, Any] = {}
        for change in keep_method:
            merged |= change
        candidates.append(("combined", merged))
    for name, change in candidates:
        _, est = estimate_job(base_spec.model_copy(update=change), strict=False)
        ways.append(FitWay(change=name, settings=change, need_bytes=est.per_gpu.total,
                           fits=est.per_gpu.total <= vram))  # fmt: skip
    useful = [w for w in ways if w.need_bytes < need]
    useful.sort(key=lambda w: (not w.fits, w.change == "combined", w.need_bytes))
    return FitCheck(
        model_id=base.model_id,
        model_name=base.model_name,
        gpu_count=gpu_count,
        vram_bytes=vram,
        need_bytes=need,
        spare_bytes=vram - need,
        fits=need <= vram,
        tight=need <= vram < need * (1 + margin),
        margin=margin,
        settings=settings,
        ways=useful,
        assumed=resolved.shown_assumptions("estimate"),
    )


def _image_changes(
    values: dict[str, Any], gpu_count: int
) -> list[tuple[FitChange, dict[str, Any]]]:
    """The changes an image-model job's estimator reads (see the module docstring)."""
    changes: list[tuple[FitChange, dict[str, Any]]] = []
    if values.get("method") == "full":
        changes.append(("lora", {"method": "lora"}))
    if values.get("gradient_checkpointing") != "full":
        changes.append(("recomputation", {"gradient_checkpointing": "full"}))
    if values.get("optimizer") == "adamw":
        changes.append(("optimizer_8bit", {"optimizer": "adamw-8bit"}))
    if gpu_count > 1 and values.get("seq_len") is not None and (values.get("zero_stage") or 0) < 3:
        changes.append(("zero3", {"zero_stage": 3}))  # a VLM: its language model shards
    return changes


def _fit_changes(job: EstimateInput, gpu_count: int) -> list[tuple[FitChange, dict[str, Any]]]:
    """The single changes worth estimating for `job`: each sets one or two job fields."""
    changes: list[tuple[FitChange, dict[str, Any]]] = []
    if job.method != "qlora":
        changes.append(("qlora", {"method": "qlora", "optimizer": "paged-adamw-8bit"}))
    if job.method in ("full", "pretrain"):
        changes.append(("lora", {"method": "lora"}))
    if job.seq_len > _SHORTEST_SEQ:
        changes.append(("shorter_sequence", {"seq_len": max(_SHORTEST_SEQ, job.seq_len // 2)}))
    if job.micro_batch_size > 1:
        steps = job.micro_batch_size * job.gradient_accumulation_steps
        changes.append(("micro_batch_1", {"micro_batch_size": 1,
                                          "gradient_accumulation_steps": steps}))  # fmt: skip
    if job.gradient_checkpointing != "full":
        changes.append(("recomputation", {"gradient_checkpointing": "full"}))
    if job.method in ("full", "pretrain") and job.optimizer == "adamw":
        changes.append(("optimizer_8bit", {"optimizer": "adamw-8bit"}))
    if gpu_count > 1 and job.zero_stage < 3:
        changes.append(("zero3", {"zero_stage": 3}))
    if job.method in ("full", "pretrain") and not job.offload_optimizer:
        stage = max(job.zero_stage, 3 if gpu_count > 1 else 1)
        changes.append(("offload_optimizer", {"zero_stage": stage, "offload_optimizer": True}))
    return changes
