"""Activation memory: the tensors autograd keeps from the forward pass for the backward pass.

The per-layer count is built tensor by tensor, following Korthikanti et al. 2022 ("Reducing
Activation Recomputation in Large Transformer Models", arXiv:2205.05198, §4): for a GPT block
with multi-head attention, a 4h GELU MLP, dropout and 16-bit activations it comes to exactly
34sbh + 5as²b bytes, plus LayerNorm's per-token statistics that the paper leaves out. The same
tensors are then adapted to grouped-query attention, gated MLPs, mixture-of-experts, fused
attention kernels, recomputation, tensor parallelism, frozen layers and LoRA adapters, following
what PyTorch and the Hugging Face implementations actually save (checked against
`torch.autograd.graph.saved_tensors_hooks` in tests/tools/test_estimator_measured.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import ceil

from tools.memory import constants as c
from tools.memory.inventory import PhysicalLinear
from tools.models import ModelArch

# Families whose Hugging Face eager attention runs softmax in fp32 (`softmax(..., dtype=float32)`
# then `.to(query.dtype)`); GPT-2 and BERT run it in the activation dtype.
_FP16_SOFTMAX_FAMILIES = frozenset({"gpt2", "bert"})
# Families whose published configs train with dropout 0.1 (attention, residual, embeddings).
DROPOUT_FAMILIES = frozenset({"gpt2", "bert", "t5"})
# Bytes kept per logit at the loss: during the cross-entropy backward the saved fp32
# log-softmax output, its incoming fp32 gradient and the outgoing fp32 gradient are live together
# (the forward peak, 16-bit logits + fp32 copy + fp32 log-softmax, is 10 bytes).
LOGIT_PEAK_BYTES = 12


@dataclass(frozen=True, slots=True)
class ActivationConfig:
    """What the activation rules need from an estimate's input."""

    model: ModelArch
    full: bool  # every weight trainable (pretrain/full); else LoRA/QLoRA on `targets`
    precision: str
    targets: tuple[PhysicalLinear, ...]
    lora_rank: int
    lora_dropout: bool
    micro_batch: int
    seq_len: int
    recompute: str  # none | selective | full
    attention: str  # eager | sdpa
    dropout: bool
    tensor_parallel: int
    sequence_parallel: bool


@dataclass(frozen=True, slots=True)
class LayerGroup:
    """`count` identical layers; `tensors` is what one layer saves without recomputation."""

    name: str
    count: int
    tensors: dict[str, int]
    stored_each: int  # bytes one layer keeps under the chosen recomputation

    @property
    def full_each(self) -> int:
        return sum(self.tensors.values())


@dataclass(frozen=True, slots=True)
class Activations:
    layers: tuple[LayerGroup, ...]
    head: dict[str, int]  # outside the layers: final norm, lm_head input, rotary tables
    logits_peak: int
    recompute_working_set: int  # one layer's full activations, rebuilt during backward
    total: int


@dataclass
class _Tally:
    """Saved tensors of one layer on one tensor-parallel rank."""

    cfg: ActivationConfig
    tokens: int
    items: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, nbytes: int, replicated: bool) -> None:
        """Record `nbytes`; a tensor replicated across TP ranks is split only under SP."""
        tp = self.cfg.tensor_parallel
        if replicated and self.cfg.sequence_parallel and tp > 1:
            nbytes = ceil(nbytes / tp)
        if nbytes:
            self.items[name] = self.items.get(name, 0) + nbytes


def _e(cfg: ActivationConfig) -> int:
    return c.activation_bytes(cfg.precision)


def _adapted(cfg: ActivationConfig, consumers: Sequence[str]) -> list[PhysicalLinear]:
    return [p for p in cfg.targets if any(s in p.slices for s in consumers)]


def add_norm(t: _Tally, name: str, tokens: int) -> None:
    """LayerNorm keeps its input plus fp32 mean and rstd per token. Hugging Face RMSNorm upcasts
    to fp32 and keeps that copy and the fp32 rsqrt, plus the normalized 16-bit tensor when its
    weight is trainable (the weight's gradient needs it)."""
    cfg, h, e = t.cfg, t.cfg.model.hidden_size, _e(t.cfg)
    if cfg.model.norm == "layernorm":
        t.add(f"{name}.input", e * tokens * h, True)
        t.add(f"{name}.norm_stats", 2 * c.FP32 * tokens, True)
        return
    t.add(f"{name}.input_fp32", c.FP32 * tokens * h, True)
    t.add(f"{name}.norm_stats", c.FP32 * tokens, True)
    if cfg.full:
        t.add(f"{name}.normalized", e * tokens * h, True)


def add_linear_input(
    t: _Tally,
    name: str,
    consumers: Sequence[str],
    width: int,
    tokens: int,
    *,
    replicated: bool,
    kept_anyway: bool = False,
) -> None:
    """The input shared by `consumers` and what their LoRA adapters add.

    A frozen nn.Linear (and bitsandbytes' 4-bit matmul) keeps no input; a trainable one does.
    PEFT casts the input to the adapter dtype: under mixed precision each adapter then keeps its
    own 16-bit autocast copy; otherwise it keeps the shared input. Each adapter also keeps its
    rank-r intermediate, and LoRA dropout a mask and the dropped input. Under autocast the
    16-bit casts of the fp32 adapter weights are kept for the backward pass too.
    """
    cfg, e = t.cfg, _e(t.cfg)
    adapted = [] if cfg.full else _adapted(cfg, consumers)
    mixed = cfg.precision in c.MIXED_PRECISIONS
    shared_by_adapter = bool(adapted) and not mixed and not cfg.lora_dropout
    if not kept_anyway and (cfg.full or shared_by_adapter):
        t.add(f"{name}", e * tokens * width, replicated)
    for p in adapted:
        if mixed or cfg.lora_dropout:
            t.add(f"{name}.lora_input_copy", e * tokens * width, replicated)
        if cfg.lora_dropout:
            t.add(f"{name}.lora_dropout_mask", c.MASK * tokens * width, replicated)
        t.add(f"{name}.lora_A_output", e * tokens * cfg.lora_rank, True)
        if mixed:  # autocast keeps a 16-bit copy of each fp32 adapter weight for the backward
            experts = cfg.model.num_experts if p.group == "mlp" and "router" not in p.slices else 1
            weights = cfg.lora_rank * (p.d_in + p.d_out) * experts
            t.add(f"{name}.lora_autocast_weights", c.BF16 * weights, False)


def add_attention(t: _Tally, prefix: str = "attention") -> None:
    cfg, m, e, n = t.cfg, t.cfg.model, _e(t.cfg), t.tokens
    tp = cfg.tensor_parallel
    heads = m.num_heads // tp
    q_width = heads * m.head_dim
    kv_heads = heads if cfg.attention == "eager" else ceil(m.num_kv_heads / tp)
    add_norm(t, f"{prefix}.norm", n)
    add_linear_input(
        t, f"{prefix}.qkv_input", ("q_proj", "k_proj", "v_proj"), m.hidden_size, n, replicated=True
    )
    t.add(f"{prefix}.query", e * n * q_width, False)
    t.add(f"{prefix}.key", e * n * kv_heads * m.head_dim, False)
    t.add(f"{prefix}.value", e * n * kv_heads * m.head_dim, False)
    if cfg.attention == "eager":
        add_eager_core(t, prefix, heads)
    else:  # fused kernel: output and fp32 log-sum-exp, no s x s tensors
        t.add(f"{prefix}.output", e * n * q_width, False)
        t.add(f"{prefix}.logsumexp", c.FP32 * heads * n, False)
    add_linear_input(
        t,
        f"{prefix}.o_proj_input",
        ("o_proj",),
        q_width,
        n,
        replicated=False,
        kept_anyway=cfg.attention != "eager",
    )
    if cfg.dropout:
        t.add(f"{prefix}.residual_dropout_mask", c.MASK * n * m.hidden_size, True)


def add_eager_core(t: _Tally, prefix: str, heads: int) -> None:
    """Softmax output (fp32 in most Hugging Face families), the 16-bit probabilities the value
    matmul keeps, and with dropout its mask and output: Korthikanti's 5as²b at 16-bit."""
    cfg, e = t.cfg, _e(t.cfg)
    scores = heads * cfg.seq_len * cfg.seq_len * cfg.micro_batch
    upcast = cfg.model.family not in _FP16_SOFTMAX_FAMILIES
    softmax_bytes = c.FP32 if upcast else e
    t.add(f"{prefix}.scores.softmax", softmax_bytes * scores, False)
    if cfg.dropout:
        t.add(f"{prefix}.scores.dropout_mask", c.MASK * scores, False)
        t.add(f"{prefix}.scores.dropout_output", e * scores, False)
    elif softmax_bytes != e:
        t.add(f"{prefix}.scores.probs_16bit", e * scores, False)


def add_mlp(t: _Tally) -> None:
    cfg, m, e, n = t.cfg, t.cfg.model, _e(t.cfg), t.tokens
    inner = ceil(m.intermediate_size / cfg.tensor_parallel)
    add_norm(t, "mlp.norm", n)
    routed = n
    if m.is_moe:
        add_linear_input(t, "mlp.router_input", ("router",), m.hidden_size, n, replicated=True)
        t.add("mlp.router_probs", c.FP32 * n * m.num_experts, True)
        routed = n * m.experts_per_token
        # Hugging Face's grouped-experts routing: top-k and sort indices (int64) and the fp32
        # top-k weights, their sum and the per-slot weights.
        t.add("mlp.routing_indices", 4 * c.INT64 * routed + 4 * m.num_experts, True)
        t.add("mlp.routing_weights", c.FP32 * (2 * routed + n), True)
    up = ("gate_proj", "up_proj") if m.gated_mlp else ("up_proj",)
    add_linear_input(t, "mlp.input", up, m.hidden_size, routed, replicated=True)
    t.add("mlp.act_input", e * routed * inner, False)
    if m.gated_mlp:
        t.add("mlp.act_output", e * routed * inner, False)
        t.add("mlp.up_output", e * routed * inner, False)
    add_linear_input(t, "mlp.down_input", ("down_proj",), inner, routed, replicated=False)
    if m.is_moe:
        t.add("mlp.expert_output", e * routed * m.hidden_size, True)
    if cfg.dropout:
        t.add("mlp.residual_dropout_mask", c.MASK * n * m.hidden_size, True)
    for i in range(max(m.norms_per_layer - 2, 0)):  # Gemma 2: norms after attention and MLP
        add_norm(t, f"post_norm{i + 1}", n)


def layer_tensors(cfg: ActivationConfig, cross_attention: bool = False) -> dict[str, int]:
    """Bytes each tensor of one layer keeps on one GPU, without recomputation."""
    t = _Tally(cfg, cfg.seq_len * cfg.micro_batch)
    add_attention(t)
    if cross_attention:
        add_attention(t, "cross_attention")
    add_mlp(t)
    return t.items


def _stored(cfg: ActivationConfig, tensors: dict[str, int]) -> int:
    if cfg.recompute == "full":  # only the layer input is checkpointed
        return _checkpoint_bytes(cfg)
    if cfg.recompute == "selective":  # the attention core is recomputed
        return sum(v for k, v in tensors.items() if ".scores." not in k)
    return sum(tensors.values())


def _checkpoint_bytes(cfg: ActivationConfig) -> int:
    t = _Tally(cfg, 0)
    t.add("checkpoint", _e(cfg) * cfg.seq_len * cfg.micro_batch * cfg.model.hidden_size, True)
    return sum(t.items.values())


def head_tensors(cfg: ActivationConfig) -> dict[str, int]:
    """Outside the layers: embedding dropout, final norm(s), lm_head input, rotary tables."""
    m, e, n = cfg.model, _e(cfg), cfg.seq_len * cfg.micro_batch
    t = _Tally(cfg, n)
    if not m.learned_positions and not m.relative_attention_buckets:
        t.add("rotary_cos_sin", 2 * e * cfg.seq_len * m.head_dim, False)
    if cfg.dropout:
        t.add("embedding_dropout_mask", c.MASK * n * m.hidden_size, True)
    if m.embedding_norm:
        add_norm(t, "embedding_norm", n)
    stacks = 2 if m.num_decoder_layers else 1
    for i in range(stacks if m.final_norm else 0):
        add_norm(t, "final_norm" if i == 0 else "encoder_final_norm", n)
    if cfg.full:
        t.add("lm_head_input", e * n * m.hidden_size, True)
    return t.items


def logits_peak(cfg: ActivationConfig) -> int:
    """Logits and cross-entropy buffers at the loss, vocabulary-parallel under TP."""
    tokens = cfg.seq_len * cfg.micro_batch
    return LOGIT_PEAK_BYTES * tokens * ceil(cfg.model.vocab_size / cfg.tensor_parallel)


def compute_activations(cfg: ActivationConfig) -> Activations:
    """Peak activation bytes on one GPU, at the start of the backward pass.

    Without full recomputation every layer's tensors, the head's and the loss buffers are live
    together. With it, each layer keeps its input; the loss buffers are freed before the first
    layer is recomputed, so the peak is the larger of the two moments.
    """
    m = cfg.model
    groups: list[LayerGroup] = []
    if m.num_decoder_layers:
        enc = layer_tensors(cfg)
        dec = layer_tensors(cfg, cross_attention=True)
        groups.append(LayerGroup("encoder layer", m.num_layers, enc, _stored(cfg, enc)))
        groups.append(LayerGroup("decoder layer", m.num_decoder_layers, dec, _stored(cfg, dec)))
    else:
        one = layer_tensors(cfg)
        groups.append(LayerGroup(f"{m.arch} layer", m.num_layers, one, _stored(cfg, one)))
    head = head_tensors(cfg)
    loss = logits_peak(cfg)
    layers_total = sum(g.count * g.stored_each for g in groups)
    rotary = head.get("rotary_cos_sin", 0)
    if cfg.recompute == "full":
        working = max(g.full_each for g in groups)
        at_loss = sum(head.values()) - rotary + loss
        total = layers_total + rotary + max(at_loss, working)
    else:
        working = 0
        total = layers_total + sum(head.values()) + loss
    return Activations(tuple(groups), head, loss, working, total)
