"""What one transformer layer saves for the backward pass, tensor by tensor.

`layer_tensors(cfg)` lists the bytes of every tensor one layer keeps on one GPU without
recomputation: the norms, the attention block (fused or eager), the MLP (dense, gated or
mixture-of-experts), dropout masks and the inputs LoRA adapters keep. The rules follow what
PyTorch and the Hugging Face implementations save (tests/tools/memory/test_estimator_measured.py
checks them against `torch.autograd.graph.saved_tensors_hooks`); `ActivationConfig` says which
precision, engine, device and stack mechanisms apply. tools/memory/activations.py builds the
whole model's activations from these layers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import ceil

from tools.architectures.architecture import ModelArch
from tools.memory import constants as c
from tools.memory.dtypes import SavedDtypes, saved_dtypes
from tools.memory.states.inventory import ROUTED_EXPERT_LINEARS, PhysicalLinear, physical_linears

# Families whose Hugging Face eager attention runs softmax in fp32 (`softmax(..., dtype=float32)`
# then `.to(query.dtype)`); GPT-2 and BERT run it in the activation dtype.
_FP16_SOFTMAX_FAMILIES = frozenset({"gpt2", "bert"})
# Families whose published configs train with dropout 0.1 (attention, residual, embeddings).
DROPOUT_FAMILIES = frozenset({"gpt2", "bert", "t5"})
# Families whose Hugging Face MLP uses the Python tanh-GELU (`gelu_new`: 0.5 * x * (1 + tanh(...))),
# which keeps four tensors of the MLP width (x, 0.5x, tanh, 1 + tanh) instead of one.
_PYTHON_GELU_FAMILIES = frozenset({"gpt2"})


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
    engine: str = "deepspeed"  # pytorch: autocast over fp32 weights; deepspeed: a 16-bit model
    device: str = "cuda"  # cpu: CPU kernels' storage (see tools.memory.dtypes)
    # The stack's mechanisms (tools/memory/stacks/profiles.py); the defaults are the hf stack's.
    loss: str = "standard"  # cross-entropy implementation (tools/memory/stacks/loss.py)
    compiled_loss: bool = False  # the loss runs under torch.compile
    selective: str = "attention"  # what recompute="selective" keeps: attention | op
    activation_offload: bool = False  # saved tensors moved to CPU RAM
    qlora_keeps_input: bool = False  # QLoRA: each 4-bit layer saves its input
    qlora_lm_head: bool = False  # QLoRA: the lm_head is 4-bit too
    repeat_kv: bool = False  # K and V expanded to every query head before attention
    fused_rmsnorm: bool = False  # a fused RMSNorm kernel
    qlora: bool = False  # the frozen base's linear layers are 4-bit
    fp32_base: bool = False  # LoRA/QLoRA over a base whose non-quantized weights are fp32
    mlp_prefix: str = ""  # "dense_": the dense-MLP layers of a mixture-of-experts model
    fused_lora: bool = False  # LoRA layers as fused kernels (unsloth kernels/fast_lora.py)
    upcast_logits: bool = False  # the model casts its logits to fp32 (transformers < 4.46)
    loop_keeps_output: bool = False  # the loop holds the model's output through the step
    offload_stash: int = 5  # checkpoints activation offload leaves on the GPU

    @property
    def dtypes(self) -> SavedDtypes:
        return saved_dtypes(self.precision, self.engine, self.full, self.device, self.fp32_base)


@dataclass
class Tally:
    """Saved tensors of one layer on one tensor-parallel rank."""

    cfg: ActivationConfig
    tokens: int
    items: dict[str, int] = field(default_factory=dict)
    held: set[str] = field(default_factory=set)  # items a 4-bit layer keeps on its graph node

    def add(self, name: str, nbytes: int, replicated: bool) -> None:
        """Record `nbytes`; a tensor replicated across TP ranks is split only under SP."""
        tp = self.cfg.tensor_parallel
        if replicated and self.cfg.sequence_parallel and tp > 1:
            nbytes = ceil(nbytes / tp)
        if nbytes:
            self.items[name] = self.items.get(name, 0) + nbytes


def _e(cfg: ActivationConfig) -> int:
    """Bytes of a matmul output (16-bit under mixed or pure bf16, 4 under fp32)."""
    return cfg.dtypes.act


def _adapted(cfg: ActivationConfig, consumers: Sequence[str]) -> list[PhysicalLinear]:
    return [p for p in cfg.targets if any(s in p.slices for s in consumers)]


def add_norm(t: Tally, name: str, tokens: int, width: int = 0) -> None:
    """LayerNorm keeps its input plus mean and rstd per token (fp32 on CUDA). Hugging Face RMSNorm
    upcasts to fp32 and keeps that copy and the fp32 rsqrt, plus the normalized tensor (in the
    stream's dtype) when its weight is trainable (the weight's gradient needs it). A fused kernel
    (unsloth kernels/rms_layernorm.py, Transformer Engine) keeps its input and the fp32 rstd."""
    cfg, h, d = t.cfg, width or t.cfg.model.hidden_size, t.cfg.dtypes
    if cfg.model.norm == "layernorm":
        t.add(f"{name}.input", d.norm_input * tokens * h, True)
        t.add(f"{name}.norm_stats", 2 * d.norm_stats * tokens, True)
        return
    if cfg.fused_rmsnorm:  # one kernel: its input as it came and one fp32 rstd per token
        t.add(f"{name}.input", d.stream * tokens * h, True)
        t.add(f"{name}.norm_stats", c.FP32 * tokens, True)
        return
    t.add(f"{name}.input_fp32", c.FP32 * tokens * h, True)
    t.add(f"{name}.norm_stats", c.FP32 * tokens, True)
    if cfg.full:
        t.add(f"{name}.normalized", d.stream * tokens * h, True)


def add_linear_input(
    t: Tally,
    name: str,
    consumers: Sequence[str],
    width: int,
    tokens: int,
    *,
    replicated: bool,
    kept_anyway: bool = False,
    from_stream: bool = False,
    held_as: str = "",
) -> None:
    """The input shared by `consumers` and what their LoRA adapters add.

    `from_stream`: the input comes from a norm or the residual stream. Under autocast over fp32
    weights each consuming nn.Linear then keeps its own 16-bit cast (q, k and v: three copies).

    A frozen nn.Linear (and bitsandbytes' 4-bit matmul since 0.43.2) keeps no input; a trainable
    one does, and so does bitsandbytes' MatMul4Bit before 0.43.2 (`ctx.tensors = (A, B)`).
    PEFT casts the input to the adapter dtype: under mixed precision each adapter then keeps its
    own 16-bit autocast copy; otherwise it keeps the shared input. Each adapter also keeps its
    rank-r intermediate, and LoRA dropout a mask and the dropped input. Under autocast the
    16-bit casts of the fp32 adapter weights are kept for the backward pass too.

    A 4-bit layer that keeps its input marks the tensor holding it in `t.held` (`held_as`: the
    tensor another op keeps when the input is `kept_anyway`): activations.py counts how long
    those live.
    """
    cfg, e = t.cfg, _e(t.cfg)
    adapted = [] if cfg.full else _adapted(cfg, consumers)
    mixed = cfg.precision in c.MIXED_PRECISIONS
    shared_by_adapter = bool(adapted) and not mixed and not cfg.lora_dropout
    four_bit = cfg.qlora and cfg.qlora_keeps_input
    if not kept_anyway and (cfg.full or shared_by_adapter):
        copies = _consumer_count(cfg, consumers) if from_stream and cfg.dtypes.casts else 1
        t.add(f"{name}", copies * e * tokens * width, replicated)
        if four_bit:
            t.held.add(name)
    elif not kept_anyway and four_bit:  # one tensor for all readers
        t.add(f"{name}.4bit_input", e * tokens * width, replicated)
        t.held.add(f"{name}.4bit_input")
    elif four_bit and held_as:
        t.held.add(held_as)
    for p in adapted:
        if mixed or cfg.lora_dropout:
            t.add(f"{name}.lora_input_copy", e * tokens * width, replicated)
        if cfg.lora_dropout:
            t.add(f"{name}.lora_dropout_mask", c.MASK * tokens * width, replicated)
        t.add(f"{name}.lora_A_output", e * tokens * cfg.lora_rank, True)
        if mixed:  # autocast keeps a 16-bit copy of each fp32 adapter weight for the backward
            routed = set(p.slices) <= ROUTED_EXPERT_LINEARS
            experts = cfg.model.num_experts if routed else 1
            weights = cfg.lora_rank * (p.d_in + p.d_out) * experts
            t.add(f"{name}.lora_autocast_weights", c.BF16 * weights, False)


def _consumer_count(cfg: ActivationConfig, consumers: Sequence[str]) -> int:
    """Physical nn.Linear modules reading one input (fused q/k/v count once)."""
    return sum(1 for p in physical_linears(cfg.model) if any(s in p.slices for s in consumers))


def add_attention(t: Tally, prefix: str = "attention") -> None:
    cfg, m, e, n = t.cfg, t.cfg.model, _e(t.cfg), t.tokens
    tp, d = cfg.tensor_parallel, cfg.dtypes
    heads = m.num_heads // tp
    q_width = heads * m.head_dim
    math = cfg.attention == "sdpa" and cfg.dropout and d.math_attention
    repeated = cfg.attention == "eager" or math or cfg.repeat_kv  # K, V copied to every head
    kv_heads = heads if repeated else ceil(m.num_kv_heads / tp)
    qkv = c.FP32 if math else e  # the CPU math kernel upcasts 16-bit Q, K, V to fp32
    add_norm(t, f"{prefix}.norm", n)
    readers = ("q_proj", "q_a_proj", "kv_a_proj_with_mqa") if m.is_mla else ("q_proj", "k_proj",
               "v_proj")  # fmt: skip
    add_linear_input(t, f"{prefix}.qkv_input", readers, m.hidden_size, n, replicated=True,
                     from_stream=True)  # fmt: skip
    if m.is_mla:
        add_mla_latents(t, prefix)
    value_width = m.v_head_dim if m.is_mla else m.head_dim
    t.add(f"{prefix}.query", qkv * n * q_width, False)
    t.add(f"{prefix}.key", qkv * n * kv_heads * m.head_dim, False)
    t.add(f"{prefix}.value", qkv * n * kv_heads * value_width, False)
    if m.qk_norm:  # Qwen3: RMSNorm over every q and k head before the rotary embedding
        add_norm(t, f"{prefix}.q_norm", n, q_width)
        add_norm(t, f"{prefix}.k_norm", n, ceil(m.num_kv_heads / tp) * m.head_dim)
    if cfg.attention == "eager" or math:
        add_eager_core(t, prefix, heads, math)
    else:  # fused kernel: output and fp32 log-sum-exp, no s x s tensors
        t.add(f"{prefix}.output", e * n * q_width, False)
        t.add(f"{prefix}.logsumexp", c.FP32 * heads * n, False)
    fused = cfg.attention == "sdpa" and not math
    o_width = heads * value_width
    add_linear_input(t, f"{prefix}.o_proj_input", ("o_proj",), o_width, n, replicated=False,
                     kept_anyway=fused, held_as=f"{prefix}.output")  # fmt: skip
    if cfg.dropout:
        t.add(f"{prefix}.residual_dropout_mask", d.mask_act * n * m.hidden_size, True)


def add_mla_latents(t: Tally, prefix: str) -> None:
    """Multi-head latent attention (DeepSeek-V2/V3, HF modeling_deepseek_v3): the query latent
    (q_lora_rank wide) and the key/value latent (kv_lora_rank) each pass an RMSNorm and feed
    their up-projection, which keeps its input if it trains or carries an adapter."""
    cfg, m, n = t.cfg, t.cfg.model, t.tokens
    if m.q_lora_rank:
        add_norm(t, f"{prefix}.q_latent_norm", n, m.q_lora_rank)
        add_linear_input(t, f"{prefix}.q_latent", ("q_b_proj",), m.q_lora_rank, n,
                         replicated=True)  # fmt: skip
    add_norm(t, f"{prefix}.kv_latent_norm", n, m.kv_lora_rank)
    add_linear_input(t, f"{prefix}.kv_latent", ("kv_b_proj",), m.kv_lora_rank, n, replicated=True)
    if cfg.full:  # the rotary key part, split off the compressed projection
        t.add(f"{prefix}.k_rope", _e(cfg) * n * m.qk_rope_head_dim, True)


def add_eager_core(t: Tally, prefix: str, heads: int, math: bool = False) -> None:
    """Softmax output (fp32 in most Hugging Face families and under autocast), the probabilities
    the value matmul keeps, and with dropout its mask and output: Korthikanti's 5as²b at 16-bit.
    `math`: the CPU math kernel of SDPA, everything in fp32."""
    cfg, e, d = t.cfg, _e(t.cfg), t.cfg.dtypes
    scores = heads * cfg.seq_len * cfg.seq_len * cfg.micro_batch
    upcast = cfg.model.family not in _FP16_SOFTMAX_FAMILIES or d.casts
    softmax_bytes = c.FP32 if upcast or math else e
    probs = c.FP32 if math else e
    t.add(f"{prefix}.scores.softmax", softmax_bytes * scores, False)
    if softmax_bytes != probs and not cfg.dropout:  # dropout keeps its mask, not its input
        t.add(f"{prefix}.scores.probs_16bit", probs * scores, False)
    if cfg.dropout:
        mask = c.FP32 if math else (d.mask_act if d.mask_act == c.MASK else probs)
        t.add(f"{prefix}.scores.dropout_mask", mask * scores, False)
        t.add(f"{prefix}.scores.dropout_output", probs * scores, False)


def add_mlp(t: Tally) -> None:
    cfg, m, e, n, d = t.cfg, t.cfg.model, _e(t.cfg), t.tokens, t.cfg.dtypes
    inner = ceil(m.intermediate_size / cfg.tensor_parallel)
    add_norm(t, "mlp.norm", n)
    routed, x = n, e
    if m.is_moe:
        add_linear_input(t, "mlp.router_input", ("router",), m.hidden_size, n, replicated=True,
                         from_stream=True)  # fmt: skip
        t.add("mlp.router_probs", c.FP32 * n * m.num_experts, True)
        routed, x = n * m.experts_per_token, d.experts  # grouped matmuls: not autocast
        # Hugging Face's grouped-experts routing: top-k and sort indices (int64) and the fp32
        # top-k weights, their sum and the per-slot weights.
        t.add("mlp.routing_indices", 4 * c.INT64 * routed + 4 * m.num_experts, True)
        t.add("mlp.routing_weights", c.FP32 * (2 * routed + n), True)
    pre = cfg.mlp_prefix
    up = (pre + "gate_proj", pre + "up_proj") if m.gated_mlp else (pre + "up_proj",)
    grouped = m.is_moe and d.casts and cfg.full
    if grouped:  # the experts' own dtype: no per-consumer 16-bit casts
        t.add("mlp.input", x * routed * m.hidden_size, True)
    else:
        add_linear_input(t, "mlp.input", up, m.hidden_size, routed, replicated=True,
                         from_stream=not m.is_moe)  # fmt: skip
    t.add("mlp.act_input", x * routed * inner, False)
    if m.gated_mlp:
        t.add("mlp.act_output", x * routed * inner, False)
        t.add("mlp.up_output", x * routed * inner, False)
    elif m.family in _PYTHON_GELU_FAMILIES:  # 0.5x, tanh(...) and 1 + tanh(...) as well
        t.add("mlp.gelu_python_terms", 3 * x * routed * inner, False)
    if grouped:
        t.add("mlp.down_input", x * routed * inner, False)
    else:
        add_linear_input(t, "mlp.down_input", (pre + "down_proj",), inner, routed,
                         replicated=False)  # fmt: skip
    if m.is_moe:
        t.add("mlp.expert_output", x * routed * m.hidden_size, True)
    if m.is_moe and m.shared_expert_intermediate_size:
        add_shared_expert(t)
    if cfg.dropout:
        t.add("mlp.residual_dropout_mask", d.mask_act * n * m.hidden_size, True)
    for i in range(max(m.norms_per_layer - 2, 0)):  # Gemma 2: norms after attention and MLP
        add_norm(t, f"post_norm{i + 1}", n)


def add_shared_expert(t: Tally) -> None:
    """The always-active shared expert of a MoE layer (DeepSeek shared_experts, Qwen2-MoE
    shared_expert): a gated MLP over every token, reading the same norm output as the router,
    and Qwen2-MoE's sigmoid gate over it."""
    cfg, m, e, n = t.cfg, t.cfg.model, _e(t.cfg), t.tokens
    inner = ceil(m.shared_expert_intermediate_size / cfg.tensor_parallel)
    add_linear_input(t, "mlp.shared.input", ("shared_gate_proj", "shared_up_proj"),
                     m.hidden_size, n, replicated=True, kept_anyway=True)  # fmt: skip
    for name in ("act_input", "act_output", "up_output"):
        t.add(f"mlp.shared.{name}", e * n * inner, False)
    add_linear_input(t, "mlp.shared.down_input", ("shared_down_proj",), inner, n,
                     replicated=False)  # fmt: skip
    if m.shared_expert_gate:  # its 1-wide logit and sigmoid, and the gated output
        t.add("mlp.shared.gate", 2 * c.FP32 * n + e * n * m.hidden_size, True)


def backward_buffers(cfg: ActivationConfig, tensors: dict[str, int]) -> int:
    """Gradient buffers a layer's backward pass adds on top of the layer's saved tensors, at its
    largest point, the MLP: the gradient of the down projection's input and of the MLP's two
    halves (gated; one for a plain MLP) alive together, while the down projection's saved input
    is already freed, plus the incoming gradient of the residual stream. A LoRA adapter in fp32
    on the down projection (PEFT under autocast) adds its input's gradient in fp32 before it is
    cast and summed with the base's. Measured op by op on the CPU (benchmarks/memory_calibration
    cases llama-v512, whose peak is a rebuilt layer)."""
    m, d = cfg.model, cfg.dtypes
    tokens = cfg.seq_len * cfg.micro_batch
    routed = tokens * (m.experts_per_token if m.is_moe else 1)
    inner = ceil(m.intermediate_size / cfg.tensor_parallel)
    width = d.experts if m.is_moe else d.act
    fused = cfg.fused_lora and cfg.targets and m.gated_mlp and not m.is_moe
    # unsloth's LoRA_MLP.backward: the down projection's input gradient is one new tensor; the
    # SwiGLU backward overwrites e and g in place and dX is written into X (fast_lora.py)
    mlp = (1 if fused else 3 if m.gated_mlp else 2) * width * routed * inner
    if cfg.precision in c.MIXED_PRECISIONS and _adapted(cfg, (cfg.mlp_prefix + "down_proj",)):
        mlp += 0 if fused else c.FP32 * routed * inner  # an fp32 adapter's input gradient
    freed = tensors.get("mlp.down_input", 0)
    t = Tally(cfg, tokens)
    t.add("stream_gradient", d.stream * tokens * m.hidden_size, True)
    return mlp - freed + sum(t.items.values())


def layer_tally(cfg: ActivationConfig, cross_attention: bool = False) -> Tally:
    """Every tensor one layer keeps on one GPU without recomputation, and which of them a 4-bit
    layer holds on its graph node."""
    t = Tally(cfg, cfg.seq_len * cfg.micro_batch)
    add_attention(t)
    if cross_attention:
        add_attention(t, "cross_attention")
    add_mlp(t)
    if cfg.fused_lora and cfg.targets and cfg.model.gated_mlp and not cfg.model.is_moe:
        fuse_lora(t)
    return t


def fuse_lora(t: Tally) -> None:
    """What unsloth's fused LoRA kernels save instead of PEFT's layers (kernels/fast_lora.py
    @0050c73e): LoRA_QKV keeps only its input X, LoRA_W (o_proj) its input, LoRA_MLP its input
    X and the gate and up outputs e and g (the SwiGLU product and the down projection's input
    are rebuilt in the backward kernel). The adapters' A and B are the parameters themselves,
    cast inside the matmul: no rank-r intermediates, no autocast copies, no per-adapter input
    copies."""
    cfg, n, h = t.cfg, t.tokens, t.cfg.model.hidden_size
    e = _e(cfg)
    for name in [k for k in t.items if ".lora_" in k]:
        del t.items[name]
    for name in ("mlp.act_output", "mlp.down_input"):
        t.items.pop(name, None)
    for name in ("attention.qkv_input", "mlp.input"):
        if name not in t.items:
            t.add(name, e * n * h, True)


def layer_tensors(cfg: ActivationConfig, cross_attention: bool = False) -> dict[str, int]:
    """Bytes each tensor of one layer keeps on one GPU, without recomputation."""
    return layer_tally(cfg, cross_attention).items
