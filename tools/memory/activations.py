"""Activation memory: the tensors autograd keeps from the forward pass for the backward pass.

The per-layer count is built tensor by tensor, following Korthikanti et al. 2022 ("Reducing
Activation Recomputation in Large Transformer Models", arXiv:2205.05198, §4): for a GPT block
with multi-head attention, a 4h GELU MLP, dropout and 16-bit activations it comes to exactly
34sbh + 5as²b bytes, plus LayerNorm's per-token statistics that the paper leaves out. The same
tensors are then adapted to grouped-query attention, gated MLPs, mixture-of-experts, fused
attention kernels, recomputation, tensor parallelism, frozen layers and LoRA adapters, following
what PyTorch and the Hugging Face implementations actually save (checked against
`torch.autograd.graph.saved_tensors_hooks` in tests/tools/memory/test_estimator_measured.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from math import ceil

from tools.architectures.architecture import ModelArch
from tools.memory import constants as c
from tools.memory.layers import (
    DROPOUT_FAMILIES,
    ActivationConfig,
    Tally,
    add_norm,
    backward_buffers,
    layer_tally,
)
from tools.memory.stacks.checkpointing import offload_residue, op_level_kept
from tools.memory.stacks.loss import LINEAR_LOSSES, LossBytes, loss_bytes
from tools.memory.states.inventory import ROUTED_EXPERT_LINEARS, linear_modules

__all__ = [
    "DROPOUT_FAMILIES",
    "ActivationConfig",
    "Activations",
    "LayerGroup",
    "compute_activations",
]


@dataclass(frozen=True, slots=True)
class LayerGroup:
    """`count` identical layers; `tensors` is what one layer saves without recomputation."""

    name: str
    count: int
    tensors: dict[str, int]
    stored_each: int  # bytes one layer keeps under the chosen recomputation
    held_each: int = 0  # of `tensors`, the bytes a 4-bit layer keeps on its graph node

    @property
    def full_each(self) -> int:
        return sum(self.tensors.values())


@dataclass(frozen=True, slots=True)
class Activations:
    layers: tuple[LayerGroup, ...]
    head: dict[str, int]  # outside the layers: final norm, lm_head input, rotary tables
    logits_peak: int  # logits and loss buffers at the loss backward's peak (stacks/loss.py)
    recompute_working_set: int  # one layer's tensors rebuilt during backward
    total: int  # the largest activation bytes of the backward pass (A2's start-of-backward sum)
    logits_forward: int = 0  # logits and loss buffers inside the forward pass, at the loss
    logits: int = 0  # logits per micro-batch (elements), vocabulary-parallel under TP
    weight_copies: int = 0  # autocast's 16-bit copies of trainable weights (all layers + head)
    head_weight_copies: int = 0  # of those, the lm_head's (kept into the backward pass)
    logit_bytes: int = c.FP32  # bytes per logit as the lm_head returns it
    logits_head: int = 0  # the logits' gradient while lm_head's backward runs
    logits_held: int = 0  # logits the training loop keeps through the rest of the step
    logits_at_head: int = 0  # logits alive while the lm_head writes the last of them (forward)
    graph_held: int = 0  # 4-bit layers' inputs that live as long as the autograd graph
    layers_on_gpu: int = 0  # layer activations on the GPU at the loss (offload moves the rest)
    layers_at_recompute: int = 0  # layer activations on the GPU while the top layer is rebuilt
    offloaded: int = 0  # layer activations in CPU RAM (activation offload)
    layer_backward_buffers: int = 0  # gradient buffers of one layer's backward (layers.py)
    logits_kept: int = 0  # the model's logits a loop keeps through the backward pass and step

    @property
    def stored(self) -> int:
        """Layer activations on the GPU at the loss under the recomputation choice (and
        offload), plus the head's."""
        return self.layers_on_gpu + sum(self.head.values())


def _stored(cfg: ActivationConfig, tensors: dict[str, int]) -> int:
    """Bytes one layer keeps for the backward pass under the recomputation choice."""
    if cfg.recompute == "full":  # only the layer input is checkpointed
        return _checkpoint_bytes(cfg)
    if cfg.recompute == "selective" and cfg.selective == "op":
        return min(op_level_kept(cfg, _checkpoint_bytes(cfg)), sum(tensors.values()))
    if cfg.recompute == "selective":  # the attention core is recomputed
        return sum(v for k, v in tensors.items() if ".scores." not in k)
    return sum(tensors.values())


def _checkpoint_bytes(cfg: ActivationConfig) -> int:
    t = Tally(cfg, 0)
    hidden = cfg.seq_len * cfg.micro_batch * cfg.model.hidden_size
    t.add("checkpoint", cfg.dtypes.stream * hidden, True)
    return sum(t.items.values())


def head_tensors(cfg: ActivationConfig) -> dict[str, int]:
    """Outside the layers: embedding dropout, final norm(s), lm_head input, rotary tables, and
    BERT's masked-LM transform (dense + GELU + LayerNorm before the vocabulary projection)."""
    m, e, n, d = cfg.model, cfg.dtypes.act, cfg.seq_len * cfg.micro_batch, cfg.dtypes
    t = Tally(cfg, n)
    if not m.learned_positions and not m.relative_attention_buckets:
        t.add("rotary_cos_sin", 2 * d.stream * cfg.seq_len * m.head_dim, False)
    if cfg.dropout:
        t.add("embedding_dropout_mask", d.mask_stream * n * m.hidden_size, True)
    if m.embedding_norm:
        add_norm(t, "embedding_norm", n)
    stacks = 2 if m.num_decoder_layers else 1
    for i in range(stacks if m.final_norm else 0):
        add_norm(t, "final_norm" if i == 0 else "encoder_final_norm", n)
    if m.family == "bert":
        if cfg.full:
            t.add("mlm_transform_input", e * n * m.hidden_size, True)
        t.add("mlm_gelu_input", e * n * m.hidden_size, True)
        add_norm(t, "mlm_norm", n)
    if cfg.full:
        t.add("lm_head_input", e * n * m.hidden_size, True)
    elif _four_bit_head(cfg):  # a frozen 4-bit lm_head that keeps its input (MatMul4Bit)
        t.add("lm_head_input.4bit_input", e * n * m.hidden_size, True)
    return t.items


def _four_bit_head(cfg: ActivationConfig) -> bool:
    quantized = cfg.qlora and cfg.qlora_lm_head and not cfg.model.tied_embeddings
    return quantized and cfg.qlora_keeps_input


def graph_held_bytes(
    cfg: ActivationConfig, groups: Sequence[LayerGroup], head: dict[str, int]
) -> int:
    """Bytes the 4-bit layers keep on their autograd nodes: bitsandbytes' MatMul4Bit before
    0.43.2 stores its input as `ctx.tensors = (A, B)` (autograd/_functions.py), an attribute
    rather than a saved tensor, so it is not released when the backward pass reaches the node
    but only when the graph itself is freed (layers.py marks the tensors). Under full
    recomputation each layer's graph is rebuilt and dropped inside its own backward, so none
    outlives it."""
    if not (cfg.qlora and cfg.qlora_keeps_input) or cfg.recompute == "full":
        return 0
    layers = sum(g.count * g.held_each for g in groups)
    return layers + head.get("lm_head_input.4bit_input", 0)


def weight_copies(cfg: ActivationConfig) -> tuple[int, int]:
    """Autocast's cached 16-bit copies of trainable weights: (all, the lm_head's), in bytes.

    Autocast casts a weight once per forward and keeps the copy for the matmul's backward: every
    linear weight of the blocks, the router and the lm_head (tied or not) and BERT's MLM dense.
    Embedding lookups and the grouped expert matmuls are not autocast.
    """
    copy = cfg.dtypes.weight_copy
    if not copy:
        return 0, 0
    m, tp = cfg.model, cfg.tensor_parallel
    blocks = sum(
        mod.d_in * mod.d_out * mod.count
        for mod in linear_modules(m)
        if not (m.is_moe and mod.name in ROUTED_EXPERT_LINEARS)
    )
    head = m.vocab_size * m.hidden_size + (m.hidden_size**2 if m.family == "bert" else 0)
    return ceil(copy * (blocks + head) / tp), ceil(copy * head / tp)


def logit_count(cfg: ActivationConfig) -> int:
    """Logits of one micro-batch on one rank: tokens x vocabulary (vocabulary-parallel)."""
    return cfg.seq_len * cfg.micro_batch * ceil(cfg.model.vocab_size / cfg.tensor_parallel)


def compute_activations(cfg: ActivationConfig) -> Activations:
    """Peak activation bytes on one GPU, at the start of the backward pass.

    Without full recomputation every layer's tensors, the head's and the loss buffers are live
    together. With it, each layer keeps its input; the loss buffers are freed before the first
    layer is recomputed, so the peak is the larger of the two moments. Activation offload keeps
    only the last saved tensors on the GPU (stacks/checkpointing.py) and the rest in CPU RAM.
    """
    groups = _layer_groups(cfg)
    head = head_tensors(cfg)
    m = cfg.model
    tokens_hidden = ceil(cfg.seq_len * cfg.micro_batch * m.hidden_size / cfg.tensor_parallel)
    lb = _loss(cfg, tokens_hidden)
    kept = kept_output_bytes(cfg)
    lb = replace(lb, backward=lb.backward + kept, head=lb.head + kept)
    layers_total = sum(g.count * g.stored_each for g in groups)
    on_gpu, at_recompute, offloaded = layers_total, layers_total, 0
    if cfg.activation_offload:
        count = sum(g.count for g in groups)
        each = max(g.stored_each for g in groups)
        largest = max(max(g.tensors.values()) for g in groups)
        residue = offload_residue(each, largest, count, cfg.recompute == "full", cfg.offload_stash)
        on_gpu = min(layers_total, residue)
        at_recompute, offloaded = each, layers_total - on_gpu
    working = max(g.full_each - (0 if cfg.recompute == "full" else g.stored_each) for g in groups)
    if cfg.recompute == "none":
        working = 0
    rotary = head.get("rotary_cos_sin", 0)
    if cfg.recompute == "full":
        at_loss = sum(head.values()) - rotary + lb.backward
        total = on_gpu + rotary + max(at_loss, working + at_recompute - on_gpu + kept)
    else:
        total = on_gpu + sum(head.values()) + lb.backward
    copies, head_copies = weight_copies(cfg)
    kept_copies = head_copies if cfg.recompute == "full" else copies
    # While the lm_head writes its output: the logits (a chunked linear loss: its own chunks)
    # and whatever the loop still holds from the step before.
    at_head = lb.forward if cfg.loss in LINEAR_LOSSES else cfg.dtypes.logits * logit_count(cfg)
    return Activations(
        tuple(groups), head, lb.backward, working, total + kept_copies, lb.forward,
        logit_count(cfg), copies, head_copies, cfg.dtypes.logits, lb.head, lb.held,
        at_head + lb.held, graph_held_bytes(cfg, groups, head), on_gpu, at_recompute, offloaded,
        max(backward_buffers(cfg, g.tensors) for g in groups), kept,
    )  # fmt: skip


def kept_output_bytes(cfg: ActivationConfig) -> int:
    """The logits a training loop holds in the model's output through the backward pass and
    the optimizer step (`loop_keeps_output`), as the model returns them: fp32 where it upcasts
    them itself (transformers < 4.46), else 16-bit. A loss fused with the lm_head returns no
    logits, and litgpt's chunked loss counts the ones its loop keeps (stacks/loss.py)."""
    if not cfg.loop_keeps_output or cfg.loss in LINEAR_LOSSES or cfg.loss == "chunked-16bit":
        return 0
    fp32 = cfg.upcast_logits or cfg.loss == "older-hf"
    return (c.FP32 if fp32 else cfg.dtypes.logits) * logit_count(cfg)


def _loss(cfg: ActivationConfig, tokens_hidden: int) -> LossBytes:
    """The loss buffers (stacks/loss.py). When the model itself casts its 16-bit logits to fp32
    (transformers < 4.46), the loss receives 4-byte logits and the lm_head's backward gets their
    gradient cast back to 16-bit, 2 bytes per logit more; with the standard loss that is the
    `older-hf` chain; any other loss (a fused kernel patched in for CrossEntropyLoss) gets the
    shifted fp32 copy of them (modeling_llama.py of 4.45: `logits[..., :-1, :].contiguous()`)
    while the model's fp32 logits are alive, and its gradient goes back through that slice."""
    logits, b = logit_count(cfg), cfg.dtypes.logits
    if not (cfg.upcast_logits and b != c.FP32) or cfg.loss in ("older-hf", "standard"):
        loss = "older-hf" if cfg.upcast_logits and cfg.loss == "standard" else cfg.loss
        return loss_bytes(loss, logits, b, cfg.seq_len, tokens_hidden, cfg.compiled_loss)
    lb = loss_bytes(cfg.loss, logits, c.FP32, cfg.seq_len, tokens_hidden, cfg.compiled_loss)
    if cfg.loss in LINEAR_LOSSES:  # the lm_head runs inside the loss: the model has no logits
        return replace(lb, head=lb.head + b * logits)
    # The model's fp32 logits live beside the shifted contiguous copy the loss gets (forward);
    # in the backward pass the copy's gradient is written into a zero-filled unshifted one.
    shifted = c.FP32 * logits
    return LossBytes(lb.forward + shifted, max(lb.backward, 2 * shifted), lb.head + b * logits,
                     lb.held)  # fmt: skip


def _layer_groups(cfg: ActivationConfig) -> list[LayerGroup]:
    """The model's layers as groups of identical layers (T5: encoder and decoder)."""
    m = cfg.model
    if m.num_decoder_layers:
        return [
            _group("encoder layer", m.num_layers, cfg),
            _group("decoder layer", m.num_decoder_layers, cfg, cross_attention=True),
        ]
    if not (m.is_moe and m.dense_layers):
        return [_group(f"{m.arch} layer", m.num_layers, cfg)]
    dense = replace(cfg, model=dense_view(m), mlp_prefix="dense_")
    return [
        _group("dense-MLP layer", m.dense_layers, dense),
        _group("MoE layer", m.num_layers - m.dense_layers, cfg),
    ]


def _group(
    name: str, count: int, cfg: ActivationConfig, cross_attention: bool = False
) -> LayerGroup:
    """`count` identical layers: their tensors, what each keeps, what a 4-bit layer holds."""
    t = layer_tally(cfg, cross_attention)
    held = sum(t.items[k] for k in t.held if k in t.items)
    return LayerGroup(name, count, t.items, _stored(cfg, t.items), held)


def dense_view(m: ModelArch) -> ModelArch:
    """A MoE model's dense-MLP layers seen as a dense model (their MLP width, no experts)."""
    dense = {"num_experts": 1, "experts_per_token": 1, "dense_layers": 0}
    dense |= {"shared_expert_intermediate_size": 0, "shared_expert_gate": False}
    return m.model_copy(update={**dense, "intermediate_size": m.dense_intermediate_size})
