"""Training-stack profiles: what each stack allocates, as defaults for the mechanism fields.

A job names its stack (`stack`, default `hf`); each memory mechanism the job leaves open takes
the stack's value here, and the estimate states every resolved value with its reason
(`Mechanisms.describe`). A mechanism the job sets itself wins over the profile, so a user can
describe any mix (litgpt with an fp32 loss, the Hugging Face stack with activation offload).
Every reason names the file of the stack's code it was read from. A profile describes the
stack's current release; `older` lists the releases that differ, which a job picks with its
`stack_version` (e.g. litgpt 0.4, which pinned bitsandbytes 0.42). A value may depend on the
job (`When`): torchtune's full single-device recipes step the optimizer inside backward.

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
- `loop_keeps_output`: the training loop holds the model's output, its logits and through them
  the autograd graph, until the optimizer has stepped (`out = model(...); out.loss.backward();
  opt.step()`, as AnswerDotAI/fsdp_qlora train.py and transformers' *_no_trainer.py examples
  are written); a loop that drops it, as the Trainer does, frees the logits before backward;
- `compile`: torch.compile on. Where the stack compiles the loss (`compiles_loss`), inductor's
  min-cut partitioner saves the 16-bit logits and recomputes the fp32 upcast and softmax in the
  backward pass instead of keeping the fp32 log-softmax (stacks/loss.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

from tools.enums import Stack
from tools.memory.stacks.profile import (
    CURRENT,
    MECHANISMS,
    JobContext,
    Mechanisms,
    Release,
    StackProfile,
    When,
)

__all__ = [
    "CURRENT",
    "MECHANISMS",
    "PROFILES",
    "JobContext",
    "Mechanisms",
    "StackProfile",
    "mechanisms_for",
    "resolve_mechanisms",
    "stack_versions",
]

_COMPILE_OFF = (False, "torch.compile off unless asked")


def _profile(
    name: Stack,
    title: str,
    current: str,
    described: str,
    *,
    older: tuple[Release, ...] = (),
    compiles_loss: bool = False,
    fused_lora: bool = False,
    offload_stash: int = 5,
    **values: tuple[Any, str],
) -> StackProfile:
    values = {"compile": _COMPILE_OFF, **values}
    missing = set(MECHANISMS) - set(values)
    assert not missing, f"profile {name} lacks {sorted(missing)}"
    return StackProfile(name, title, values, current, described, compiles_loss, fused_lora,
                        offload_stash, older)  # fmt: skip


def _full_on_one_gpu(job: JobContext) -> bool:
    return job.method in ("pretrain", "full") and job.num_gpus == 1


def _lora_under_fsdp_mixed(job: JobContext) -> bool:
    mixed = job.precision in ("bf16-mixed", "fp16-mixed", "fp8")
    return job.method == "lora" and job.sharded_fsdp and mixed


_NO_OFFLOAD = (False, "saved activations and checkpoints stay on the GPU")
_STEP_AFTER = (False, "the optimizer steps after the backward pass")
_GROUPED_KV = (False, "attention reads the grouped K/V heads")
_NO_QLORA = (False, "no 4-bit path of its own")
_HEAD_16BIT = (
    False,
    "transformers keeps the output layer out of the 4-bit conversion "
    "(integrations/bitsandbytes.py get_keys_to_not_convert)",
)
_DROPS_OUTPUT = (False, "the loop keeps the loss, not the model's output")
_NF4_DQ = (True, "no 4-bit path of its own; NF4 with double quantization if asked")

PROFILES: Final[dict[Stack, StackProfile]] = {
    "hf": _profile(
        "hf",
        "the Hugging Face stack (Trainer, TRL, PEFT, Accelerate, DeepSpeed integration)",
        "4.46",
        "transformers 4.46 and later with TRL, PEFT and Accelerate (loss/loss_utils.py "
        "ForCausalLMLoss @0114da07; accelerate utils/fsdp_utils.py @00b1b181)",
        compiles_loss=True,  # Trainer torch_compile compiles the model, whose forward has the loss
        older=(
            Release("4.45", "transformers before 4.46 (October 2024), whose models cast the "
                    "logits to fp32 before any loss (modeling_llama.py of 4.40: "
                    "logits = logits.float())",
                    {"loss": ("older-hf", "transformers < 4.46: the model upcasts the logits "
                              "(logits.float()) and the loss takes a shifted copy "
                              "(modeling_llama.py)")},
                    upcasts_logits=True),
        ),
        loss=("standard", "transformers >= 4.46 upcasts the 16-bit logits to fp32 inside the "
              "loss and keeps the fp32 log-softmax (loss/loss_utils.py ForCausalLMLoss); the "
              "Trainer drops the logits before backward (trainer.py compute_loss)"),
        selective_checkpointing=("attention", "transformers has no op-level policy: selective "
                                 "is Korthikanti et al.'s attention-core recomputation"),
        activation_offload=(False, "gradient checkpointing keeps each layer's input on the GPU "
                            "(modeling_utils.py gradient_checkpointing_enable)"),
        optimizer_in_backward=(False, "the Trainer steps after the backward pass (trainer.py)"),
        frozen_base_dtype=(
            When("fp32", "16-bit", _lora_under_fsdp_mixed,
                 "for LoRA under FSDP with mixed precision"),
            "fine-tuning scripts load the base with torch_dtype=bfloat16 (TRL's sft scripts); "
            "under FSDP with mixed precision Accelerate casts the whole model, frozen base "
            "included, to fp32 before sharding (utils/fsdp_utils.py fsdp2_prepare_model: "
            "model.to(torch.float32)), as PEFT's FSDP example loads it (examples/sft/utils.py)",
        ),
        qlora_keeps_input=(False, "bitsandbytes >= 0.43.2 MatMul4Bit saves only the 4-bit "
                           "weight for backward (bitsandbytes/autograd/_functions.py)"),
        qlora_lm_head=_HEAD_16BIT,
        qlora_double_quant=(True, "the QLoRA recipe, bnb_4bit_use_double_quant=True "
                            "(artidoro/qlora qlora.py)"),
        repeat_kv=(False, "SDPA gets grouped K/V when no padding mask is needed and "
                   "FlashAttention-2 reads KV heads (integrations/sdpa_attention.py)"),
        fused_rmsnorm=(False, "LlamaRMSNorm is plain PyTorch: an fp32 copy of its input and the "
                       "rsqrt are kept"),
        loop_keeps_output=(False, "Trainer.compute_loss returns the loss and drops the model's "
                           "output before backward (trainer.py); a hand-written loop that keeps "
                           "`outputs` while it steps holds the logits: say so"),
    ),
    "litgpt": _profile(
        "litgpt",
        "litgpt (Lightning Fabric, bf16-true)",
        "0.5",
        "litgpt 0.5.11 (pyproject.toml @0073448a; litgpt/model.py @04205815)",
        older=(
            Release("0.4", "litgpt 0.3-0.4, which pinned bitsandbytes==0.42.0 (pyproject.toml)",
                    {"qlora_keeps_input": (True, "litgpt 0.3-0.4 pins bitsandbytes==0.42.0 "
                     "(pyproject.toml), whose autograd/_functions.py MatMul4Bit saves the "
                     "layer's input for backward (until 0.43.2)")}),
        ),
        loss=("chunked-16bit", "finetune/lora.py runs the model with lm_head_chunk_size=128 and "
              "litgpt/utils.py chunked_cross_entropy on the 16-bit chunks, no fp32 upcast; the "
              "loop keeps the chunks until backward"),
        selective_checkpointing=("attention", "litgpt has no selective recomputation"),
        activation_offload=_NO_OFFLOAD,
        optimizer_in_backward=(False, "fit() steps after fabric.backward (finetune/lora.py)"),
        frozen_base_dtype=("16-bit", "precision bf16-true: Fabric casts the whole model to bf16"),
        qlora_keeps_input=(False, "litgpt 0.5 requires bitsandbytes>=0.45.2,<0.48 on Linux "
                           "(pyproject.toml @0073448a), whose MatMul4Bit saves only the 4-bit "
                           "weight (bitsandbytes/autograd/_functions.py)"),
        qlora_lm_head=(True, "Fabric's BitsandbytesPrecision swaps torch.nn.Linear for its NF4 "
                       "class while the model is built, lm_head included, and quantizes from "
                       "an fp16 copy (lightning/fabric/plugins/precision/bitsandbytes.py)"),
        qlora_double_quant=(False, "the config hub's quantize: bnb.nf4 (bnb.nf4-dq is the "
                            "double-quantized one; litgpt/utils.py)"),
        repeat_kv=(True, "litgpt/model.py CausalSelfAttention expands K and V to every query "
                   "head after RoPE, before scaled_dot_product_attention ('flash attention "
                   "requires it')"),
        fused_rmsnorm=(False, "litgpt/model.py RMSNorm upcasts its input to fp32"),
        loop_keeps_output=(False, "the logits its loop keeps are counted with its chunked loss"),
    ),
    "torchtune": _profile(
        "torchtune",
        "torchtune recipes (pure bf16)",
        "2025",
        "torchtune's recipes since LinearCrossEntropyLoss became their loss (pull request "
        "2667, May 2025; recipes/configs/llama3_1/8B_full_single_device.yaml @02d70355, "
        "8B_lora_single_device.yaml @2943c61e); the package version is not readable there",
        older=(
            Release("2024", "torchtune's recipes with CEWithChunkedOutputLoss, before May 2025 "
                    "(recipes/configs/llama3_2/3B_full_single_device.yaml @03a19788)",
                    {"loss": ("chunked", "configs set loss: CEWithChunkedOutputLoss (modules/"
                              "loss/ce_chunked_output_loss.py): 8 output chunks, each upcast to "
                              "fp32 in the loss; _loss_step deletes the logits before backward")},
                    compiles_loss=True),  # compile: True also ran training.compile_loss
        ),
        loss=("chunked-linear", "configs set loss: LinearCrossEntropyLoss (modules/loss/"
              "cross_entropy_loss.py): the output projection and the loss over 8 chunks, each "
              "keeping its hidden slice and fp32 log-softmax; its compile strategy skips it"),
        selective_checkpointing=("attention", "torchtune checkpoints whole layers only"),
        activation_offload=(False, "enable_activation_offloading is False in the configs; on, "
                            "training/_activation_offloading.py moves every saved tensor over "
                            "1 KiB to pinned CPU memory"),
        optimizer_in_backward=(
            When(True, False, _full_on_one_gpu, "for full fine-tuning on one GPU"),
            "the full single-device configs set optimizer_in_bwd: True (recipes/configs/"
            "llama3_1/8B_full_single_device.yaml, llama3_2/3B_full_single_device.yaml, "
            "qwen2_5/7B_full_single_device.yaml), the LoRA and distributed ones leave it off; "
            "on, each parameter steps in a post-accumulate-grad hook and frees its gradient "
            "(training/memory.py register_optim_in_bwd_hooks)",
        ),
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
        loop_keeps_output=(False, "the recipes delete the logits before backward (_loss_step)"),
    ),
    "torchtitan": _profile(
        "torchtitan",
        "torchtitan (FSDP2 mixed precision, pretraining)",
        "2026",
        "torchtitan's configurable trainer of 2026 (components/loss.py @00a388d9, models/"
        "llama3/parallelize.py @01db32e9, config/configs.py @0014ac2c); no version string",
        compiles_loss=True,  # compile components default to ["model", "loss"]
        older=(
            Release("0.0.2", "torchtitan 0.0.2 and before (its December 2024 benchmarks, "
                    "benchmarks/llama3_h100_202412_torchtitan.md; torchao's float8/README.md "
                    "names 0.0.2): torch.compile wrapped each transformer block, not the loss "
                    "(parallelisms/parallelize_llama.py apply_compile)",
                    compiles_loss=False),
        ),
        loss=("standard", "components/loss.py cross_entropy_loss: cross_entropy(pred.float(), "
              "labels); the llama3 configs set no chunked loss"),
        selective_checkpointing=("op", "distributed/activation_checkpoint.py op-level SAC saves "
                                 "the outputs of wq, wv, w1 and w2, SDPA and reduce-scatter "
                                 "(models/llama3/parallelize.py _sac_save_list)"),
        activation_offload=_NO_OFFLOAD,
        optimizer_in_backward=_STEP_AFTER,
        frozen_base_dtype=("16-bit", "pretraining: no frozen base"),
        qlora_keeps_input=_NO_QLORA,
        qlora_lm_head=_NO_QLORA,
        qlora_double_quant=_NF4_DQ,
        repeat_kv=(True, "models/llama/model.py Attention repeats K and V (repeat_kv) before "
                   "SDPA"),
        fused_rmsnorm=(False, "norm_type rmsnorm by default (fused_rmsnorm is an option)"),
        loop_keeps_output=(False, "train.py deletes pred before loss.backward()"),
    ),
    "unsloth": _profile(
        "unsloth",
        "unsloth (Triton kernels over transformers)",
        "2026.1",
        "unsloth 2026.1.1 with unsloth-zoo's fused losses (unsloth/models/_utils.py @004d44eb, "
        "models/llama.py @00060afe, unsloth_zoo/fused_losses/cross_entropy_loss.py @002a0c99, "
        "unsloth_zoo/gradient_checkpointing.py @0373fcc5)",
        fused_lora=True,
        offload_stash=3,  # the last layer's input kept, plus two GPU staging buffers
        older=(
            Release("2024", "unsloth of 2024, whose Triton cross-entropy kept the logits "
                    "(unsloth/models/llama.py @9fbe0b6d, kernels/cross_entropy_loss.py)",
                    {"loss": ("fused", "kernels/cross_entropy_loss.py Fast_CrossEntropyLoss "
                              "keeps the 16-bit logits and one fp32 logsumexp per row, and "
                              "writes the gradient into the logits")}),
        ),
        loss=("forward-grad", "models/llama.py calls unsloth_fused_ce_loss unless "
              "UNSLOTH_RETURN_LOGITS=1: unsloth_zoo fused_losses/cross_entropy_loss.py computes "
              "the lm_head, the loss and the hidden states' gradient chunk by chunk in the "
              "forward pass"),
        selective_checkpointing=("attention", "unsloth checkpoints whole layers"),
        activation_offload=(True, "use_gradient_checkpointing='unsloth', from_pretrained's "
                            "default, copies each checkpointed layer input to pinned CPU "
                            "memory (unsloth_zoo/gradient_checkpointing.py), keeping the last "
                            "layer's input and two staging buffers on the GPU"),
        optimizer_in_backward=_STEP_AFTER,
        frozen_base_dtype=("16-bit", "FastLanguageModel keeps embeddings and lm_head 16-bit"),
        qlora_keeps_input=(False, "4-bit weights are dequantized inside unsloth's own LoRA "
                           "kernels (kernels/fast_lora.py matmul_lora)"),
        qlora_lm_head=_HEAD_16BIT,
        qlora_double_quant=(True, "its -bnb-4bit checkpoints set bnb_4bit_use_double_quant"),
        repeat_kv=(False, "FlashAttention and SDPA with enable_gqa read the KV heads "
                   "(utils/attention_dispatch.py)"),
        fused_rmsnorm=(True, "kernels/rms_layernorm.py: a Triton kernel keeping its input and "
                       "one fp32 rstd per row"),
        loop_keeps_output=(False, "its fused loss returns no logits; the Trainer drops the output"),
    ),
    "megatron": _profile(
        "megatron",
        "Megatron-LM / Megatron Core",
        "core",
        "Megatron Core as NVIDIA/Megatron-LM ships it (core/tensor_parallel/cross_entropy.py; "
        "docs on the distributed optimizer)",
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
        loop_keeps_output=_DROPS_OUTPUT,
    ),
}  # fmt: skip


def stack_versions(stack: Stack) -> tuple[str, ...]:
    """The releases a job's stack_version may name for `stack`, the current one first."""
    return PROFILES[stack].versions


def resolve_mechanisms(
    stack: Stack,
    given: Mapping[str, Any],
    version: str = CURRENT,
    job: JobContext | None = None,
) -> Mechanisms:
    """Every mechanism for `stack` at `version`: the job's values where not None, else the
    release's (a job-dependent one picked for `job`)."""
    profile = PROFILES[stack]
    release = profile.release(version)
    table = {**profile.values, **(release.values if release else {})}
    context = job or JobContext()
    chosen = {name: given.get(name) for name in MECHANISMS}
    set_by_job = frozenset(name for name, value in chosen.items() if value is not None)
    values: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    for name, value in chosen.items():
        default, reason = table[name]
        if isinstance(default, When):
            reason = f"{reason}; here {default.pick(context)} {default.condition}" + (
                "" if default.applies(context) else " does not apply"
            )
            default = default.pick(context)
        values[name] = value if value is not None else default
        reasons[name] = reason
    compiles = release.compiles_loss if release and release.compiles_loss is not None else None
    fused = release.fused_lora if release and release.fused_lora is not None else None
    return Mechanisms(
        stack=stack,
        version=release.version if release else profile.current,
        given=set_by_job,
        reasons=reasons,
        compiles_loss=profile.compiles_loss if compiles is None else compiles,
        fused_lora=profile.fused_lora if fused is None else fused,
        offload_stash=profile.offload_stash,
        upcasts_logits=bool(release and release.upcasts_logits),
        **values,
    )


@lru_cache(maxsize=256)
def mechanisms_for(
    stack: Stack, version: str, job: JobContext, values: tuple[Any, ...]
) -> Mechanisms:
    """`resolve_mechanisms` for the job's own values in `MECHANISMS` order (None: not given),
    remembered: one estimate reads its job's mechanisms several times, and a ranking estimates
    many plans of one job (the result is frozen)."""
    return resolve_mechanisms(stack, dict(zip(MECHANISMS, values, strict=True)), version, job)
