"""Training-stack profiles: what each stack allocates, as defaults for the mechanism fields.

A job names its stack (`stack`, default `hf`); each memory mechanism the job leaves open takes
the stack's value here, and the estimate states every resolved value with its reason
(`Mechanisms.describe`). A mechanism the job sets itself wins over the profile, so a user can
describe any mix (litgpt with an fp32 loss, the Hugging Face stack with activation offload).
Every reason names the file of the stack's code it was read from.

The mechanisms (the bytes each one changes are counted in tools/memory/activations.py,
stacks/loss.py, stacks/checkpointing.py and peak.py):
- `loss`: how the cross-entropy turns logits into a loss (bytes kept per logit: stacks/loss.py);
- `selective_checkpointing`: what "selective" recomputation keeps (attention core or op level);
- `activation_offload`: saved activations and checkpoints moved to CPU RAM during the step;
- `optimizer_in_backward`: each parameter stepped, and its gradient freed, inside backward;
- `frozen_base_dtype`: storage of a frozen base's non-quantized weights (16-bit or fp32);
- `qlora_keeps_input`: each 4-bit layer saves its 16-bit input for backward, as an attribute of
  its autograd node: it lives as long as the graph, which the training loop may hold past the
  backward pass (peak.py);
- `qlora_lm_head`: the lm_head is 4-bit too, dequantized (via fp16, as Lightning quantizes)
  for each of its matmuls;
- `qlora_double_quant`: NF4 block constants quantized again (0.127 instead of 0.5 bits);
- `repeat_kv`: K and V copied to every query head before attention (saved at that width);
- `fused_rmsnorm`: a fused RMSNorm kernel (16-bit input and fp32 rstd kept, no fp32 copy);
- `compile`: torch.compile on. Where the stack compiles the loss (`compiles_loss`), inductor's
  min-cut partitioner saves the 16-bit logits and recomputes the fp32 upcast and softmax in the
  backward pass instead of keeping the fp32 log-softmax (stacks/loss.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from tools.enums import BaseDtype, Loss, SelectiveCheckpointing, Stack

__all__ = [
    "MECHANISMS",
    "PROFILES",
    "Mechanisms",
    "StackProfile",
    "mechanisms_for",
    "resolve_mechanisms",
]

MECHANISMS: Final = (
    "loss", "selective_checkpointing", "activation_offload", "optimizer_in_backward",
    "frozen_base_dtype", "qlora_keeps_input", "qlora_lm_head", "qlora_double_quant", "repeat_kv",
    "fused_rmsnorm", "compile",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class StackProfile:
    """One stack's value for every mechanism, each with the reason (and source) behind it."""

    name: Stack
    title: str
    values: Mapping[str, tuple[Any, str]]  # mechanism -> (value, reason with its source file)
    compiles_loss: bool  # whether its torch.compile switch compiles the loss


_COMPILE_OFF = (False, "torch.compile off unless asked")


def _profile(
    name: Stack, title: str, compiles_loss: bool = False, **values: tuple[Any, str]
) -> StackProfile:
    values = {"compile": _COMPILE_OFF, **values}
    missing = set(MECHANISMS) - set(values)
    assert not missing, f"profile {name} lacks {sorted(missing)}"
    return StackProfile(name, title, values, compiles_loss)


_NO_OFFLOAD = (False, "saved activations and checkpoints stay on the GPU")
_STEP_AFTER = (False, "the optimizer steps after the backward pass")
_GROUPED_KV = (False, "attention reads the grouped K/V heads")
_PLAIN_NORM = (False, "RMSNorm in plain PyTorch: an fp32 copy of its input and the rsqrt kept")
_NO_QLORA = (False, "no 4-bit path of its own")
_HEAD_16BIT = (
    False,
    "transformers keeps the output layer out of the 4-bit conversion "
    "(integrations/bitsandbytes.py get_keys_to_not_convert)",
)
_NF4_DQ = (True, "no 4-bit path of its own; NF4 with double quantization if asked")

PROFILES: Final[dict[Stack, StackProfile]] = {
    "hf": _profile(
        "hf",
        "the Hugging Face stack (Trainer, TRL, PEFT, Accelerate, DeepSpeed integration)",
        compiles_loss=True,  # Trainer torch_compile compiles the model, whose forward has the loss
        loss=("standard", "transformers >= 4.46 upcasts the 16-bit logits to fp32 inside the "
              "loss and keeps the fp32 log-softmax (loss/loss_utils.py ForCausalLMLoss); the "
              "Trainer drops the logits before backward (trainer.py compute_loss)"),
        selective_checkpointing=("attention", "transformers has no op-level policy: selective "
                                 "is Korthikanti et al.'s attention-core recomputation"),
        activation_offload=(False, "gradient checkpointing keeps each layer's input on the GPU "
                            "(modeling_utils.py gradient_checkpointing_enable)"),
        optimizer_in_backward=(False, "the Trainer steps after the backward pass (trainer.py)"),
        frozen_base_dtype=("16-bit", "fine-tuning scripts load the base with torch_dtype="
                           "bfloat16 (TRL's sft scripts); PEFT's fp32 k-bit preparation is off"),
        qlora_keeps_input=(False, "bitsandbytes >= 0.43.2 MatMul4Bit saves only the 4-bit "
                           "weight for backward (bitsandbytes/autograd/_functions.py)"),
        qlora_lm_head=_HEAD_16BIT,
        qlora_double_quant=(True, "the QLoRA recipe, bnb_4bit_use_double_quant=True "
                            "(artidoro/qlora qlora.py)"),
        repeat_kv=(False, "SDPA gets grouped K/V when no padding mask is needed and "
                   "FlashAttention-2 reads KV heads (integrations/sdpa_attention.py)"),
        fused_rmsnorm=(False, "LlamaRMSNorm is plain PyTorch: an fp32 copy of its input and the "
                       "rsqrt are kept"),
    ),
    "litgpt": _profile(
        "litgpt",
        "litgpt (Lightning Fabric, bf16-true)",
        loss=("chunked-16bit", "finetune/lora.py runs the model with lm_head_chunk_size=128 and "
              "litgpt/utils.py chunked_cross_entropy on the 16-bit chunks, no fp32 upcast; the "
              "loop keeps the chunks until backward"),
        selective_checkpointing=("attention", "litgpt has no selective recomputation"),
        activation_offload=_NO_OFFLOAD,
        optimizer_in_backward=(False, "fit() steps after fabric.backward (finetune/lora.py)"),
        frozen_base_dtype=("16-bit", "precision bf16-true: Fabric casts the whole model to bf16"),
        qlora_keeps_input=(True, "quantize bnb.nf4 goes through bitsandbytes Linear4bit; litgpt "
                           "0.3-0.4 pins bitsandbytes==0.42.0 (its pyproject.toml), whose "
                           "autograd/_functions.py MatMul4Bit saves the layer's input for "
                           "backward (until 0.43.2)"),
        qlora_lm_head=(True, "Fabric's BitsandbytesPrecision swaps torch.nn.Linear for its NF4 "
                       "class while the model is built, lm_head included, and quantizes from "
                       "an fp16 copy (lightning/fabric/plugins/precision/bitsandbytes.py)"),
        qlora_double_quant=(False, "the config hub's quantize: bnb.nf4 (bnb.nf4-dq is the "
                            "double-quantized one; litgpt/utils.py)"),
        repeat_kv=(True, "litgpt/model.py CausalSelfAttention expands K and V to every query "
                   "head before scaled_dot_product_attention ('flash attention requires it')"),
        fused_rmsnorm=(False, "litgpt/model.py RMSNorm upcasts its input to fp32"),
    ),
    "torchtune": _profile(
        "torchtune",
        "torchtune recipes (pure bf16)",
        compiles_loss=True,  # compile: True also runs training.compile_loss on the loss module
        loss=("chunked", "configs set loss: CEWithChunkedOutputLoss (modules/loss/"
              "ce_chunked_output_loss.py): 8 output chunks, each upcast to fp32 in the loss; "
              "_loss_step deletes the logits before backward"),
        selective_checkpointing=("attention", "torchtune checkpoints whole layers only"),
        activation_offload=(False, "enable_activation_offloading is False by default; on, "
                            "training/_activation_offloading.py moves every saved tensor over "
                            "1 KiB to pinned CPU memory"),
        optimizer_in_backward=(False, "optimizer_in_bwd is False by default; on, each parameter "
                               "steps in a post-accumulate-grad hook and frees its gradient "
                               "(training/memory.py register_optim_in_bwd_hooks)"),
        frozen_base_dtype=("16-bit", "dtype: bf16, the whole model in bf16"),
        qlora_keeps_input=(False, "torchao's linear_nf4 keeps only the NF4 weight "
                           "(torchao/dtypes/nf4tensor.py)"),
        qlora_lm_head=(False, "the QLoRA builders keep the output projection a 16-bit nn.Linear "
                       "(models/llama3/_component_builders.py; torchtune issue #1000)"),
        qlora_double_quant=(True, "torchao NF4 quantizes its block scalers to int8 in groups "
                            "of 256, the bits of double quantization"),
        repeat_kv=(True, "modules/attention.py MultiHeadAttention expands K and V to the query "
                   "heads before attention"),
        fused_rmsnorm=(False, "modules/rms_norm.py upcasts its input to fp32"),
    ),
    "torchtitan": _profile(
        "torchtitan",
        "torchtitan (FSDP2 mixed precision, pretraining)",
        loss=("standard", "train.py: cross_entropy(pred.flatten(0, 1).float(), labels), then "
              "del pred before loss.backward()"),
        selective_checkpointing=("op", "parallelisms/parallelize_llama.py op-level SAC saves the "
                                 "outputs of mm, SDPA and reduce-scatter, except every second "
                                 "mm"),
        activation_offload=_NO_OFFLOAD,
        optimizer_in_backward=_STEP_AFTER,
        frozen_base_dtype=("16-bit", "pretraining: no frozen base"),
        qlora_keeps_input=_NO_QLORA,
        qlora_lm_head=_NO_QLORA,
        qlora_double_quant=_NF4_DQ,
        repeat_kv=(True, "models/llama/model.py Attention repeats K and V (repeat_kv) before "
                   "SDPA"),
        fused_rmsnorm=(False, "norm_type rmsnorm by default (fused_rmsnorm is an option)"),
    ),
    "unsloth": _profile(
        "unsloth",
        "unsloth (Triton kernels over transformers)",
        loss=("fused", "kernels/cross_entropy_loss.py Fast_CrossEntropyLoss keeps the 16-bit "
              "logits and one fp32 logsumexp per row, and writes the gradient into the logits"),
        selective_checkpointing=("attention", "unsloth checkpoints whole layers"),
        activation_offload=(True, "use_gradient_checkpointing='unsloth', its recommended "
                            "setting, offloads every checkpointed hidden state to CPU RAM "
                            "(unsloth_zoo/gradient_checkpointing.py)"),
        optimizer_in_backward=_STEP_AFTER,
        frozen_base_dtype=("16-bit", "FastLanguageModel keeps embeddings and lm_head 16-bit"),
        qlora_keeps_input=(False, "current bitsandbytes, dequantized inside unsloth's own "
                           "LoRA kernels (kernels/fast_lora.py)"),
        qlora_lm_head=_HEAD_16BIT,
        qlora_double_quant=(True, "its -bnb-4bit checkpoints set bnb_4bit_use_double_quant"),
        repeat_kv=(False, "FlashAttention reads the KV heads (models/llama.py)"),
        fused_rmsnorm=(True, "kernels/rms_layernorm.py: a Triton kernel keeping its input and "
                       "one fp32 rstd per row"),
    ),
    "megatron": _profile(
        "megatron",
        "Megatron-LM / Megatron Core",
        loss=("fp32-inplace", "core/tensor_parallel/cross_entropy.py: one fp32 copy of the "
              "logits becomes the softmax in place and then the gradient"),
        selective_checkpointing=("attention", "--recompute-granularity selective recomputes "
                                 "the core attention (Korthikanti et al. 2022)"),
        activation_offload=_NO_OFFLOAD,
        optimizer_in_backward=_STEP_AFTER,
        frozen_base_dtype=("16-bit", "--bf16 keeps the weights in bf16 (megatron/training)"),
        qlora_keeps_input=_NO_QLORA,
        qlora_lm_head=_NO_QLORA,
        qlora_double_quant=_NF4_DQ,
        repeat_kv=_GROUPED_KV,
        fused_rmsnorm=(True, "Transformer Engine's fused RMSNorm"),
    ),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Mechanisms:
    """The resolved mechanisms of one job: the job's own values, the rest from its stack."""

    stack: Stack
    loss: Loss
    selective_checkpointing: SelectiveCheckpointing
    activation_offload: bool
    optimizer_in_backward: bool
    frozen_base_dtype: BaseDtype
    qlora_keeps_input: bool
    qlora_lm_head: bool
    qlora_double_quant: bool
    repeat_kv: bool
    fused_rmsnorm: bool
    compile: bool
    given: frozenset[str]  # the mechanisms the job set itself

    @property
    def compiled_loss(self) -> bool:
        """The loss runs compiled: compile is on and the stack compiles its loss."""
        return self.compile and PROFILES[self.stack].compiles_loss

    def describe(self, names: tuple[str, ...] = MECHANISMS) -> list[str]:
        """One sentence per mechanism in `names`: its value, and whether the job gave it or
        the stack's profile supplied it (with the profile's reason)."""
        profile = PROFILES[self.stack]
        out = []
        for name in names:
            value = getattr(self, name)
            label = name.replace("_", " ")
            if name in self.given:
                out.append(f"Mechanism {label} = {value} (as given).")
            else:
                reason = profile.values[name][1]
                out.append(f"Mechanism {label} = {value} ({self.stack}: {reason}).")
        return out


def resolve_mechanisms(stack: Stack, given: Mapping[str, Any]) -> Mechanisms:
    """Every mechanism for `stack`: the job's values where not None, else the profile's."""
    profile = PROFILES[stack]
    chosen = {name: given.get(name) for name in MECHANISMS}
    set_by_job = frozenset(name for name, value in chosen.items() if value is not None)
    values = {
        name: value if value is not None else profile.values[name][0]
        for name, value in chosen.items()
    }
    return Mechanisms(stack=stack, given=set_by_job, **values)


@lru_cache(maxsize=256)
def mechanisms_for(stack: Stack, values: tuple[Any, ...]) -> Mechanisms:
    """`resolve_mechanisms` for the job's own values in `MECHANISMS` order (None: not given),
    remembered: one estimate reads its job's mechanisms several times, and a ranking estimates
    many plans of one job (the result is frozen)."""
    return resolve_mechanisms(stack, dict(zip(MECHANISMS, values, strict=True)))
