"""The peak of a training step: which moment it falls on, and what is live at that moment.

A step is not one lump of weights + gradients + optimizer state + activations. Activations die
during the backward pass while gradients appear, and the optimizer step runs after both. The
peak is the largest of a few moments, each with its own composition (checked against PyTorch's
MemTracker in benchmarks/memory_calibration):

- `forward`: at the loss, inside the forward pass: saved activations, autocast's weight copies,
  the logits, their fp32 copy and the fp32 log-softmax output (a 4-bit lm_head: or, if larger,
  the moment it writes the last logits with its weight dequantized).
- `loss backward`: the cross-entropy backward: the saved fp32 log-softmax with its gradient in
  and out (12 bytes per logit) on top of every saved activation.
- `lm_head backward`: the logits' gradient and the lm_head weight's fresh gradient (under
  autocast a 16-bit one and its fp32 cast).
- `recompute`: with recomputation, the top layer rebuilt on top of the checkpoints and
  differentiated, with its backward's gradient buffers (QLoRA: with one 4-bit weight
  dequantized to 16-bit; at the other moments no layer is computing).
- `first layer backward`: full fine-tuning with full recomputation, the bottom layer rebuilt:
  one checkpoint left, every gradient above it written.
- `embedding backward`: the end of the backward pass: every gradient, and for tied embeddings the
  lm_head's gradient contribution, the embedding's and their sum (three vocabulary-sized
  buffers; autograd sums the two contributions out of place).
- `optimizer step`: weights, gradients, state and the step's temporaries; activations are gone.

The 4-bit layers of bitsandbytes before 0.43.2 keep their inputs on their autograd nodes, which
live as long as the graph (activations.py `graph_held_bytes`): through the whole backward pass,
and where the training loop still holds the logits (litgpt keeps them until the next forward has
returned), through the optimizer step and the next step's forward as well.

Gradients are freed after each step (`zero_grad(set_to_none=True)`, the default); with gradient
accumulation over several micro-batches they stay resident through forward and backward.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.memory import constants as c
from tools.memory.activations import Activations

MOMENTS = (
    "forward",
    "loss backward",
    "lm_head backward",
    "recompute",
    "first layer backward",
    "embedding backward",
    "optimizer step",
)


@dataclass(frozen=True, slots=True)
class Moment:
    """Bytes live at one moment of the step, by part."""

    name: str
    weights: int
    gradients: int
    optimizer: int
    activations: int  # saved activations and every transient buffer (logits, gradient buffers)

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer + self.activations


@dataclass(frozen=True, slots=True)
class StepInputs:
    """What the moments are built from (bytes per GPU)."""

    weights: int
    gradients: int  # all trainable parameters' gradients
    optimizer: int  # optimizer-owned state (fp32 master included)
    optimizer_temporaries: int  # the optimizer step's own temporaries
    full: bool  # all weights trainable (else LoRA: no embedding or lm_head gradients)
    accumulating: bool  # gradient accumulation: gradients resident through the whole step
    recompute: str
    lm_head_grad: int  # bytes of the lm_head weight's gradient (0 for LoRA)
    embedding_grad: int  # bytes of the input embedding's gradient (0 for LoRA)
    tied: bool  # lm_head shares the input embedding
    grad_copy_bytes: int  # autocast: bytes per element of the 16-bit weight gradient (else 0)
    dequant_buffer: int = 0  # QLoRA: one 4-bit weight dequantized while its layer computes
    lm_head_dequant: int = 0  # QLoRA, 4-bit lm_head: its dequantized copies while it computes
    down_grad: int = 0  # the gradient of one layer's down projection (full fine-tuning)


def step_moments(acts: Activations, s: StepInputs) -> tuple[Moment, ...]:
    """Every candidate moment of one training step; the peak is the largest."""
    w, o = s.weights, s.optimizer
    resident = s.gradients if s.accumulating else 0
    # Autocast's weight copies: all cached until the loss; in the backward pass only those the
    # saved graph holds (with full recomputation just the lm_head's, outside the checkpoints).
    kept_copies = acts.head_weight_copies if s.recompute == "full" else acts.weight_copies
    saved = acts.stored + kept_copies
    # Logits the loop holds keep this step's graph, and the 4-bit inputs on it, alive.
    graph = acts.graph_held if acts.logits_held else 0
    held = acts.logits_held + graph
    head_out = acts.logits_at_head + s.lm_head_dequant if s.lm_head_dequant else 0
    forward = acts.stored + acts.weight_copies + max(acts.logits_forward, head_out) + graph
    moments = [
        Moment("forward", w, resident, o, forward),
        Moment("loss backward", w, resident, o, saved + acts.logits_peak),
    ]
    if s.full:
        fresh = s.lm_head_grad + s.lm_head_grad // c.FP32 * s.grad_copy_bytes
        at_head = saved + acts.logits_head + fresh
        moments.append(Moment("lm_head backward", w, resident, o, at_head))
    elif s.lm_head_dequant:  # the 4-bit lm_head dequantized again for its input's gradient
        at_head = saved + acts.logits_head + s.lm_head_dequant
        moments.append(Moment("lm_head backward", w, resident, o, at_head))
    if s.recompute != "none" and (acts.recompute_working_set or s.recompute == "full"):
        top = _recompute(acts, s, resident)
        moments.append(top)
        if s.full and not s.accumulating and s.recompute == "full":
            moments.append(_first_layer(acts, s, top))
    moments.append(_embedding_backward(s, acts.logits_held + acts.logits_kept + acts.graph_held))
    # A loop that keeps the output keeps the graph through the step too, but not into the next
    # forward pass.
    kept = acts.logits_kept + (acts.graph_held if acts.logits_kept and not graph else 0)
    step = Moment("optimizer step", w, s.gradients, o + s.optimizer_temporaries, held + kept)
    moments.append(step)
    return tuple(moments)


def _recompute(acts: Activations, s: StepInputs, resident: int) -> Moment:
    """The top layer rebuilt (with its autocast weight copies) on top of the checkpoints; the
    head's activations are freed by then and an untied lm_head has its gradient."""
    layers = sum(g.count for g in acts.layers)
    rotary = acts.head.get("rotary_cos_sin", 0)
    copies = (acts.weight_copies - acts.head_weight_copies) // max(layers, 1)
    head_grads = s.lm_head_grad if (s.full and not s.tied) else 0
    live = acts.layers_at_recompute + rotary + acts.recompute_working_set + copies
    live += s.dequant_buffer + acts.logits_held + acts.logits_kept + acts.layer_backward_buffers
    return Moment("recompute", s.weights, max(resident, head_grads), s.optimizer, live)


def _first_layer(acts: Activations, s: StepInputs, top: Moment) -> Moment:
    """The bottom layer rebuilt and differentiated: one checkpoint left, but the gradients of
    every layer above it (and of an untied lm_head) already written, and at its MLP backward
    the down projection's own (full fine-tuning)."""
    layers = sum(g.count for g in acts.layers)
    checkpoints = sum(g.count * g.stored_each for g in acts.layers)
    one = checkpoints // max(layers, 1)
    live = top.activations - min(acts.layers_at_recompute, checkpoints) + one
    block_grads = s.gradients - s.embedding_grad - (0 if s.tied else s.lm_head_grad)
    grads = s.gradients - s.embedding_grad - block_grads // max(layers, 1) + s.down_grad
    return Moment("first layer backward", s.weights, max(top.gradients, grads), s.optimizer, live)


def _embedding_backward(s: StepInputs, held: int) -> Moment:
    """The last moment of the backward pass (full fine-tuning: the embedding's gradient);
    `held` are logits the training loop still holds."""
    if not s.full:
        return Moment("embedding backward", s.weights, s.gradients, s.optimizer, held)
    if s.tied:  # lm_head contribution + embedding contribution + their sum
        grads = s.gradients if s.accumulating else s.gradients - s.embedding_grad
        buffers = 3 * s.embedding_grad + held
        return Moment("embedding backward", s.weights, grads, s.optimizer, buffers)
    transient = s.embedding_grad if s.accumulating else 0  # accumulated into .grad in place
    return Moment("embedding backward", s.weights, s.gradients, s.optimizer, transient + held)


def peak_moment(moments: tuple[Moment, ...]) -> Moment:
    """The largest moment (the earliest on a tie)."""
    return max(moments, key=lambda m: m.total)
