"""The sentences an estimate states about QLoRA's 4-bit base: how it is stored, what its matmuls
dequantize, and what the 4-bit layers keep for the backward pass and for how long."""

from __future__ import annotations

from tools.memory.activations import Activations
from tools.memory.inputs import EstimateInput
from tools.memory.states.model_states import ModelStates
from tools.units import GB, format_gib

__all__ = ["qlora_sentences"]


def _size(n_bytes: int) -> str:
    return f"{format_gib(n_bytes, 2)} ({n_bytes / GB:.2f} GB)"


def qlora_sentences(inp: EstimateInput, states: ModelStates, acts: Activations) -> list[str]:
    """Storage of the 4-bit base, the dequantization buffers, and the 4-bit layers' inputs kept
    on the autograd graph (empty unless the method is qlora)."""
    if inp.method != "qlora":
        return []
    mech = inp.mechanisms
    bits = (
        "8-bit absmax plus one fp32 constant per 256 blocks (0.127 bits per parameter)"
        if mech.qlora_double_quant
        else "an fp32 absmax (0.5 bits per parameter)"
    )
    head = bool(states.lm_head_dequant)
    kept = "embeddings and norms" if head else "embeddings, lm_head and norms"
    layers = "and the lm_head are" if head else "is"
    out = [
        f"QLoRA: every linear layer of the transformer blocks {layers} stored as 4-bit NF4 with "
        f"one absmax per 64 weights, {bits} (Dettmers et al. 2023, §3); {kept} stay 16-bit "
        "(PEFT's prepare_model_for_kbit_training would upcast them to fp32).",
        "The bitsandbytes 4-bit matmul dequantizes one weight at a time to 16-bit: "
        f"{_size(states.dequant_buffer)} for the largest block weight, live only while a layer "
        "computes (counted at the recompute moment; the loss moments have none).",
    ]
    if head:
        out.append(
            "The 4-bit lm_head is dequantized whole for each of its matmuls, from fp16 as "
            "Lightning quantizes it and then cast to the compute dtype: "
            f"{_size(states.lm_head_dequant)} while it writes logits (forward) and while it "
            "computes its input's gradient."
        )
    if acts.graph_held:
        until = (
            "the training loop holds the logits, and with them the graph, until the next "
            "step's forward has returned, so they are also live through the optimizer step "
            "and the next forward"
            if acts.logits_held
            else "the training loop keeps the model's output, and with it the graph, until the "
            "optimizer has stepped, so they are also live through the step"
            if acts.logits_kept
            else "they are freed with the graph once the backward pass returns"
        )
        out.append(
            "The 4-bit layers keep their inputs as attributes of their autograd nodes "
            "(bitsandbytes before 0.43.2, autograd/_functions.py MatMul4Bit `ctx.tensors`), "
            f"which the backward pass does not release: {_size(acts.graph_held)} stay live to "
            f"the end of the backward pass; {until}."
        )
    return out
