"""What a job asks of any cluster, computed once per ranking: per-token work and batch shape."""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.architectures.architecture import ModelArch
from tools.enums import Checkpointing, Method, Precision
from tools.memory import LORA_METHODS, EstimateInput
from tools.memory.states.inventory import resolve_targets
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.flops import TokenFlops, token_flops
from tools.ranking.time.kernels import (
    GemmShapes,
    KernelChoices,
    TokenTimes,
    gemm_shapes,
    kernel_choices,
    memory_bound_bytes,
)


@dataclass(frozen=True, slots=True)
class TrainingWork:
    """The model, the per-token work, the batch shape and the token count of a run."""

    model: ModelArch
    method: Method
    precision: Precision
    checkpointing: Checkpointing
    flops: TokenFlops
    memory_bytes: tuple[float, float]  # memory-bound bytes per token, and the recomputed part
    micro_batch: int
    seq_len: int
    accumulation: int  # micro-batches per optimizer step the job asks for
    tokens: float
    total_params: int
    trainable_params: int
    quantized_params: int  # QLoRA's 4-bit frozen base, else 0
    kernels: KernelChoices = field(default_factory=KernelChoices)  # the stack's small kernels
    shapes: GemmShapes = field(default_factory=GemmShapes)  # one micro-batch's GEMM shapes
    # per-token kernel times by (GPU id, assumptions object, expert-parallel degree): `run_time`
    token_times: dict[tuple[str, int, int], TokenTimes] = field(default_factory=dict, compare=False)

    @property
    def micro_tokens(self) -> int:
        """Tokens of one micro-batch on one data-parallel rank."""
        return self.micro_batch * self.seq_len


def training_work(
    job: EstimateInput,
    tokens: float,
    total_params: int,
    trainable_params: int,
    assumptions: ThroughputAssumptions,
) -> TrainingWork:
    """The work of training `job` on `tokens` tokens; `total_params` excludes LoRA adapters and
    `trainable_params` counts them (the estimator's figures)."""
    lora = job.method in LORA_METHODS
    targets = resolve_targets(job.model, job.lora_targets) if lora else ()
    mech = job.mechanisms
    kernels = kernel_choices(job.stack, mech.compile, mech.loss, mech.compiled_loss)
    flops = token_flops(
        job.model,
        job.method,
        trainable_params if lora else 0,
        job.seq_len,
        job.gradient_checkpointing,
        job.attention,
    )
    return TrainingWork(
        model=job.model,
        method=job.method,
        precision=job.precision,
        checkpointing=job.gradient_checkpointing,
        flops=flops,
        memory_bytes=memory_bound_bytes(
            job.model, job.gradient_checkpointing, job.precision, targets, assumptions, kernels
        ),
        micro_batch=job.micro_batch_size,
        seq_len=job.seq_len,
        accumulation=job.gradient_accumulation_steps,
        tokens=tokens,
        total_params=total_params,
        trainable_params=trainable_params,
        quantized_params=_quantized(job),
        kernels=kernels,
        shapes=gemm_shapes(job.model, job.micro_batch_size * job.seq_len),
    )


def _quantized(job: EstimateInput) -> int:
    """QLoRA quantizes the blocks' linear layers to NF4 (bitsandbytes replaces nn.Linear);
    embeddings, norms and the LM head stay 16-bit."""
    if job.method != "qlora":
        return 0
    return sum(m.num_params() for m in job.model.linear_modules())
