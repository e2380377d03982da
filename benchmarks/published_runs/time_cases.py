"""Published training throughputs (../shared/calibration/training_throughput_published.json) read
as inputs of GPU Advisor's time model: the job, the GPU, the cluster, the parallel layout.

How a case's stated settings become the tool's (what a user would type, plus the stated plan):
- model: the case's `tool_model` through the registry (a parameter count gives guessed
  dimensions); where the measurement states layers, hidden size and heads (Megatron-LM's table),
  those replace the guess (MHA and a 4h GELU MLP, as the case's own FLOP count assumes);
- stack: the profile the source repository names (`cases.stack_named`: torchtune, torchtitan,
  litgpt, Megatron-LM; hf otherwise), and the memory mechanisms the case's words name, read as
  the memory benchmark reads them (`memory.mechanisms_from_text`, e.g. "optimizer_in_bwd: True");
- precision: bf16 -> bf16-mixed (the stacks keep fp32 masters), except on torchtune, whose
  recipes set `dtype: bf16` and train the whole model in bf16 (no fp32 master: the memory set's
  torchtune rows read "bf16 (pure)"), bf16-true -> bf16, fp8 -> fp8;
- recomputation: as stated; not stated -> none (Megatron-LM's default; the model cards do not say);
- micro-batch 1 and sequence 2,048 where not stated; accumulation as stated, else from the
  global batch, else 1;
- layout: tensor / pipeline / data degrees where stated; FSDP rows -> ZeRO-3 over the data
  ranks; Megatron rows -> ZeRO-1 (its distributed optimizer); otherwise the ranking's own plan
  search on that GPU count, falling back to ZeRO-3 when nothing fits the estimator's memory;
- GPU count not stated (whole-run GPU-hours): the number of 8-GPU nodes that trains the stated
  tokens within `WHOLE_RUN_DAYS` days at one node's modelled speed, rounded up to a power of two
  (cluster partitions are), then compared as GPU-seconds (time x GPUs), with the failure
  goodput of a run that long;
- fabric: as stated; "N Gb/s per GPU" x GPUs per node, "N Gbps node-node" per node, else the
  fabric's default; a multi-node run that states no fabric is read as InfiniBand at the default
  rate (published multi-node training runs use RDMA fabrics; TCP over Ethernet would be stated
  as the exception it is);
- FSDP HYBRID_SHARD / HSDP: ZeRO-3 inside each node, replicated across nodes;
- expert and context parallelism as stated (within the data ranks), and a stated interleaved
  pipeline's virtual stages (`virtual_pipeline`) as the schedule (`case_assumptions`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from benchmarks.published_runs.cases import stack_named
from tools.architectures.architecture import ModelArch
from tools.architectures.registry import resolve_model
from tools.gpus import GPUSpec, lookup_gpu
from tools.memory import EstimateInput, estimate
from tools.memory.stacks.profiles import MECHANISMS
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.comm import ClusterShape, Layout

WHOLE_RUN_DAYS = 90.0
_PURE_BF16_STACKS = frozenset({"torchtune"})
_PRECISIONS = {"bf16": "bf16-mixed", "bf16-true": "bf16", "fp8": "fp8", "fp16": "fp16-mixed"}


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class Source(_Loose):
    repo: str
    path: str
    commit: str | None = None


class ModelRef(_Loose):
    name: str
    params: float
    tool_model: str


class GpuRef(_Loose):
    type: str
    count: int | None
    gpus_per_node: int | None = 8


class Fabric(_Loose):
    intra_node: str | None = None
    inter_node: str | None = None
    as_stated: str | None = None


class LoraRef(_Loose):
    rank: int
    targets: str | None = None


class ThroughputCase(_Loose):
    """One published run as the calibration file records it (fields the benchmark reads)."""

    id: str
    source: Source
    model: ModelRef
    method: Literal["pretrain", "full", "lora", "qlora"]
    gpu: GpuRef
    interconnect: Fabric
    seq_len: int | None
    micro_batch: int | None
    global_batch: int | None
    precision: str
    checkpointing: Literal["none", "selective", "full"] | None
    cpu_offload: bool
    lora: LoraRef | None
    optimizer: str | None
    measured: dict[str, Any]
    expected: dict[str, Any]
    quality: str

    @property
    def stack(self) -> str:
        return self.source.repo.split("/")[-1]

    @property
    def kind(self) -> str:
        return str(self.measured["kind"])


def load_cases(path: Path) -> list[ThroughputCase]:
    """Every case of the calibration file, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [ThroughputCase.model_validate(raw) for raw in data["cases"]]


def case_model(case: ThroughputCase) -> ModelArch:
    """The architecture the tool uses for the case (see the module docstring)."""
    model = resolve_model(case.model.tool_model)
    m = case.measured
    if {"layers", "hidden", "heads"} <= m.keys():
        h, heads = int(m["hidden"]), int(m["heads"])
        model = model.model_copy(
            update={
                "hidden_size": h,
                "num_layers": int(m["layers"]),
                "num_heads": heads,
                "num_kv_heads": heads,
                "head_dim": h // heads,
                "intermediate_size": 4 * h,
                "gated_mlp": False,
            }
        )
    return model


def case_job(case: ThroughputCase) -> EstimateInput:
    """The job a user would describe for the case."""
    stack = stack_named(case.source.repo)
    pure = stack in _PURE_BF16_STACKS and case.precision == "bf16"
    fields: dict[str, Any] = {
        **case_mechanisms(case),
        "stack": stack,
        "model": case_model(case),
        "method": case.method,
        "precision": "bf16" if pure else _PRECISIONS[case.precision],
        "gradient_checkpointing": case.checkpointing or "none",
        "micro_batch_size": case.micro_batch or 1,
        "seq_len": case.seq_len or 2048,
        "gradient_accumulation_steps": _accumulation(case),
    }
    if case.lora is not None:
        fields["lora_rank"] = case.lora.rank
    if case.optimizer is not None:
        fields["optimizer"] = case.optimizer
    return EstimateInput(**fields)


def case_mechanisms(case: ThroughputCase) -> dict[str, Any]:
    """The stack mechanisms the case's quotes, notes and derivations name (QLoRA's only for
    QLoRA, the frozen base's only for adapters), as the memory benchmark reads its cases."""
    from benchmarks.published_runs.memory import mechanisms_from_text

    source, extra = case.source.model_extra or {}, case.model_extra or {}
    words = [source.get("quote"), source.get("context_quote"), extra.get("notes")]
    words += extra.get("derived_assumptions") or []
    text = " ".join(str(word) for word in words if word)
    found = mechanisms_from_text(text)
    return {
        name: value
        for name, value in found.items()
        if name in MECHANISMS
        and (not name.startswith("qlora_") or case.method == "qlora")
        and (name != "frozen_base_dtype" or case.method in ("lora", "qlora"))
    }


def _accumulation(case: ThroughputCase) -> int:
    stated = case.measured.get("grad_accum")
    if stated:
        return int(stated)
    count, micro = case.gpu.count, case.micro_batch or 1
    if case.global_batch and count:
        dp = count // (int(case.measured.get("tp") or 1) * int(case.measured.get("pp") or 1))
        return max(1, case.global_batch // (micro * max(dp, 1)))
    return 1


def case_gpu(case: ThroughputCase) -> GPUSpec:
    return lookup_gpu(case.gpu.type)


def case_shape(case: ThroughputCase, gpu_count: int) -> ClusterShape:
    """The cluster: nodes of `gpus_per_node`, the stated links."""
    per_node = case.gpu.gpus_per_node or min(gpu_count, 8)
    fabric = case.interconnect
    network = fabric.inter_node if fabric.inter_node in ("infiniband", "roce") else "ethernet"
    if fabric.inter_node is None and not fabric.as_stated:
        network = "infiniband"  # unstated: a training cluster's RDMA fabric (module docstring)
    return ClusterShape(
        gpus_per_node=per_node,
        nodes=max(1, math.ceil(gpu_count / per_node)),
        interconnect="pcie" if fabric.intra_node == "pcie" else "nvswitch",
        network=network,  # type: ignore[arg-type]
        network_gbps=_stated_gbps(fabric.as_stated, per_node),
    )


def _stated_gbps(text: str | None, per_node: int) -> float | None:
    if not text:
        return None
    found = re.search(r"(\d[\d,]*)\s*Gb(?:ps|/s)", text)
    if found is None:
        return None
    gbps = float(found.group(1).replace(",", ""))
    return gbps * per_node if "per GPU" in text else gbps


def stated_layout(case: ThroughputCase, gpu_count: int) -> Layout | None:
    """The layout the case states, or None when it states none (expert and context
    parallelism, where stated, within the data ranks)."""
    found = _stated_layout(case, gpu_count)
    m = case.measured
    ep, cp = int(m.get("expert_parallel") or 1), int(m.get("context_parallel") or 1)
    if found is None or (ep == 1 and cp == 1):
        return found
    return dataclasses.replace(found, expert=ep, context=cp)


def _stated_layout(case: ThroughputCase, gpu_count: int) -> Layout | None:
    m = case.measured
    tp, pp = int(m.get("tp") or 1), int(m.get("pp") or 1)
    sharding = str(m.get("sharding") or "")
    if "pp" in m or "dp" in m:  # Megatron-LM: distributed optimizer (ZeRO-1)
        return Layout(data=gpu_count // (tp * pp), tensor=tp, pipeline=pp, zero_stage=1)
    if re.search(r"HYBRID_SHARD|HSDP", sharding):  # sharded within a node, replicated across
        per_node = case.gpu.gpus_per_node or 8
        return Layout(data=gpu_count // (tp * pp), tensor=tp, pipeline=pp, zero_stage=3,
                      shard_group=max(1, per_node // (tp * pp)))  # fmt: skip
    if "FSDP" in sharding or case.stack == "torchtitan" or tp > 1:
        return Layout(data=gpu_count // (tp * pp), tensor=tp, pipeline=pp, zero_stage=3)
    if gpu_count == 1:
        return Layout(data=1)
    if case.cpu_offload or case.stack == "torchtune":  # torchtune's distributed recipes: FSDP
        # FSDP's CPUOffload (fsdp_qlora, torchtune's fsdp_cpu_offload) keeps the weights, the
        # gradients and the optimizer on the CPU
        off = case.cpu_offload
        return Layout(data=gpu_count, zero_stage=3, offload=off, offload_params=off)
    return None


def case_assumptions(case: ThroughputCase, a: ThroughputAssumptions) -> ThroughputAssumptions:
    """The time model's assumptions with the schedule the case states: its interleaved
    pipeline's virtual stages per GPU (Megatron's --num-layers-per-virtual-pipeline-stage)."""
    virtual = int(case.measured.get("virtual_pipeline") or 1)
    if virtual <= 1:
        return a
    return a.model_copy(
        update={"pipeline": a.pipeline.model_copy(update={"virtual_stages": virtual})}
    )


def base_params(job: EstimateInput) -> tuple[int, int]:
    """(parameters without adapters, trainable parameters) as the estimator counts them."""
    est = estimate(job)
    return int(est.total_params), int(est.trainable_params)
