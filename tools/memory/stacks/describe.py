"""The sentences an estimate states about its training stack: the stack, each resolved mechanism
with its source, and what the mechanisms did to the count (loss buffers, recomputation, offload,
the optimizer step inside backward)."""

from __future__ import annotations

from tools.memory.activations import Activations
from tools.memory.inputs import EstimateInput
from tools.memory.stacks.profiles import MECHANISMS, PROFILES
from tools.units import format_gib

__all__ = ["stack_sentences"]

_LOSS_WORDS = {
    "standard": "the 16-bit logits are upcast to fp32 for the loss, whose fp32 log-softmax is "
    "kept with its gradient in and out",
    "older-hf": "the model upcasts the logits to fp32 and the loss takes a shifted fp32 copy",
    "chunked": "the logits come in 8 chunks, each upcast to fp32 in turn; the fp32 log-softmax "
    "of every chunk is kept",
    "chunked-16bit": "the cross-entropy runs on 16-bit logit chunks, and the loop keeps the "
    "logits until the next step's forward",
    "fused": "a fused kernel keeps the 16-bit logits and writes their gradient in place",
    "fused-linear": "the logits are produced and consumed chunk by chunk inside the loss; only "
    "the 16-bit gradient of the lm_head input is kept",
    "chunked-linear": "the output projection and the loss run over 8 chunks, each its own "
    "graph keeping its 16-bit hidden slice and its fp32 log-softmax",
    "forward-grad": "the output projection and the loss run chunk by chunk and the hidden "
    "states' gradient is computed in the forward pass; no logits are kept",
    "fp32-inplace": "one fp32 copy of the logits becomes the softmax and then the gradient in "
    "place",
}
_METHOD_ONLY = {
    "frozen_base_dtype": ("lora", "qlora"),
    "qlora_keeps_input": ("qlora",),
    "qlora_lm_head": ("qlora",),
    "qlora_double_quant": ("qlora",),
}


def stack_sentences(inp: EstimateInput, acts: Activations) -> list[str]:
    """The stack, its mechanisms that apply to this job, and their effect in bytes."""
    mech = inp.mechanisms
    other = (
        " (the default; with litgpt, torchtune, torchtitan, unsloth or Megatron-LM say so: they "
        "allocate differently)"
        if mech.stack == "hf"
        else ""
    )
    names = tuple(n for n in MECHANISMS if inp.method in _METHOD_ONLY.get(n, (inp.method,)))
    profile = PROFILES[mech.stack]
    release = profile.release(mech.version)
    described = release.described if release else profile.described
    out = [f"Training stack {mech.stack}: {profile.title}{other}; release {mech.version}, "
           f"{described}."]  # fmt: skip
    out += mech.describe(names)
    per_logit = acts.logits_peak / acts.logits if acts.logits else 0.0
    out.append(
        f"Logits and loss ({mech.loss}): {inp.model.vocab_size} logits per token; "
        f"{_LOSS_WORDS[mech.loss]}: {format_gib(acts.logits_peak, 2)} at the loss backward "
        f"({per_logit:.2f} bytes per logit), {format_gib(acts.logits_forward, 2)} inside the "
        "forward pass."
    )
    if acts.logits_kept:
        out.append(
            f"The training loop keeps the model's output until the optimizer has stepped: its "
            f"{format_gib(acts.logits_kept, 2)} of logits stay live through the backward pass "
            "and the step (counted in the figures above)."
        )
    out += _recompute(inp)
    if mech.activation_offload:
        out.append(
            f"Activation offload: {format_gib(acts.offloaded, 2)} of saved activations go to "
            "pinned CPU RAM; the GPU keeps the last saved tensors of the forward pass and, in "
            "the backward pass, one layer's tensors at a time."
        )
    if mech.optimizer_in_backward:
        out.append(
            "Optimizer in backward: each parameter is stepped as soon as its gradient is "
            "accumulated and the gradient is freed, so at most the largest parameter's "
            "gradient is alive and there is no separate optimizer-step moment."
        )
    return out


def _recompute(inp: EstimateInput) -> list[str]:
    if inp.gradient_checkpointing != "selective":
        return []
    if inp.mechanisms.selective_checkpointing == "op":
        return [
            "Selective recomputation, op level (torchtitan): each layer keeps its input, the "
            "outputs of every second matmul (the 1st, 3rd, ...) and the attention kernel's "
            "output with its log-sum-exp; the rest is rebuilt during the backward pass."
        ]
    return []
