"""Training hours of a diffusion fine-tuning run on a cluster: images instead of tokens.

One optimizer step on one GPU takes
    m x (micro-batch compute + exposed micro-step communication)
  + exposed step communication (DDP's gradient all-reduce behind the last backward)
  + the optimizer step over the trainable parameters (memory-bound),
with m the job's gradient accumulation and the micro-batch compute the executed FLOPs of its
images (`tools.ranking.time.image_flops`: denoiser forward and backward, LoRA adapters,
recomputation, the VAE and text encoders when not cached; prior preservation's class images
included) at the GPU's 16-bit GEMM rate (`ThroughputAssumptions.gemm`): convolutions run as
implicit GEMMs (cuDNN) and attention through the same fused kernels, so one rate serves all;
the memory-bound kernels between them (group norms, activations) are not counted apart.
The run takes images / (data-parallel ranks x micro-batch x m) steps. Communication is
`tools.ranking.time.comm` with the trainable parameters' fp32 gradients (the diffusers scripts
keep trained parameters and their gradients in fp32). Units: seconds unless a name says hours;
bytes; FLOPs.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.gpus import GPUSpec
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.comm import (
    WEIGHT_BYTES,
    ClusterShape,
    Layout,
    Traffic,
    cluster_links,
    communication,
)
from tools.ranking.time.kernels import peak_tflops, sixteen_bit_peak
from tools.ranking.time.step import RunTime

__all__ = ["ImageWork", "image_run_time"]

SECONDS_PER_HOUR = 3600.0
TERA = 1e12
GIGA = 1e9
GRADIENT_BYTES = 4.0  # fp32 gradients of the trained parameters


@dataclass(frozen=True, slots=True)
class ImageWork:
    """The work of a diffusion run: FLOPs per training image and the batch shape."""

    method: str  # lora | full
    precision: str
    flops_per_image: float  # executed, recomputation included
    model_flops_per_image: float  # without recomputation (what MFU counts)
    micro_batch: int  # instance images per micro-step per GPU
    accumulation: int  # micro-batches per optimizer step
    images: float  # instance images over the whole run
    total_params: int
    trainable_params: int

    @property
    def recompute_flops_per_image(self) -> float:
        return self.flops_per_image - self.model_flops_per_image


def image_run_time(
    work: ImageWork,
    gpu: GPUSpec,
    shape: ClusterShape,
    layout: Layout,
    a: ThroughputAssumptions,
) -> RunTime | None:
    """Hours to train `work` on `shape` under `layout` (data parallel); None when `gpu` has no
    peak for the job's precision."""
    found = peak_tflops(gpu, work.precision)
    if found is None:
        return None
    peak, label = found
    m = work.accumulation
    steps = work.images / (layout.data * work.micro_batch * m)
    if a.mfu_override is not None:
        seconds = work.images * work.flops_per_image / (layout.gpu_count * peak * TERA)
        hours = seconds / a.mfu_override / SECONDS_PER_HOUR
        return _run(hours, hours, 0.0, 0.0, 0.0, work, layout, peak, label)
    rate = sixteen_bit_peak(gpu, work.precision) * TERA * a.gemm(gpu.architecture, gpu.id)
    compute = work.micro_batch * work.flops_per_image / rate
    traffic = Traffic(
        weights=work.total_params * WEIGHT_BYTES,
        gradients=work.trainable_params * GRADIENT_BYTES,
        updated_weights=work.trainable_params * WEIGHT_BYTES,
        activations=0.0,
        layers=1,
        tp_all_reduces=0,
    )
    comm = communication(traffic, layout, cluster_links(gpu, shape, a.links), compute, a.links)
    bandwidth = gpu.memory_bandwidth_gbs * GIGA * a.hbm_efficiency
    optimizer = work.trainable_params * a.optimizer_bytes_per_param / bandwidth
    step = m * (compute + comm.micro_exposed) + comm.step_exposed + optimizer
    per_step = steps / SECONDS_PER_HOUR
    exposed = per_step * (m * comm.micro_exposed + comm.step_exposed)
    return _run(
        steps * step / SECONDS_PER_HOUR,
        per_step * m * compute,
        per_step * m * work.micro_batch * work.recompute_flops_per_image / rate,
        exposed,
        per_step * optimizer,
        work,
        layout,
        peak,
        label,
    )


def _run(
    hours: float,
    compute: float,
    recompute: float,
    communication_hours: float,
    optimizer: float,
    work: ImageWork,
    layout: Layout,
    peak: float,
    label: str,
) -> RunTime:
    seconds = hours * SECONDS_PER_HOUR * layout.gpu_count
    model = work.images * work.model_flops_per_image
    return RunTime(
        hours=hours,
        compute_hours=compute,
        recompute_hours=recompute,
        dequant_hours=0.0,
        communication_hours=communication_hours,
        bubble_hours=0.0,
        optimizer_hours=optimizer,
        utilisation=model / (seconds * peak * TERA) if seconds > 0 else 0.0,
        peak_tflops=peak,
        peak_label=label,
        microbatches_per_step=work.accumulation,
    )
