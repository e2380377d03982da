"""Model states per GPU: weights, gradients and optimizer state, with ZeRO sharding and offload.

Accounting follows the ZeRO paper (Rajbhandari et al. 2019, arXiv:1910.02054): under mixed
precision a trainable parameter costs 2 bytes of 16-bit weight, 2 bytes of 16-bit gradient and
K bytes of optimizer-owned state, where K includes the fp32 master copy (K = 12 for Adam).
Stage 1 shards the optimizer state over the data-parallel ranks, stage 2 also the gradients,
stage 3 also the weights (paper Table 1).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from math import ceil
from typing import cast

from tools.architectures.architecture import ModelArch
from tools.enums import ResolvedOptimizerImpl
from tools.memory import constants as c
from tools.memory.stacks.deepspeed import ZeroExtras, zero_extras
from tools.memory.states.inventory import (
    ParamTensor,
    PhysicalLinear,
    adapter_tensors,
    block_params,
    largest_module_params,
    linear_modules,
    param_tensors,
    total_params,
)
from tools.memory.states.optimizer_step import optimizer_temporaries

_TP_SPLIT_KINDS = frozenset({"linear", "bias", "embedding"})


@dataclass(frozen=True, slots=True)
class StatesConfig:
    """What the model-state rules need from an estimate's input."""

    method: str
    precision: str
    optimizer: str
    lora_rank: int
    targets: tuple[PhysicalLinear, ...]
    qlora_double_quant: bool
    zero_stage: int
    sharding: str
    data_parallel: int
    tensor_parallel: int
    offload_optimizer: bool
    engine: str = "deepspeed"  # pytorch: autocast over fp32 weights (no separate master)
    optimizer_impl: str = (
        "fused"  # foreach | for-loop | fused (see tools.memory.states.optimizer_step)
    )
    optimizer_in_backward: bool = False  # each parameter stepped inside backward (torchtune)
    frozen_fp32: bool = False  # the frozen base's non-quantized weights are stored in fp32
    offload_params: bool = False  # ZeRO-3: the weight partition in CPU RAM
    stack: str = "hf"  # hf: DeepSpeed's bucket sizes as the Hugging Face integration sets them
    qlora_lm_head: bool = False  # QLoRA: an untied lm_head is NF4 too (litgpt)


@dataclass(frozen=True, slots=True)
class ModelStates:
    """Per-GPU bytes of model states and what they were computed from."""

    weights: int
    gradients: int
    optimizer: int
    cpu_offload: int
    comm_buffers: int
    gathered_weights: int  # ZeRO-3: full module(s) gathered for compute, included in weights
    gathered_gradients: int  # ZeRO-3: the gathered module's gradient, included in gradients
    dequant_buffer: int  # QLoRA: one linear dequantized to 16-bit (in weights; peak.py moves it)
    total_params: int
    trainable_params: int
    unsharded_weights: int
    unsharded_gradients: int
    unsharded_optimizer: int
    step_temporaries: int = 0  # allocated inside optimizer.step() beyond the state
    paged_optimizer: int = 0  # of optimizer: bitsandbytes paged state in CUDA unified memory
    largest_gradient: int = 0  # bytes of the largest trainable tensor's gradient on this GPU
    deepspeed_buffers: int = 0  # of comm_buffers: DeepSpeed's reduce bucket and ZeRO-3 prefetch
    grad_element_bytes: int = c.BF16  # bytes per trainable parameter's gradient element
    lm_head_dequant: int = 0  # QLoRA, 4-bit lm_head: its dequantized copies while it computes


def shard_model_states(
    weights: int, gradients: int, optimizer: int, stage: int, ranks: int
) -> tuple[int, int, int]:
    """ZeRO partitioning (paper Table 1): stage >= 1 divides the optimizer state over `ranks`,
    stage >= 2 also the gradients, stage 3 also the weights. Bytes are rounded up per GPU."""
    return (
        ceil(weights / ranks) if stage >= 3 else weights,
        ceil(gradients / ranks) if stage >= 2 else gradients,
        ceil(optimizer / ranks) if stage >= 1 else optimizer,
    )


def _per_gpu(tensors: Iterable[ParamTensor], tp: int) -> list[tuple[ParamTensor, int]]:
    """Each tensor group with the elements of ONE of its tensors on a tensor-parallel rank
    (matrices and embeddings are split over the `tp` ranks; norms are replicated)."""
    return [(t, ceil(t.numel / tp) if t.kind in _TP_SPLIT_KINDS else t.numel) for t in tensors]


def nf4_bytes(numel: int, double_quant: bool) -> int:
    """Bytes of one NF4-quantized tensor: packed 4-bit values plus its block constants."""
    blocks = ceil(numel / c.NF4_BLOCK)
    if double_quant:
        constants = blocks + c.FP32 * ceil(blocks / c.NF4_SECOND_LEVEL_BLOCKS)
    else:
        constants = c.FP32 * blocks
    return ceil(numel / 2) + constants


def adapter_bytes(precision: str) -> int:
    """LoRA adapter weights: fp32 except under pure bf16 (PEFT upcasts adapters of a 16-bit base
    model to fp32 by default: `autocast_adapter_dtype=True`)."""
    return c.BF16 if precision == "bf16" else c.FP32


def optimizer_state_bytes(optimizer: str, tensor: ParamTensor, shard: int, state: int) -> int:
    """Optimizer state, master copy excluded, for all `tensor.count` tensors of a group, each
    holding `shard` elements on this tensor-parallel rank.

    `state` is the byte width of a full-precision state element (4, or 2 under pure bf16).
    """
    if optimizer == "adamw":  # exp_avg and exp_avg_sq
        per_tensor = 2 * state * shard
    elif optimizer in ("sgd-momentum", "lion"):  # one momentum buffer
        per_tensor = state * shard
    elif optimizer == "sgd":
        per_tensor = 0
    elif optimizer == "adafactor":
        per_tensor = _adafactor_bytes(tensor, shard)
    elif shard < c.BNB_MIN_8BIT_SIZE:  # bitsandbytes keeps 32-bit state for small tensors
        per_tensor = 2 * c.FP32 * shard
    else:  # two uint8 states, each with one fp32 absmax per block of 256
        per_tensor = 2 * shard + 2 * c.FP32 * ceil(shard / c.BNB_STATE_BLOCK)
    return per_tensor * tensor.count


def _adafactor_bytes(tensor: ParamTensor, shard: int) -> int:
    """Hugging Face Adafactor (beta1=None): fp32 row and column second-moment factors for a
    matrix, a full fp32 second moment for a vector; no first moment."""
    if tensor.cols == 1:
        return c.FP32 * shard
    rows = ceil(tensor.rows * shard / tensor.numel)  # the split dimension shrinks with TP
    return c.FP32 * (rows + tensor.cols)


def _trainable_and_frozen(
    model: ModelArch, cfg: StatesConfig
) -> tuple[tuple[ParamTensor, ...], tuple[ParamTensor, ...]]:
    base = param_tensors(model)
    if cfg.method in ("pretrain", "full"):
        return base, ()
    return adapter_tensors(cfg.targets, cfg.lora_rank), base


def _frozen_weight_bytes(frozen: Iterable[ParamTensor], cfg: StatesConfig) -> int:
    """The frozen base: NF4 for QLoRA's linear layers; the rest in the working precision, or in
    fp32 when the base was loaded so (PEFT's FSDP example loads torch_dtype=float32; PEFT's
    prepare_model_for_kbit_training casts every non-quantized weight to fp32)."""
    stored = c.FP32 if cfg.frozen_fp32 else c.weight_bytes(cfg.precision)
    total = 0
    for tensor, elements in _per_gpu(frozen, cfg.tensor_parallel):
        head = cfg.qlora_lm_head and tensor.name == "lm_head"  # an untied lm_head only
        if cfg.method == "qlora" and (tensor.kind == "linear" or head):
            total += nf4_bytes(elements, cfg.qlora_double_quant) * tensor.count
        else:
            total += stored * elements * tensor.count
    return total


@dataclass(frozen=True, slots=True)
class _RankStates:
    """The model states of one tensor-parallel rank before ZeRO sharding and offload: the same
    for every data-parallel plan of a job, so kept (`_rank_states`)."""

    shards: list[tuple[ParamTensor, int]]  # never mutated
    trainable_elems: int
    trainable_params: int
    param_bytes: int  # per trainable element, weights and gradients alike
    state: int  # bytes of a full-precision optimizer state element
    weights: int
    gradients: int
    optimizer: int


# The StatesConfig fields `_rank_states` reads; the others (ZeRO, data ranks, offload, the
# stack's buckets) only act after it.
_RANK_FIELDS = ("method", "precision", "optimizer", "lora_rank", "targets", "tensor_parallel",
                "engine", "frozen_fp32", "qlora_double_quant", "qlora_lm_head")  # fmt: skip


@lru_cache(maxsize=256)
def _rank_states(model: ModelArch, cfg: StatesConfig) -> _RankStates:
    """`cfg` with every field outside `_RANK_FIELDS` at its neutral value (`compute_model_states`
    passes it so), so the plans of one job share the result."""
    trainable, frozen = _trainable_and_frozen(model, cfg)
    full = cfg.method in ("pretrain", "full")
    mixed = cfg.precision in c.MIXED_PRECISIONS
    autocast = full and mixed and cfg.engine == "pytorch"  # fp32 weights are the master
    param_bytes = c.weight_bytes(cfg.precision) if full else adapter_bytes(cfg.precision)
    if autocast:
        param_bytes = c.FP32
    master = c.FP32_MASTER if (full and mixed and not autocast) else 0
    state = c.BF16 if cfg.precision == "bf16" else c.FP32
    shards = _per_gpu(trainable, cfg.tensor_parallel)
    trainable_elems = sum(e * t.count for t, e in shards)
    optimizer = master * trainable_elems + sum(
        optimizer_state_bytes(cfg.optimizer, t, e, state) for t, e in shards
    )
    return _RankStates(
        shards=shards,
        trainable_elems=trainable_elems,
        trainable_params=sum(t.total for t in trainable),
        param_bytes=param_bytes,
        state=state,
        weights=param_bytes * trainable_elems + _frozen_weight_bytes(frozen, cfg),
        gradients=param_bytes * trainable_elems,
        optimizer=optimizer,
    )


def forget_rank_states() -> None:
    """Drop the kept `_rank_states` (benchmarks time new jobs)."""
    _rank_states.cache_clear()


def compute_model_states(model: ModelArch, cfg: StatesConfig) -> ModelStates:
    """Weights, gradients and optimizer state on one GPU, plus CPU offload and DDP buckets."""
    rank = _rank_states(model, _rank_config(cfg))
    full = cfg.method in ("pretrain", "full")
    mixed = cfg.precision in c.MIXED_PRECISIONS
    param_bytes, state, shards = rank.param_bytes, rank.state, rank.shards
    trainable_elems = rank.trainable_elems
    weights, gradients, optimizer = rank.weights, rank.gradients, rank.optimizer
    if megatron_main_grads(cfg):  # one fp32 main_grad per parameter, a persistent buffer
        param_bytes, gradients = c.FP32, c.FP32 * trainable_elems
    w, g, o = shard_model_states(weights, gradients, optimizer, cfg.zero_stage, cfg.data_parallel)
    paged = _paged_state(cfg, shards)

    gathered_w, gathered_g = _zero3_gathered(model, cfg, full)
    dequant = _dequant_buffer(model, cfg)
    extras = _deepspeed_extras(model, cfg, trainable_elems, full and mixed, weights)
    w, g, o, cpu = _offload(cfg, w, g, o, trainable_elems)
    comm = gradients if (cfg.zero_stage == 0 and cfg.data_parallel > 1) else 0
    comm += extras.reduce_bucket + extras.prefetch
    step_ranks = cfg.data_parallel if cfg.zero_stage >= 1 else 1
    largest = max(shards, key=lambda pair: pair[1]) if shards else None
    stepped = shards
    if cfg.optimizer_in_backward and largest is not None:  # one parameter at a time
        stepped, step_ranks = [(replace(largest[0], count=1), largest[1])], 1
    temporaries = 0 if cfg.offload_optimizer else optimizer_temporaries(
        cfg.optimizer, cast(ResolvedOptimizerImpl, cfg.optimizer_impl), stepped, state,
        param_bytes, step_ranks,
    ) + extras.fp32_grads  # fmt: skip
    return ModelStates(
        weights=w + gathered_w + dequant,
        gradients=g + gathered_g,
        optimizer=o,
        cpu_offload=cpu,
        comm_buffers=comm,
        gathered_weights=gathered_w,
        gathered_gradients=gathered_g,
        dequant_buffer=dequant,
        total_params=total_params(model),
        trainable_params=rank.trainable_params,
        unsharded_weights=weights,
        unsharded_gradients=gradients,
        unsharded_optimizer=optimizer,
        step_temporaries=temporaries,
        grad_element_bytes=param_bytes,
        paged_optimizer=0 if cfg.offload_optimizer else paged,
        largest_gradient=param_bytes * largest[1] if largest else 0,
        deepspeed_buffers=extras.reduce_bucket + extras.prefetch,
        lm_head_dequant=_lm_head_dequant(model, cfg),
    )


def megatron_main_grads(cfg: StatesConfig) -> bool:
    """Megatron Core keeps a contiguous fp32 gradient buffer (`main_grad`) for every parameter
    under 16-bit mixed precision, allocated once and alive through every moment of the step;
    its distributed optimizer shards the optimizer state, not this buffer (6 + 12 / d bytes per
    parameter in its docs' table; megatron/training/arguments.py keeps the gradients in fp32
    unless --grad-reduce-in-bf16)."""
    full = cfg.method in ("pretrain", "full")
    return cfg.stack == "megatron" and full and cfg.precision in c.MIXED_PRECISIONS


def _rank_config(cfg: StatesConfig) -> StatesConfig:
    """`cfg` reduced to `_RANK_FIELDS` (the rest at StatesConfig's neutral values)."""
    return StatesConfig(
        **{name: getattr(cfg, name) for name in _RANK_FIELDS},
        zero_stage=0,
        sharding="none",
        data_parallel=1,
        offload_optimizer=False,
    )


def _offload(
    cfg: StatesConfig, w: int, g: int, o: int, trainable: int
) -> tuple[int, int, int, int]:
    """(weights, gradients, optimizer state) left on the GPU, and the bytes in CPU RAM.

    Optimizer offload (DeepSpeed offload_optimizer, ZeRO >= 1) keeps the state and an fp32
    gradient partition in CPU RAM, and under ZeRO-2/3 the gradient partition too; parameter
    offload (offload_param, ZeRO-3) moves the 16-bit weight partition to pinned CPU memory."""
    cpu = 0
    if cfg.offload_optimizer:
        cpu, o = o + ceil(c.FP32 * trainable / cfg.data_parallel), 0
        if cfg.zero_stage >= 2:
            g = 0
    if cfg.offload_params and cfg.zero_stage == 3:
        cpu, w = cpu + w, 0
    return w, g, o, cpu


def _deepspeed_extras(
    model: ModelArch, cfg: StatesConfig, trainable: int, mixed_full: bool, weights: int
) -> ZeroExtras:
    """DeepSpeed ZeRO's own buffers (stacks/deepspeed.py); none for FSDP, plain PyTorch or
    Megatron's distributed optimizer."""
    if cfg.engine != "deepspeed" or cfg.sharding != "deepspeed" or cfg.stack == "megatron":
        return ZeroExtras(0, 0, 0)
    return zero_extras(
        model, cfg.zero_stage, cfg.data_parallel, trainable, c.weight_bytes(cfg.precision),
        mixed_full, cfg.offload_optimizer, cfg.stack == "hf", weights,
    )  # fmt: skip


def _paged_state(cfg: StatesConfig, shards: list[tuple[ParamTensor, int]]) -> int:
    """The uint8 states (two per parameter) that a paged 8-bit optimizer keeps in unified memory:
    those of tensors with at least BNB_PAGED_MIN_ELEMENTS elements, sharded like the state."""
    if cfg.optimizer != "paged-adamw-8bit":
        return 0
    paged = sum(2 * e * t.count for t, e in shards if e >= c.BNB_PAGED_MIN_ELEMENTS)
    return ceil(paged / cfg.data_parallel) if cfg.zero_stage >= 1 else paged


def _zero3_gathered(model: ModelArch, cfg: StatesConfig, full: bool) -> tuple[int, int]:
    """Bytes of the unsharded module(s) ZeRO-3 holds while computing, and their gradient.

    DeepSpeed gathers one module at a time (its estimator charges 4 bytes x the largest layer:
    16-bit weight + 16-bit gradient); FSDP gathers a whole wrapped transformer block and, with
    its default backward prefetch, the next block too.
    """
    if cfg.zero_stage < 3 or (cfg.sharding == "fsdp" and cfg.data_parallel == 1):
        return 0, 0  # FSDP on one rank falls back to NO_SHARD; DeepSpeed still gathers
    wb = c.weight_bytes(cfg.precision)
    if cfg.sharding == "fsdp":
        unit = ceil(block_params(model) / cfg.tensor_parallel)
        root = ceil(_root_params(model, cfg.stack) / cfg.tensor_parallel)
        root_gathered = root - ceil(root / cfg.data_parallel)  # beyond its own shard
        return 2 * wb * unit + wb * root_gathered, (wb * unit if full else 0)
    unit = ceil(largest_module_params(model) / cfg.tensor_parallel)
    return wb * unit, (wb * unit if full else 0)


def _root_params(model: ModelArch, stack: str) -> int:
    """Parameters FSDP keeps unsharded from their forward through the backward: the root unit
    outside the wrapped blocks. FSDP1 under Accelerate's transformer-layer wrap (the hf stack)
    does not reshard the root (embeddings, final norm, lm_head) after its forward; torchtitan's
    FSDP2 groups the final norm and output layer and shards them with reshard_after_forward
    False (models/llama3/parallelize.py @01db32e9), the embedding on its own; torchtune
    reshards its root like every layer."""
    head = model.vocab_size * model.hidden_size
    if stack == "torchtitan":
        return head
    if stack == "hf":
        return head if model.tied_embeddings else 2 * head
    return 0  # torchtune shards the root with reshard_after_forward=True (training/_distributed.py)


def _dequant_buffer(model: ModelArch, cfg: StatesConfig) -> int:
    """QLoRA: bitsandbytes dequantizes each 4-bit weight to 16-bit for its matmul, one at a time."""
    if cfg.method != "qlora":
        return 0
    largest = max(m.d_in * m.d_out for m in linear_modules(model))
    return c.BF16 * ceil(largest / cfg.tensor_parallel)


def _lm_head_dequant(model: ModelArch, cfg: StatesConfig) -> int:
    """QLoRA with a 4-bit lm_head: bitsandbytes dequantizes the whole vocabulary matrix for each
    of its matmuls (every forward chunk and its backward). Lightning quantizes from an fp16 copy
    (plugins/precision/bitsandbytes.py `quantize`), so the dequantized weight is fp16 and
    MatMul4Bit casts it to the compute dtype (`.to(A.dtype)`, autograd/_functions.py): under bf16
    both copies exist for a moment, under fp16 one."""
    if cfg.method != "qlora" or not cfg.qlora_lm_head or model.tied_embeddings:
        return 0
    copies = 1 if cfg.precision.startswith("fp16") else 2
    return copies * c.BF16 * ceil(model.vocab_size / cfg.tensor_parallel) * model.hidden_size
