"""The estimator's result: bytes per GPU by part, the detail behind each part, assumptions."""

from __future__ import annotations

from pydantic import BaseModel, Field

from tools.enums import ResolvedEngine, ResolvedOptimizerImpl


class MemoryBreakdown(BaseModel):
    """Bytes on one GPU. `optimizer` holds all optimizer-owned state, the fp32 master included."""

    weights: int = Field(ge=0)
    gradients: int = Field(ge=0)
    optimizer: int = Field(ge=0)
    activations: int = Field(ge=0)
    overhead: int = Field(ge=0)
    total: int = Field(ge=0)


class BytesPerParam(BaseModel):
    """Bytes per parameter before sharding: weights per parameter, the rest per trainable one."""

    weights: float
    gradients: float
    optimizer: float


class ModelStatesDetail(BaseModel):
    unsharded_weights: int = Field(description="all ranks' weights on one TP rank, before ZeRO")
    unsharded_gradients: int
    unsharded_optimizer: int
    zero3_gathered_weights: int = Field(description="unsharded module(s) held while computing")
    zero3_gathered_gradients: int
    qlora_dequant_buffer: int = Field(description="one 4-bit weight dequantized to 16-bit")
    qlora_lm_head_dequant: int = Field(
        0, description="a 4-bit lm_head dequantized for its matmuls (its fp16 and 16-bit copies)"
    )
    optimizer_step_temporaries: int = Field(
        0, description="allocated inside optimizer.step() beyond the state"
    )


class LayerActivations(BaseModel):
    name: str
    count: int
    per_layer: dict[str, int] = Field(description="bytes per saved tensor, no recomputation")
    per_layer_total: int
    stored_per_layer: int = Field(description="bytes each layer keeps under the recompute choice")


class ActivationsDetail(BaseModel):
    layers: list[LayerActivations]
    head: dict[str, int] = Field(description="final norm, lm_head input, rotary tables")
    logits_peak: int = Field(
        description="logits and cross-entropy buffers at the loss backward's peak"
    )
    recompute_working_set: int = Field(description="one layer rebuilt during backward")
    logits_forward: int = Field(
        0, description="logits, their fp32 copy and the log-softmax inside the forward pass"
    )
    autocast_weight_copies: int = Field(
        0, description="16-bit copies of trainable weights cached by autocast"
    )
    logits_head: int = Field(0, description="the logits' gradient while lm_head's backward runs")
    logits_held: int = Field(
        0, description="logits the training loop keeps through the step (litgpt's loop)"
    )
    logits_kept: int = Field(
        0,
        description="the model's logits a training loop keeps in its output through the backward"
        " pass and the optimizer step (loop_keeps_output)",
    )
    graph_held: int = Field(
        0,
        description="4-bit layers' inputs kept on their autograd nodes (bitsandbytes < 0.43.2):"
        " alive until the graph is freed, the whole backward pass and, when the loop holds the"
        " logits, into the next forward",
    )
    offloaded: int = Field(0, description="layer activations in CPU RAM (activation offload)")
    total: int = Field(
        0,
        description="activation bytes at the start of the backward pass (saved tensors, kept "
        "weight copies, loss buffers); the peak moment may hold fewer",
    )


class MomentBytes(BaseModel):
    """Bytes live at one moment of a training step (before overhead)."""

    name: str = Field(
        description="forward, loss backward, lm_head backward, recompute, first layer backward, "
        "embedding backward or optimizer step"
    )
    weights: int = Field(ge=0)
    gradients: int = Field(ge=0)
    optimizer: int = Field(ge=0, description="state and the step's temporaries")
    activations: int = Field(ge=0, description="saved activations and transient buffers")
    total: int = Field(ge=0)


class OverheadDetail(BaseModel):
    cuda_context: int
    comm_buffers: int = Field(
        description="communication buffers: DDP's gradient buckets (a copy of the gradients), "
        "DeepSpeed's reduce bucket and ZeRO-3 prefetch (tools/memory/stacks/deepspeed.py)"
    )
    deepspeed_buffers: int = Field(
        0, description="of comm_buffers: DeepSpeed's reduce bucket and ZeRO-3 prefetch"
    )
    fragmentation: int = Field(
        description="the caching allocator's margin: `fragmentation` x `transient`"
    )
    transient: int = Field(
        0,
        description="bytes at the peak that are allocated and freed within the step "
        "(activations, gradients, gathered units, temporaries): what fragments the cache",
    )


class ReportedFigures(BaseModel):
    """The peak as each kind of measurement reports it, to compare like for like (bytes per GPU).

    `device` is `per_gpu.total`, what the estimate predicts; the smaller figures leave out what
    the matching measurement cannot see.
    """

    allocated: int = Field(
        ge=0,
        description="tensors in PyTorch's caching allocator at the peak, as "
        "torch.cuda.max_memory_allocated reports (no allocator cache, no CUDA context, no paged "
        "optimizer state)",
    )
    reserved: int = Field(
        ge=0,
        description="allocated plus the allocator's cached blocks (the fragmentation margin), "
        "as torch.cuda.max_memory_reserved reports",
    )
    device: int = Field(
        ge=0,
        description="the whole device as nvidia-smi reports it: reserved plus the CUDA context "
        "and the paged optimizer state resident on the GPU (= per_gpu.total)",
    )
    evictable: int = Field(
        ge=0,
        description="of device: paged optimizer state in CUDA unified memory, which the driver "
        "moves to CPU RAM when the card is full",
    )
    required: int = Field(
        ge=0, description="device minus evictable: what the card itself must hold"
    )


class HostRam(BaseModel):
    """CPU RAM one GPU's training process needs for what the job keeps off the GPU (bytes).

    A node with G GPUs needs `per_node(G)`; the ranking checks it against the instance's RAM.
    Not counted: the process itself, the framework and data loading, the checkpoint being loaded,
    and DeepSpeed's extra pinned staging buffers (its estimator allows 1.5 x the offloaded state:
    `additional_buffer_factor`).
    """

    offloaded_states: int = Field(
        0, ge=0, description="optimizer state, fp32 gradients and ZeRO-3 weight partitions"
    )
    offloaded_activations: int = Field(0, ge=0, description="activation offload (pinned)")
    paged_optimizer: int = Field(
        0, ge=0, description="paged optimizer state, if the driver pages all of it out"
    )

    @property
    def per_gpu(self) -> int:
        return self.offloaded_states + self.offloaded_activations + self.paged_optimizer

    def per_node(self, gpus_per_node: int) -> int:
        """Bytes of CPU RAM for `gpus_per_node` training processes."""
        return self.per_gpu * gpus_per_node


class MemoryEstimate(BaseModel):
    """Peak memory per GPU for one training setup, with its parts and the assumptions used."""

    model_id: str
    model_name: str
    per_gpu: MemoryBreakdown
    cpu_offload_bytes: int = Field(description="CPU RAM per GPU process for offloaded state")
    host_ram: HostRam = Field(
        default_factory=HostRam,
        description="CPU RAM per GPU process for everything kept off the GPU; per_node(G) for "
        "a node of G GPUs",
    )
    total_params: int
    trainable_params: int
    data_parallel: int
    tensor_parallel: int
    total_gpus: int
    bytes_per_param: BytesPerParam
    model_states: ModelStatesDetail
    activations: ActivationsDetail
    overhead: OverheadDetail
    peak_moment: str = Field(
        "", description="the moment of the step `per_gpu` describes (its largest)"
    )
    moments: list[MomentBytes] = Field(
        default_factory=list, description="every candidate moment of the step"
    )
    uncertainty: float | None = Field(
        None,
        description="relative band of the total, e.g. 0.18 for ±18%: on a GPU the 80th "
        "percentile of the error against published GPU runs of the job's stack and method "
        "(tools/data/memory_published_band.json); on the CPU the CPU calibration's largest error",
    )
    uncertainty_basis: str = Field("", description="what the band was measured on")
    figures: ReportedFigures = Field(
        description="the peak as allocated, reserved and device figures (like-for-like "
        "comparison with measurements); the total is the device figure"
    )
    assumptions: list[str]
    engine: ResolvedEngine = Field(
        description="the engine the bytes are counted for, `auto` resolved: deepspeed under "
        "ZeRO stage >= 1 or offload, else pytorch"
    )
    optimizer_impl: ResolvedOptimizerImpl = Field(
        description="how the optimizer step runs, `auto` resolved: fused under deepspeed, else "
        "foreach on CUDA and for-loop on the CPU"
    )

    def total_with_band(self) -> str:
        """The total in GiB with its calibration band, e.g. '41.8 GiB (±6%)'."""
        text = f"{self.per_gpu.total / 2**30:.1f} GiB"
        if self.uncertainty is None:
            return text
        return f"{text} (±{self.uncertainty:.0%})"
