"""Training hours of a job on a cluster under a parallel layout, from its parts.

One optimizer step on one GPU takes (the tensor-core kernels at the clock a power-limited GPU
keeps while communication overlaps them, `overlap_clock`, on more than one GPU)
    m x (compute + QLoRA de-quantization + exposed micro-step communication)
  + pipeline bubble + exposed step communication + the optimizer step itself,
with m micro-batches per step (the job's gradient accumulation, or the pipeline's micro-batches)
and compute from `tools.ranking.time.kernels` divided over the tensor x pipeline slice. The run
takes tokens / (data-parallel degree x micro-batch tokens x m) steps. With the optimizer
offloaded (ZeRO-Offload) the step moves this GPU's gradient shard to the host and its updated
16-bit weights back over the host link, and the CPU steps the optimizer at its memory bandwidth;
with the weights offloaded too (FSDP CPUOffload, ZeRO-3 offload_param) each micro-step fetches
the weight shard for the forward and again for the backward, prefetched behind compute: a
micro-step takes the longer of its compute and that transfer (Ren et al. 2021, ZeRO-Offload,
section 4: what crosses PCIe and what the CPU computes).

QLoRA (Dettmers et al. 2023) keeps the frozen base in NF4 and de-quantizes every weight to 16-bit
on each pass that uses it (forward, backward's input gradients, and the recomputed forward under
full checkpointing): memory-bound work per micro-step, independent of the micro-batch's tokens.
The pipeline bubble of 1F1B is (p - 1) / (v m) of the m micro-steps (Narayanan et al. 2021, 2.2).
Units: seconds unless a name says hours; bytes; FLOPs.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.gpus import GPUSpec
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.comm import (
    ACTIVATION_BYTES,
    NF4_BYTES,
    WEIGHT_BYTES,
    ClusterShape,
    Layout,
    Traffic,
    cluster_links,
    communication,
)
from tools.ranking.time.kernels import (
    TokenTimes,
    gemm_shapes,
    peak_tflops,
    routed_expert_params,
    token_times,
)
from tools.ranking.time.work import TrainingWork

SECONDS_PER_HOUR = 3600.0
GIGA = 1e9
TERA = 1e12


@dataclass(frozen=True, slots=True)
class RunTime:
    """Uninterrupted training hours and where they go (hours, whole run, per GPU)."""

    hours: float
    compute_hours: float  # matmuls, attention and memory-bound kernels (recompute included)
    recompute_hours: float  # the recomputed part of compute
    dequant_hours: float
    communication_hours: float  # exposed
    bubble_hours: float
    optimizer_hours: float
    utilisation: float  # model FLOPs / (hours x GPUs x the precision's peak)
    peak_tflops: float
    peak_label: str
    microbatches_per_step: int


def microbatches_per_step(work: TrainingWork, layout: Layout, a: ThroughputAssumptions) -> int:
    """m: the job's accumulation, raised under pipeline parallelism to fill the pipeline."""
    if layout.pipeline == 1:
        return work.accumulation
    return max(work.accumulation, a.pipeline.microbatches_per_stage * layout.pipeline)


def run_time(
    work: TrainingWork,
    gpu: GPUSpec,
    shape: ClusterShape,
    layout: Layout,
    assumptions: ThroughputAssumptions,
) -> RunTime | None:
    """Hours to train `work` on `shape` under `layout`; None when `gpu` has no peak for the
    job's precision (FP32 on a V100, fp8 without FP8 tensor cores)."""
    found = peak_tflops(gpu, work.precision)
    if found is None:
        return None
    peak, label = found
    a = assumptions
    if a.mfu_override is not None:
        return _given_mfu(work, gpu, shape, layout, peak, label, a)
    times = _token_times(work, gpu, a, layout.expert)
    slice_ = layout.tensor * layout.pipeline
    clock = a.overlap_clock.get(gpu.architecture, 1.0) if layout.gpu_count > 1 else 1.0
    per_token = (times.matmul + times.attention) / clock + times.memory
    compute = work.micro_tokens * per_token / slice_
    dequant = dequant_seconds(work, gpu, slice_, a)
    attention = work.micro_tokens * times.attention / clock / slice_
    links = cluster_links(gpu, shape, a.links)
    comm = communication(_traffic(work, layout), layout, links, compute, a.links, attention)
    m = microbatches_per_step(work, layout, a)
    bubble = (layout.pipeline - 1) / a.pipeline.virtual_stages * (compute + dequant)
    optimizer = _optimizer_seconds(work, gpu, layout, a)
    micro = max(compute + dequant + comm.micro_exposed, _param_fetch_seconds(work, layout, a))
    step = m * micro + bubble + comm.step_exposed + optimizer
    steps = work.tokens / (layout.data * work.micro_tokens * m)
    hours = steps * step / SECONDS_PER_HOUR
    per_step = steps / SECONDS_PER_HOUR
    return RunTime(
        hours=hours,
        compute_hours=per_step * m * compute,
        recompute_hours=per_step * m * work.micro_tokens * times.recompute / slice_ / clock,
        dequant_hours=per_step * m * dequant,
        communication_hours=per_step * (m * comm.micro_exposed + comm.step_exposed),
        bubble_hours=per_step * bubble,
        optimizer_hours=per_step * optimizer,
        utilisation=_utilisation(work, hours, layout.gpu_count, peak),
        peak_tflops=peak,
        peak_label=label,
        microbatches_per_step=m,
    )


def _token_times(
    work: TrainingWork, gpu: GPUSpec, a: ThroughputAssumptions, expert: int = 1
) -> TokenTimes:
    """Per-token kernel times, once per GPU model (and expert-parallel degree, which sets the
    experts' GEMM shapes) for a job: every shape of a GPU shares them."""
    key = (gpu.id, id(a), expert)
    found = work.token_times.get(key)
    if found is None:
        shapes = work.shapes if expert == 1 else gemm_shapes(work.model, work.micro_tokens, expert)
        found = work.token_times[key] = token_times(
            work.flops, work.memory_bytes, gpu, work.precision, a, shapes, work.kernels.fa3
        )
    return found


def _traffic(work: TrainingWork, layout: Layout) -> Traffic:
    slice_ = layout.tensor * layout.pipeline
    m = work.model
    experts = routed_expert_params(m)
    local = work.total_params - experts + experts / layout.expert  # EP splits the experts
    full_width = local - work.quantized_params
    weights = (full_width * WEIGHT_BYTES + work.quantized_params * NF4_BYTES) / slice_
    full = work.trainable_params >= work.total_params
    trainable = work.trainable_params - (experts - experts / layout.expert if full else 0.0)
    layers = -(-(m.num_layers + m.num_decoder_layers) // layout.pipeline)
    moe_layers = -(-(m.num_layers - m.dense_layers) // layout.pipeline) if m.is_moe else 0
    reduces = 6 if work.checkpointing == "full" else 4
    local_tokens = work.micro_tokens / layout.context
    return Traffic(
        weights=weights,
        gradients=trainable / slice_ * 4.0,
        updated_weights=trainable / slice_ * WEIGHT_BYTES,
        activations=work.micro_tokens * m.hidden_size * ACTIVATION_BYTES,
        layers=layers,
        tp_all_reduces=reduces,
        moe_dispatch=work.micro_tokens * m.experts_per_token * m.hidden_size * ACTIVATION_BYTES,
        moe_layers=moe_layers,
        kv_chunk=2 * local_tokens * m.kv_dim / layout.tensor * ACTIVATION_BYTES,
    )


def dequant_seconds(
    work: TrainingWork, gpu: GPUSpec, slice_: int, a: ThroughputAssumptions
) -> float:
    """QLoRA de-quantization per micro-step on one GPU (every GPU runs its whole slice)."""
    if work.quantized_params == 0:
        return 0.0
    passes = 3 if work.checkpointing == "full" else 2
    moved = passes * work.quantized_params / slice_ * a.qlora_dequant_bytes_per_param
    return moved / (gpu.memory_bandwidth_gbs * GIGA * a.qlora_dequant_efficiency)


def _optimizer_seconds(
    work: TrainingWork, gpu: GPUSpec, layout: Layout, a: ThroughputAssumptions
) -> float:
    """One optimizer step over the trainable parameters this GPU holds (memory-bound); offloaded,
    on the CPU, with the gradients and the updated weights crossing the host link."""
    held = work.trainable_params / (layout.tensor * layout.pipeline)
    if layout.zero_stage >= 1:
        held /= layout.data
    moved = held * a.optimizer_bytes_per_param
    if layout.offload:
        link = a.links.pcie_gbs * GIGA
        return moved / (a.cpu_optimizer_gbs * GIGA) + held * (4.0 + WEIGHT_BYTES) / link
    return moved / (gpu.memory_bandwidth_gbs * GIGA * a.hbm_efficiency)


def _param_fetch_seconds(work: TrainingWork, layout: Layout, a: ThroughputAssumptions) -> float:
    """Host-to-GPU transfer of this GPU's weight shard per micro-step under parameter offload:
    once for the forward, once for the backward (0 without it)."""
    if not layout.offload_params:
        return 0.0
    full_width = work.total_params - work.quantized_params
    weights = full_width * WEIGHT_BYTES + work.quantized_params * NF4_BYTES
    shard = weights / (layout.tensor * layout.pipeline * layout.shard_ranks)
    return 2.0 * shard / (a.links.pcie_gbs * GIGA)


def _utilisation(work: TrainingWork, hours: float, gpus: int, peak: float) -> float:
    if hours <= 0:
        return 0.0
    achieved = work.tokens * work.flops.model / (hours * SECONDS_PER_HOUR * gpus)
    return achieved / (peak * TERA)


def _given_mfu(
    work: TrainingWork,
    gpu: GPUSpec,
    shape: ClusterShape,
    layout: Layout,
    peak: float,
    label: str,
    a: ThroughputAssumptions,
) -> RunTime:
    """The whole model replaced by one utilisation of the executed FLOPs (plus QLoRA's
    de-quantization, which is not FLOPs)."""
    assert a.mfu_override is not None
    gpus = layout.gpu_count
    compute_s = work.tokens * work.flops.total / (gpus * peak * TERA * a.mfu_override)
    micro_steps = work.tokens / (layout.data * work.micro_tokens)
    dequant_s = micro_steps * dequant_seconds(work, gpu, layout.tensor * layout.pipeline, a)
    hours = (compute_s + dequant_s) / SECONDS_PER_HOUR
    return RunTime(
        hours=hours,
        compute_hours=compute_s / SECONDS_PER_HOUR,
        recompute_hours=0.0,
        dequant_hours=dequant_s / SECONDS_PER_HOUR,
        communication_hours=0.0,
        bubble_hours=0.0,
        optimizer_hours=0.0,
        utilisation=a.mfu_override * work.flops.model / work.flops.total,
        peak_tflops=peak,
        peak_label=label,
        microbatches_per_step=work.accumulation,
    )
