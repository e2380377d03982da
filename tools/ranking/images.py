"""Ranking image-model jobs: diffusion fine-tuning and vision-language models.

An `ImageRankRequest` holds the resolved image job (`ImageJob`: the model and the values the
image estimator reads, `tools.memory.images.jobs`) and the run's size in images (diffusion) or
image-text samples (VLMs); `tools.ranking.rank` ranks it with the same screens, setup model,
failure and spot courses, billing and order as a language job (`prepare_image_job` builds the
shared `PreparedJob`).

Plans, as the trainers run these jobs:
- diffusion: one GPU, or DDP over several (the diffusers example scripts, kohya sd-scripts,
  SimpleTuner and ai-toolkit train data-parallel through Accelerate; each GPU holds the whole
  job), so more GPUs divide the time, never the memory;
- VLMs: one GPU, DDP, ZeRO-2 or ZeRO-3 (LLaVA's scripts and LLaMA-Factory run DeepSpeed
  ZeRO-2/3 configs), sized by the image estimator with the plan's ZeRO stage and data ranks.
No tensor or pipeline parallelism and no CPU offload plans: those trainers do not use them.
`ImageSearch` finds, per machine shape, the fewest nodes and the simplest plan that fits.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.vision import VisionLanguageModel
from tools.enums import Objective
from tools.job import DEFAULTS
from tools.memory import MemoryEstimate
from tools.memory.images.jobs import estimate_image_job
from tools.ranking.models import Constraints, RankingAssumptions
from tools.ranking.plans import NoFit, PlanFit, PlanName

__all__ = ["ImageJob", "ImageRankRequest", "ImageSearch"]

_PLAN_FIELDS = ("num_gpus", "zero_stage", "sharding", "offload_optimizer", "offload_params")
_PLANS: dict[str, PlanName] = {"zero2": "zero2", "zero3": "zero3"}
_KINDS: dict[str, tuple[str, ...]] = {
    "diffusion": ("replicated",),
    "vlm": ("replicated", "zero2", "zero3"),
}


class ImageJob(BaseModel):
    """An image-model job as the image estimator reads it: `values` the image fields (and, for
    diffusion, the training fields), `language` a VLM's language-model estimator fields (the
    text part of seq_len); plan fields are the ranking's, per plan."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    model: DiffusionModel | VisionLanguageModel
    values: dict[str, Any]
    language: dict[str, Any] = Field(default_factory=dict)

    @property
    def kind(self) -> Literal["diffusion", "vlm"]:
        return "diffusion" if isinstance(self.model, DiffusionModel) else "vlm"

    @property
    def method(self) -> str:
        return str(self.language.get("method") or self.values["method"])

    @property
    def precision(self) -> str:
        return str(self.language.get("precision") or self.values["precision"])

    @property
    def tensor_parallel(self) -> int:
        return 1

    def estimate(self, plan: PlanName, gpu_count: int) -> MemoryEstimate:
        """The image estimator's answer for `plan` on `gpu_count` data-parallel GPUs."""
        if isinstance(self.model, DiffusionModel):
            return estimate_image_job(self.model, {**self.values, "num_gpus": gpu_count})
        language = {k: v for k, v in self.language.items() if k not in _PLAN_FIELDS}
        zero = {"zero2": 2, "zero3": 3}.get(plan, 0)
        language.update(num_gpus=gpu_count, zero_stage=zero)
        if zero:
            language["engine"] = "deepspeed"
        return estimate_image_job(self.model, self.values, language)


class ImageRankRequest(BaseModel):
    """An image-model job, how much it trains on, the limits and the objective."""

    model_config = ConfigDict(extra="forbid")

    job: ImageJob
    images: float = Field(
        gt=0,
        description="training images (diffusion) or image-text samples (VLMs) over the run",
    )
    images_per_epoch: float = Field(gt=0, description="distinct images staged before training")
    work: str = Field(description="how the run's size was reckoned, in words")
    constraints: Constraints = Field(default_factory=Constraints)
    objective: Objective = Field(default=DEFAULTS["objective"].value)
    assumptions: RankingAssumptions = Field(default_factory=RankingAssumptions)
    top: int | None = Field(default=None, ge=1)


class ImageSearch:
    """The first plan that fits an image job on a machine shape: fewest nodes, then the
    simplest plan (single GPU or DDP, ZeRO-2, ZeRO-3); estimates cached per plan and GPUs."""

    def __init__(self, job: ImageJob, margin: float) -> None:
        self._job = job
        self._margin = margin
        self._kinds = _KINDS[job.kind]
        self._cache: dict[tuple[str, int], MemoryEstimate] = {}
        self._fits: dict[tuple[int, float, range], PlanFit | NoFit | None] = {}

    def estimate(
        self, plan: PlanName, gpu_count: int, tensor: int | None = None, pipeline: int = 1
    ) -> MemoryEstimate:
        key = (plan, gpu_count)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._job.estimate(plan, gpu_count)
        return found

    @property
    def estimator_calls(self) -> int:
        return len(self._cache)

    def pipelined(self, fit: PlanFit, gpus_per_node: int, vram_bytes: float) -> list[PlanFit]:
        """No pipelined layouts: image trainers do not use them."""
        return []

    def fit(
        self,
        gpus_per_node: int,
        vram_bytes: float,
        node_counts: range,
        host_ram_bytes: float | None,
    ) -> PlanFit | NoFit | None:
        """The fitting plan on the fewest nodes (the simplest on a tie), else the smallest need
        seen; None when no node count is allowed."""
        key = (gpus_per_node, vram_bytes, node_counts)
        if key not in self._fits:
            found = self._first(gpus_per_node, vram_bytes / (1.0 + self._margin), node_counts)
            if isinstance(found, NoFit) and found.need_per_gpu_bytes <= vram_bytes:
                tight = self._first(gpus_per_node, vram_bytes, node_counts)  # see PlanSearch
                found = replace(tight, tight=True) if isinstance(tight, PlanFit) else found
            self._fits[key] = found
        return self._fits[key]

    def _first(self, per_node: int, limit: float, counts: range) -> PlanFit | NoFit | None:
        best: PlanFit | None = None
        closest: NoFit | None = None
        for kind in self._kinds:
            valid = [n for n in counts if kind == "replicated" or n * per_node >= 2]
            if not valid:
                continue
            found, miss = self._smallest(kind, valid, per_node, limit)
            if found is not None and (best is None or found.position < best.position):
                best = found
            if miss is not None and (
                closest is None or miss.need_per_gpu_bytes < closest.need_per_gpu_bytes
            ):
                closest = miss
        return best or closest

    def _attempt(self, kind: str, nodes: int, per_node: int, limit: float) -> PlanFit | NoFit:
        gpus = nodes * per_node
        plan = _PLANS[kind] if kind != "replicated" else ("single" if gpus == 1 else "ddp")
        est = self.estimate(plan, gpus)
        need = int(est.per_gpu.total)
        if need <= limit:
            return PlanFit(plan, nodes, gpus, need, est)
        return NoFit(need, plan, gpus, False)

    def _smallest(
        self, kind: str, counts: list[int], per_node: int, limit: float
    ) -> tuple[PlanFit | None, NoFit | None]:
        """The smallest node count where `kind` fits (needs shrink with more data ranks)."""
        last = self._attempt(kind, counts[-1], per_node, limit)
        if isinstance(last, NoFit):
            return None, last
        low, high, found = 0, len(counts) - 1, last
        while low < high:
            middle = (low + high) // 2
            got = self._attempt(kind, counts[middle], per_node, limit)
            if isinstance(got, PlanFit):
                high, found = middle, got
            else:
                low = middle + 1
        return found, None
