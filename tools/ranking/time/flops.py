"""Training FLOPs per token, split by the kind of kernel that runs them.

Units: FLOPs (floating-point operations, not per second) per trained token; a multiply-add is 2.

Per token of a decoder with L layers, hidden size h, query width q = heads x head_dim, vocabulary
V, sequence length s (Kaplan et al. 2020, "Scaling Laws", section 2.1; Narayanan et al. 2021,
"Efficient Large-Scale Language Model Training on GPU Clusters", appendix; the attention term is
the 12 L q s of torchtitan's and llm-foundry's MFU counts, which do not halve it):
- the block linear layers: 2 x their (active) parameters per forward;
- the LM head: 2 V h per forward (tied or not; the input embedding is a lookup, no FLOPs);
- attention scores and values: Q K^T and A V, 2 x 2 s q per layer per forward, halved for causal
  masks when the kernel skips the masked half (FlashAttention and PyTorch SDPA's fused kernels
  with `is_causal`: FlashAttention-2 paper, Dao 2023, section 3.1.1 "causal masking"); an eager
  kernel computes the whole s x s product and masks it afterwards.
The backward pass costs 2 forwards for weights that train (input and weight gradients) and 1 for
frozen weights (input gradients only: LoRA's base), 2 for attention (no weights).
Recomputation adds forwards (Chen et al. 2016; Korthikanti et al. 2022, "Reducing Activation
Recomputation in Large Transformer Models"): full checkpointing reruns every layer's forward (not
the LM head, which Hugging Face, torchtitan and Megatron keep outside the checkpointed blocks);
selective checkpointing reruns only the attention core, as the estimator's activations assume.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.architectures.architecture import ModelArch
from tools.enums import Attention, Checkpointing, Method

FULL_METHODS = ("pretrain", "full")
FORWARD = 1.0
BACKWARD_TRAINED = 2.0  # input + weight gradients
BACKWARD_FROZEN = 1.0  # input gradients only
CAUSAL_SKIPPED = 0.5  # share of the s x s product a causal fused kernel computes
# A fused attention backward (FlashAttention) recomputes the scores QK^T from Q and K instead of
# reading a saved s x s matrix: 2.5 forward passes' worth of FLOPs against the 2 the model counts
# (Dao 2023, FlashAttention-2, section 3.1.2; the convention of its benchmark_attn.py, whose
# measured rates `ThroughputAssumptions.attention_efficiency` are).
FUSED_ATTENTION_BACKWARD = 2.5


@dataclass(frozen=True, slots=True)
class TokenFlops:
    """FLOPs per trained token by kernel kind, recomputation included.

    `block_linear`: the transformer blocks' matmuls (the ones FP8 recipes run in FP8);
    `head`: the LM head matmul (kept in 16-bit by torchao's and Transformer Engine's recipes);
    `adapters`: LoRA's A and B matmuls; `attention`: the fused attention kernels;
    `recompute_matmul` and `recompute_attention`: how much of the block/adapter matmuls and of
    the attention is recomputation (already included in them).
    """

    block_linear: float
    head: float
    adapters: float
    attention: float
    recompute_matmul: float
    recompute_attention: float
    attention_backward_extra: float = 0.0  # fused kernels' QK^T recomputed inside backward

    @property
    def recompute(self) -> float:
        """Recomputed FLOPs per token."""
        return self.recompute_matmul + self.recompute_attention

    @property
    def total(self) -> float:
        """Executed FLOPs per token, recomputation included."""
        return self.block_linear + self.head + self.adapters + self.attention

    @property
    def model(self) -> float:
        """Model FLOPs per token: the work a step needs, without recomputation (what MFU counts)."""
        return self.total - self.recompute


def block_linear_params(model: ModelArch) -> int:
    """Parameters of the linear layers inside the blocks that one token uses (MoE: the active
    experts and the router); no embeddings, norms or LM head."""
    modules = model.linear_modules()
    total = sum(m.num_params() for m in modules)
    if model.is_moe:
        idle = model.num_experts - model.experts_per_token
        total -= idle * (model.num_layers + model.num_decoder_layers) * model.expert_params()
    return total


def attention_forward_flops(
    model: ModelArch, seq_len: int, attention: Attention, causal: bool
) -> float:
    """Forward FLOPs of Q K^T and A V per token over all attention blocks: 4 s q each, halved
    when a fused kernel skips a causal mask's masked half."""
    instances = model.num_layers + 2 * model.num_decoder_layers
    share = CAUSAL_SKIPPED if causal and attention == "sdpa" else 1.0
    return 4.0 * seq_len * model.q_dim * instances * share


def token_flops(
    model: ModelArch,
    method: Method,
    trainable_params: float,
    seq_len: int,
    checkpointing: Checkpointing,
    attention: Attention,
) -> TokenFlops:
    """Executed FLOPs per token (see the module docstring). `trainable_params` are the LoRA
    adapters for lora/qlora and ignored otherwise; encoders (BERT) are not causal."""
    full = method in FULL_METHODS
    linear_fwd = 2.0 * block_linear_params(model)
    head_fwd = 2.0 * model.vocab_size * model.hidden_size
    adapter_fwd = 0.0 if full else 2.0 * trainable_params
    attn_fwd = attention_forward_flops(model, seq_len, attention, model.arch == "decoder")
    backward = BACKWARD_TRAINED if full else BACKWARD_FROZEN
    re_linear = re_attn = 0.0
    if checkpointing == "full":
        re_linear, re_attn = FORWARD, FORWARD
    elif checkpointing == "selective":
        re_attn = FORWARD
    passes_attn = FORWARD + BACKWARD_TRAINED + re_attn
    passes_adapters = FORWARD + BACKWARD_TRAINED + re_linear
    return TokenFlops(
        block_linear=linear_fwd * (FORWARD + backward + re_linear),
        head=head_fwd * (FORWARD + backward),
        adapters=adapter_fwd * passes_adapters,
        attention=attn_fwd * passes_attn,
        recompute_matmul=(linear_fwd + adapter_fwd) * re_linear,
        recompute_attention=attn_fwd * re_attn,
        attention_backward_extra=attn_fwd * (FUSED_ATTENTION_BACKWARD - BACKWARD_TRAINED)
        if attention == "sdpa"
        else 0.0,
    )
