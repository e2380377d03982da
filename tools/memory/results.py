"""The estimator's result: bytes per GPU by part, the detail behind each part, assumptions."""

from __future__ import annotations

from pydantic import BaseModel, Field


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


class LayerActivations(BaseModel):
    name: str
    count: int
    per_layer: dict[str, int] = Field(description="bytes per saved tensor, no recomputation")
    per_layer_total: int
    stored_per_layer: int = Field(description="bytes each layer keeps under the recompute choice")


class ActivationsDetail(BaseModel):
    layers: list[LayerActivations]
    head: dict[str, int] = Field(description="final norm, lm_head input, rotary tables")
    logits_peak: int = Field(description="logits and cross-entropy buffers at the loss")
    recompute_working_set: int = Field(description="one layer rebuilt during backward")


class OverheadDetail(BaseModel):
    cuda_context: int
    comm_buffers: int = Field(description="DDP gradient buckets (a copy of the gradients)")
    fragmentation: int


class MemoryEstimate(BaseModel):
    """Peak memory per GPU for one training setup, with its parts and the assumptions used."""

    model_id: str
    model_name: str
    per_gpu: MemoryBreakdown
    cpu_offload_bytes: int = Field(description="CPU RAM per GPU process for offloaded state")
    total_params: int
    trainable_params: int
    data_parallel: int
    tensor_parallel: int
    total_gpus: int
    bytes_per_param: BytesPerParam
    model_states: ModelStatesDetail
    activations: ActivationsDetail
    overhead: OverheadDetail
    assumptions: list[str]
