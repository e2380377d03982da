"""The closed vocabularies of the domain, each defined once; every interface derives from these.

Training: `Method`, `Precision`, `Optimizer`, `Checkpointing`, `Attention`, `Sharding`,
`Engine` (with `auto`) and `ResolvedEngine`, `OptimizerImpl` (with `auto`) and
`ResolvedOptimizerImpl`, `Device`, and the training stack's mechanisms: `Stack`
(`ImageStack` for diffusion), `Loss`, `SelectiveCheckpointing`, `BaseDtype`; `MetricClass`
names what a measured figure holds.
Hardware and billing: `Interconnect`, `Network`, `Billing`.
Ranking: `SpotPolicy`, `Objective`, `Pricing`. `choices(Literal)` lists a vocabulary's words.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

# How much of the model trains: every weight from random init (pretrain) or from a checkpoint
# (full), or adapters over a frozen 16-bit (lora) or 4-bit NF4 (qlora) base.
Method = Literal["pretrain", "full", "lora", "qlora"]
# Training precision: 16-bit compute with an fp32 master (mixed), pure bf16, or fp32; fp8 is
# bf16 mixed precision whose linear layers multiply in FP8 (torchao Float8Linear, Transformer
# Engine): the weights, master and activations kept are bf16-mixed's, the FP8 copies transient.
Precision = Literal["fp32", "bf16-mixed", "fp16-mixed", "bf16", "fp8"]
Optimizer = Literal[
    "adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor", "sgd", "sgd-momentum", "lion"
]
# Activation recomputation: none, selective (part of each layer) or full (whole layers).
Checkpointing = Literal["none", "selective", "full"]
# sdpa: fused kernels (PyTorch SDPA, FlashAttention) with no s x s tensors; eager: materialised.
Attention = Literal["eager", "sdpa"]
# Which ZeRO-3 implementation decides the gathered unit.
Sharding = Literal["deepspeed", "fsdp"]
ResolvedEngine = Literal["pytorch", "deepspeed"]
Engine = Literal["auto", "pytorch", "deepspeed"]
ResolvedOptimizerImpl = Literal["foreach", "for-loop", "fused"]
OptimizerImpl = Literal["auto", "foreach", "for-loop", "fused"]
Device = Literal["cuda", "cpu"]
# The training stack that runs the job; each is a documented set of mechanism defaults
# (tools/memory/stacks/profiles.py): the Hugging Face stack (Trainer, TRL, PEFT, Accelerate,
# DeepSpeed), litgpt, torchtune, torchtitan, unsloth, Megatron-LM.
Stack = Literal["hf", "litgpt", "torchtune", "torchtitan", "unsloth", "megatron"]
# The trainer of a diffusion job (tools/memory/images/stacks.py): the diffusers example scripts,
# SimpleTuner, ostris' ai-toolkit, kohya-ss sd-scripts. A job's one `stack` field takes a
# `Stack` for a language model (or a VLM's language model) and an `ImageStack` for a diffusion
# pipeline.
ImageStack = Literal["diffusers", "simpletuner", "ai-toolkit", "kohya"]
# How the loss turns logits into a cross-entropy (bytes per logit: tools/memory/stacks/loss.py).
Loss = Literal[
    "standard", "older-hf", "chunked", "chunked-16bit", "fused", "fused-linear", "chunked-linear",
    "forward-grad", "fp32-inplace",
]  # fmt: skip
# What "selective" recomputation keeps: everything but the attention core (Korthikanti et al.,
# Megatron-LM), or only matmul and attention outputs (torchtitan's op-level policy).
SelectiveCheckpointing = Literal["attention", "op"]
# How a frozen base's non-quantized weights are stored.
BaseDtype = Literal["16-bit", "fp32"]
# What a measured GPU memory figure contains: tensors (torch max_memory_allocated), the caching
# allocator's reservation (max_memory_reserved), or the whole device (nvidia-smi: + CUDA context).
MetricClass = Literal["allocated", "reserved", "device"]

# Intra-node GPU-to-GPU path and inter-node fabric of an instance.
Interconnect = Literal["nvswitch", "nvlink", "pcie"]
Network = Literal["infiniband", "roce", "ethernet"]
# The unit a provider rounds a run's time up to.
Billing = Literal["second", "minute", "hour"]

SpotPolicy = Literal["never", "allowed", "required"]
# cost: cheapest total; time: fastest; price: cheapest per hour.
Objective = Literal["cost", "time", "price"]
Pricing = Literal["on-demand", "spot"]


def choices(vocabulary: Any) -> tuple[str, ...]:
    """The words of a Literal vocabulary, in definition order."""
    return tuple(get_args(vocabulary))
