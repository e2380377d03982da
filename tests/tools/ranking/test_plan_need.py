"""A ranked row's per-GPU need is what `gpu-advisor estimate` gives for the row's plan.

Each job is described as a user would (a `JobSpec`: stack, method, precision, mechanism fields),
ranked on one synthetic machine shape whose memory steers the plan search to a given plan, and
then estimated on its own with that plan's flags (GPU count, ZeRO stage, optimizer offload), the
way the `estimate` command resolves them. The two needs must agree: the ranking sizes each plan
with the job's own stack and mechanisms, and judges it by what the card must hold.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.catalogs import instance
from tools.advice import estimate_job, resolve_job
from tools.job import JobSpec
from tools.ranking import rank
from tools.ranking.plans import is_offload, zero_stage

_TORCHTUNE_8B_FULL = {
    "model": "llama-3.1-8b", "method": "full", "precision": "bf16", "stack": "torchtune",
    "optimizer": "paged-adamw-8bit", "optimizer_in_backward": True, "compile": True,
    "loss": "chunked", "micro_batch_size": 2, "seq_len": 2048, "gradient_checkpointing": "full",
}  # fmt: skip
# (job fields, GPU, GiB per GPU, GPUs, the plan the ranking must choose)
CASES: list[tuple[dict[str, Any], str, float, int, str]] = [
    # torchtune's 8B full fine-tune on one 24 GB card: pure bf16, optimizer step in backward,
    # paged 8-bit state (evictable to CPU RAM, so not part of what the card must hold)
    (_TORCHTUNE_8B_FULL, "RTX4090", 24.0, 1, "single"),
    # the same job as the Hugging Face stack runs it, under autocast over fp32 weights
    ({"model": "llama-3.1-8b", "method": "full", "precision": "bf16-mixed", "stack": "hf",
      "gradient_checkpointing": "full"}, "H100-SXM", 80.0, 8, "zero2"),
    ({"model": "llama-3.1-8b", "method": "full", "precision": "bf16-mixed", "stack": "hf",
      "gradient_checkpointing": "full"}, "H100-SXM", 30.0, 8, "zero3"),
    ({"model": "llama-3.1-8b", "method": "full", "precision": "bf16-mixed", "stack": "hf",
      "gradient_checkpointing": "full"}, "H100-SXM", 80.0, 1, "single_offload"),
    ({"model": "llama-3.1-8b", "method": "lora", "precision": "bf16", "stack": "torchtune",
      "lora_rank": 8, "gradient_checkpointing": "full"}, "RTX4090", 24.0, 1, "single"),
    ({"model": "llama-3.1-8b", "method": "qlora", "stack": "unsloth", "lora_rank": 16,
      "gradient_checkpointing": "full"}, "L4", 24.0, 1, "single"),
    ({"model": "llama-2-7b", "method": "lora", "precision": "bf16", "stack": "litgpt",
      "lora_rank": 8}, "A10G", 24.0, 4, "ddp"),
    ({"model": "llama-3.1-8b", "method": "pretrain", "precision": "bf16-mixed",
      "stack": "torchtitan", "gradient_checkpointing": "selective", "seq_len": 8192},
     "H100-SXM", 60.0, 8, "zero3"),
]  # fmt: skip


def _rank_row(fields: dict[str, Any], gpu: str, vram_gib: float, gpus: int) -> Any:
    spec = JobSpec(**fields, tokens=1e8, min_gpus=gpus, max_gpus=gpus)
    request = resolve_job(spec).request
    assert request is not None
    node = instance(f"{gpu}-{gpus}x", gpu, gpus, 1.0, vram_per_gpu_gib=vram_gib)
    result = rank(request, [node])
    assert result.ranked, result.excluded[0].reason
    return result.ranked[0]


@pytest.mark.parametrize(("fields", "gpu", "vram_gib", "gpus", "plan"), CASES)
def test_row_need_is_the_estimate_of_its_plan(
    fields: dict[str, Any], gpu: str, vram_gib: float, gpus: int, plan: str
) -> None:
    row = _rank_row(fields, gpu, vram_gib, gpus)
    assert (row.plan, row.tensor_parallel, row.pipeline_parallel) == (plan, 1, 1)
    flags: dict[str, Any] = {"num_gpus": gpus, "zero_stage": zero_stage(plan)}
    if is_offload(plan):
        flags["offload_optimizer"] = True
    _, est = estimate_job(JobSpec(**fields, **flags))
    assert row.need_per_gpu_bytes == pytest.approx(est.figures.required, rel=1e-9)
    assert row.need_per_gpu_bytes <= est.per_gpu.total
    assert row.need_per_gpu_bytes * 1.1 <= row.vram_per_gpu_bytes


def test_paged_state_is_left_to_host_ram_not_the_card() -> None:
    """The torchtune full fine-tune fits its 24 GB card only because its paged 8-bit state may be
    moved to CPU RAM: the whole-device figure is over the card, what it must hold is not."""
    row = _rank_row(_TORCHTUNE_8B_FULL, "RTX4090", 24.0, 1)
    _, est = estimate_job(JobSpec(**_TORCHTUNE_8B_FULL))
    assert est.figures.evictable > 0
    assert est.per_gpu.total * 1.1 > row.vram_per_gpu_bytes
    assert row.need_per_gpu_bytes == est.per_gpu.total - est.figures.evictable


def test_stated_precision_is_kept() -> None:
    """A stack profile never changes the precision the user gave: bf16-mixed under torchtune is
    sized as autocast over fp32 weights, well above the same job in pure bf16."""
    mixed = {**_TORCHTUNE_8B_FULL, "precision": "bf16-mixed"}
    request = resolve_job(JobSpec(**mixed, tokens=1e8)).request
    assert request is not None and request.job.precision == "bf16-mixed"
    _, pure = estimate_job(JobSpec(**_TORCHTUNE_8B_FULL))
    _, autocast = estimate_job(JobSpec(**mixed))
    assert autocast.figures.required > 1.5 * pure.figures.required
