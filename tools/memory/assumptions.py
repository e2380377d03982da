"""The plain sentences an estimate returns: every default and modelling choice used for a call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.memory import constants as c
from tools.memory.activations import LOGIT_PEAK_BYTES
from tools.memory.inventory import total_params
from tools.memory.model_states import ModelStates, adapter_bytes
from tools.units import GB, format_gib

if TYPE_CHECKING:
    from tools.estimator import EstimateInput
    from tools.memory.inventory import PhysicalLinear


def _size(n_bytes: int) -> str:
    return f"{format_gib(n_bytes, 2)} ({n_bytes / GB:.2f} GB)"


def describe(
    inp: EstimateInput, states: ModelStates, targets: tuple[PhysicalLinear, ...]
) -> list[str]:
    """All assumptions for one call, in reading order."""
    return [
        *_model(inp),
        *_method(inp, states, targets),
        _precision(inp),
        *_optimizer(inp),
        *_sharding(inp, states),
        *_activations(inp),
        _overhead(inp),
        "Sizes are integer bytes; GiB = 2^30 bytes, GB = 10^9 bytes.",
    ]


def _model(inp: EstimateInput) -> list[str]:
    m = inp.model
    out = [f"Model {m.name} ({m.id}): {total_params(m):,} parameters; dimensions from {m.source}."]
    out += [f"Model: {a}." for a in m.assumptions]
    if inp.seq_len > m.max_position_embeddings:
        out.append(
            f"The sequence length {inp.seq_len} exceeds the model's context length "
            f"{m.max_position_embeddings}."
        )
    return out


def _method(
    inp: EstimateInput, states: ModelStates, targets: tuple[PhysicalLinear, ...]
) -> list[str]:
    if inp.method in ("pretrain", "full"):
        return [f"Method {inp.method}: all {states.total_params:,} parameters are trainable."]
    names = ", ".join(t.name for t in targets)
    base = "fp32" if inp.precision == "fp32" else "16-bit"
    dtype = "bf16" if adapter_bytes(inp.precision) == c.BF16 else "fp32"
    out = [
        f"LoRA rank {inp.lora_rank}, alpha {inp.effective_lora_alpha:g} (alpha does not change "
        f"memory), dropout {inp.lora_dropout:g}, on {names}: {states.trainable_params:,} "
        "trainable parameters, r x (d_in + d_out) per adapted matrix and instance.",
        f"Adapters are kept in {dtype}"
        + (
            " (PEFT upcasts adapters of a 16-bit model to fp32), so their gradients and "
            "optimizer state are fp32 with no separate master copy."
            if dtype == "fp32"
            else "."
        )
        + " The base model is frozen: no gradients or optimizer state for it.",
    ]
    if inp.method == "lora":
        out[-1] += f" Frozen weights are stored in {base}."
        return out
    bits = (
        "8-bit absmax plus one fp32 constant per 256 blocks (0.127 bits per parameter)"
        if inp.qlora_double_quant
        else "an fp32 absmax (0.5 bits per parameter)"
    )
    out.append(
        "QLoRA: every linear layer of the transformer blocks is stored as 4-bit NF4 with one "
        f"absmax per 64 weights, {bits} (Dettmers et al. 2023, §3); embeddings, lm_head and "
        "norms stay 16-bit (PEFT's prepare_model_for_kbit_training would upcast them to fp32)."
    )
    out.append(
        "The bitsandbytes 4-bit matmul dequantizes one weight at a time to 16-bit: "
        f"{_size(states.dequant_buffer)} for the largest, counted in weights."
    )
    return out


def _precision(inp: EstimateInput) -> str:
    if inp.precision == "fp32":
        return "fp32: 4-byte weights, gradients, optimizer state and activations."
    if inp.precision == "bf16":
        return (
            "Pure bf16: weights, gradients, optimizer state and activations in 16-bit; "
            "no fp32 master copy."
        )
    return (
        f"Precision {inp.precision} as in the ZeRO paper: 16-bit working weights and gradients "
        "(2 + 2 bytes per parameter), an fp32 master copy counted in the optimizer state, 16-bit "
        "activations. PyTorch autocast over fp32 weights instead keeps 4-byte weights and "
        "gradients and no separate master: the same 16 bytes per parameter with Adam."
    )


def _optimizer(inp: EstimateInput) -> list[str]:
    full = inp.method in ("pretrain", "full")
    state = "2-byte bf16" if inp.precision == "bf16" else "4-byte fp32"
    master = (
        " plus the 4-byte fp32 master copy" if full and inp.precision in c.MIXED_PRECISIONS else ""
    )
    text = {
        "adamw": f"AdamW: two {state} states (m, v) per trainable parameter{master}"
        + (" (ZeRO's K = 12)." if master else "."),
        "adamw-8bit": "The bitsandbytes 8-bit AdamW: two uint8 states plus one fp32 absmax per 256 "
        f"values (2.03 bytes per parameter){master}; tensors under 4096 elements keep 32-bit "
        "state.",
        "adafactor": "Adafactor (Hugging Face defaults, beta1=None): no first moment; an fp32 "
        f"second moment factored into rows + columns for each matrix, full for vectors{master}.",
        "sgd": f"SGD without momentum keeps no state{master}.",
        "sgd-momentum": f"SGD with momentum: one {state} momentum buffer per parameter{master}.",
        "lion": f"Lion: one {state} momentum buffer per parameter{master}.",
    }
    if inp.optimizer == "paged-adamw-8bit":
        return [
            text["adamw-8bit"].replace("bitsandbytes", "bitsandbytes paged"),
            "Paged optimizer state lives in CUDA unified memory and moves to CPU RAM under "
            "memory pressure; it is counted here as resident on the GPU (the worst case).",
        ]
    out = [text[inp.optimizer]]
    if inp.optimizer == "adamw":
        out.append(
            "A fused AdamW step is assumed (DeepSpeed, or torch fused=True); PyTorch's "
            "foreach AdamW adds temporaries the size of one state at the step."
        )
    return out


def _sharding(inp: EstimateInput, states: ModelStates) -> list[str]:
    nd, stage, out = inp.num_gpus, inp.zero_stage, []
    if stage == 0 and nd > 1:
        out.append(
            f"Plain data parallelism over {nd} GPUs: each holds all model states; DDP's "
            f"gradient buckets keep a second copy of the gradients "
            f"({_size(states.comm_buffers)}, in overhead; PyTorch's default "
            "gradient_as_bucket_view=False)."
        )
    elif stage > 0:
        parts = ["optimizer state", "gradients", "weights"][:stage]
        split = f"split {nd} ways" if nd > 1 else "not split (1 GPU)"
        out.append(
            f"ZeRO stage {stage} (Rajbhandari et al. 2019, Table 1): {', '.join(parts)} {split}."
        )
        if inp.precision in c.MIXED_PRECISIONS and inp.method in ("pretrain", "full"):
            out.append(
                "DeepSpeed's implementation also keeps an fp32 gradient partition "
                "(4 bytes per parameter / GPUs), which this paper accounting omits."
            )
    if states.gathered_weights:
        unit = (
            "one transformer block, plus the next one prefetched (FSDP)"
            if inp.sharding == "fsdp"
            else "the largest single module (DeepSpeed)"
        )
        out.append(
            f"ZeRO-3 holds {unit} unsharded while computing: "
            f"{_size(states.gathered_weights + states.gathered_gradients)} of weights "
            "and gradients, counted in those parts."
        )
    if inp.offload_optimizer:
        grads = " The GPU keeps no gradient partition." if stage >= 2 else ""
        out.append(
            f"Optimizer state and an fp32 gradient partition are offloaded to CPU RAM: "
            f"{_size(states.cpu_offload)} per GPU process.{grads}"
        )
    if inp.tensor_parallel > 1:
        sp = " with sequence parallelism" if inp.sequence_parallel else ""
        out.append(
            f"Tensor parallelism {inp.tensor_parallel}{sp}: linear layers and "
            "(vocabulary-parallel) embeddings are split, norms replicated; activations "
            "follow Korthikanti et al. 2022's tensor-parallel forms."
        )
    if nd * inp.tensor_parallel > 1:
        out.append("NCCL's own communication buffers are not counted.")
    return out


def _activations(inp: EstimateInput) -> list[str]:
    m = inp.model
    e = c.activation_bytes(inp.precision)
    out = [
        f"Activations for {inp.micro_batch_size} x {inp.seq_len} tokens per GPU, {e}-byte "
        "elements, counted tensor by tensor (Korthikanti et al. 2022), checked against the "
        "tensors PyTorch saves for Hugging Face models."
    ]
    if inp.attention == "sdpa":
        out.append(
            f"Fused attention (SDPA/FlashAttention) keeps Q, K and V ({m.num_kv_heads} "
            "KV heads), its output and an fp32 log-sum-exp; no s x s tensors. A padded "
            "batch can make PyTorch fall back to a kernel that stores them."
        )
    else:
        soft = "16-bit" if m.family in ("gpt2", "bert") else "fp32"
        out.append(
            f"Eager attention keeps the s x s softmax output ({soft}) and the 16-bit "
            f"probabilities per head; K and V are expanded to all {m.num_heads} heads."
        )
    out.append(
        {
            "none": "No recomputation: every layer keeps all its tensors.",
            "selective": "Selective recomputation (Korthikanti et al. 2022): the attention core is "
            "recomputed"
            + (
                ", which fused attention already does."
                if inp.attention == "sdpa"
                else "; its s x s tensors are not kept."
            ),
            "full": "Full recomputation: each layer keeps only its input, and one layer's full set "
            "is rebuilt during the backward pass.",
        }[inp.gradient_checkpointing]
    )
    drop = (
        "on (1-byte masks for attention probabilities and residuals)"
        if inp.effective_dropout
        else "off (modern configs set it to 0)"
    )
    out.append(f"Dropout {drop}.")
    if m.norm == "rmsnorm":
        out.append(
            "RMSNorm as in Hugging Face: keeps an fp32 copy of its input and the fp32 "
            "rsqrt, plus the normalized tensor when its weight is trainable."
        )
    if inp.method in ("lora", "qlora"):
        out.append(
            "Frozen linear layers keep no input. Under mixed precision PEFT casts each "
            "adapter's input, so every adapted module keeps its own 16-bit copy; each "
            "also keeps its rank-r output."
        )
    out.append(
        f"Logits and loss: {m.vocab_size} logits per token at {LOGIT_PEAK_BYTES} bytes "
        "each at the peak (fp32 log-softmax output plus its gradient in and out); fused "
        "or chunked cross-entropy kernels avoid most of this."
    )
    if m.is_moe:
        out.append(
            f"Mixture of experts: each token goes to {m.experts_per_token} of "
            f"{m.num_experts} experts; routing is taken as balanced."
        )
    if m.num_decoder_layers:
        out.append(
            "Encoder-decoder: source and target both take seq_len tokens; cross-attention "
            "is counted like self-attention."
        )
    out.append(
        "Gradients are counted as resident alongside activations (true with gradient "
        "accumulation; a single-step loop that frees them may peak lower)."
    )
    return out


def _overhead(inp: EstimateInput) -> str:
    default = " (default)" if "cuda_context_bytes" not in inp.model_fields_set else ""
    frag = " (default)" if "fragmentation" not in inp.model_fields_set else ""
    return (
        f"Overhead: {_size(inp.cuda_context_bytes)} for the CUDA context, kernels and "
        f"workspaces{default}, plus {inp.fragmentation:.0%} of allocated bytes for allocator "
        f"fragmentation{frag}."
    )
