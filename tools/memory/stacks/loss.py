"""Bytes the cross-entropy keeps per logit, by implementation, at each moment of a step.

L is the number of logits on one GPU (tokens x vocabulary, vocabulary-parallel under TP) and b
the bytes of a logit as the lm_head returns it (2 in 16-bit, 4 in fp32). Counted from each
implementation's code and checked op by op on the CPU (tests/tools/memory/test_loss_measured.py
runs each implementation under a tensor-lifetime tracker and compares):

- `standard` (transformers >= 4.46 loss/loss_utils.py ForCausalLMLoss; torchtitan train.py;
  torchtune's CrossEntropyLoss path): the 16-bit logits, their fp32 copy and the fp32
  log-softmax in the forward pass (10 L; 8 L in fp32); in the backward pass the saved
  log-softmax with its incoming and outgoing fp32 gradients (12 L); the logits' 16-bit gradient
  (b L) while lm_head's backward runs.
- `older-hf` (transformers < 4.46, e.g. LlamaForCausalLM.forward of 4.40): the model upcasts
  the logits (`logits.float()`), the loss slices a contiguous shifted copy, then log-softmax:
  12 L forward, 12 L backward.
- `chunked` (torchtune modules/loss/ce_chunked_output_loss.py, 8 chunks): the 16-bit chunks,
  every chunk's fp32 log-softmax and one chunk's fp32 copy in the forward (2 L + 4 L + 4 L/8);
  the recipe deletes the logits before backward, which then holds the log-softmax and one
  chunk's gradients (4 L + (4 + 4 + b) L/8).
- `chunked-16bit` (litgpt utils.py chunked_cross_entropy over 128-token lm_head chunks, no
  upcast): 16-bit logits and 16-bit log-softmax; the loop keeps this step's logits until the
  next forward has produced its own, so b L more is alive at every moment (`held`).
- `fused` (unsloth kernels/cross_entropy_loss.py; Liger's cross-entropy): the kernel keeps the
  logits and one fp32 log-sum-exp per token and writes the gradient into the logits: b L.
- `fused-linear` (Liger's fused linear cross-entropy): the logits are produced and consumed
  chunk by chunk with the lm_head matmul; only the 16-bit gradient of the lm_head input
  (tokens x hidden) is kept: no per-logit bytes.
- `chunked-linear` (torchtune modules/loss/cross_entropy_loss.py LinearCrossEntropyLoss, 8
  chunks, the loss of the current recipes, e.g. recipes/configs/llama3_1/8B_lora_single_device
  .yaml @2943c61e): a Python loop over the chunks, each its own graph: per chunk the output
  projection keeps its 16-bit hidden slice and autograd the chunk's fp32 log-softmax, so after
  the loop 4 L and the whole hidden (b T h) are kept; one chunk's 16-bit logits and fp32 copy
  are alive while it runs (6 L/8), and its fp32 gradients in and out with the 16-bit logit
  gradient in the backward (10 L/8). It is never compiled (its compile strategy only logs that
  it skips) and runs outside activation offloading.
- `forward-grad` (unsloth_zoo fused_losses/cross_entropy_loss.py UnslothFusedLoss, called by
  unsloth's models/llama.py since its fused CE replaced the Triton kernel): chunk by chunk the
  lm_head and the cross-entropy run and the gradient of the hidden states is computed inside the
  forward pass (torch.func.grad_and_value); no logits survive a chunk. Kept: that gradient
  (b T h) and, during the call, the final norm's output (b T h); one chunk's working set is
  (b + 12) bytes per logit (unsloth's own budget: 16-bit logits, fp32 upcast, log-softmax,
  gradient). The chunk count follows unsloth's rule: one chunk when 16 bytes per logit fit a
  target of 4 GiB (`_CE_TARGET_GB_CAP`; half the free memory when that is less, which the
  estimator assumes is not the case) less the kept gradient, else a multiple of four chunks.
- `fp32-inplace` (Megatron core/tensor_parallel/cross_entropy.py): one fp32 copy of the logits
  becomes the softmax in place and then the gradient: b L + 4 L at both passes.

Compiled (torch.compile around the loss, as torchtune's `compile: True` does with
training.compile_loss): the partitioner saves the 16-bit logits, the cheapest tensor to keep,
and recomputes the fp32 upcast and the softmax from them in the backward pass: b L kept, plus
the logits' gradient (b L, or one chunk's with chunking) in the backward pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Final

from tools.memory import constants as c

__all__ = [
    "LINEAR_LOSSES", "LITGPT_CHUNK_TOKENS", "TORCHTUNE_CHUNKS", "LossBytes", "loss_bytes",
    "unsloth_chunks",
]  # fmt: skip

TORCHTUNE_CHUNKS: Final = 8  # CEWithChunkedOutputLoss / LinearCrossEntropyLoss(num_chunks=8)
UNSLOTH_TARGET_BYTES: Final = 4 * 2**30  # unsloth_zoo _CE_TARGET_GB_CAP = 4.0 (GiB)
UNSLOTH_BUDGET_PER_LOGIT: Final = 16  # its _CE_BYTES_PER_LOGIT, what the chunk count is sized by
LINEAR_LOSSES: Final = frozenset({"fused-linear", "chunked-linear", "forward-grad"})
LITGPT_CHUNK_TOKENS: Final = 128  # finetune/*.py: model(input_ids, lm_head_chunk_size=128)


@dataclass(frozen=True, slots=True)
class LossBytes:
    """Bytes of logits and loss buffers on one GPU at each moment (integer bytes)."""

    forward: int  # inside the forward pass, at the loss (this step's logits included)
    backward: int  # the loss backward's peak
    head: int  # while lm_head's backward runs (the logits' gradient)
    held: int  # kept by the training loop through every other moment of the step


def loss_bytes(
    loss: str,
    logits: int,
    logit_bytes: int,
    seq_len: int,
    tokens_hidden: int,
    compiled: bool = False,
) -> LossBytes:
    """The loss buffers for `logits` logits of `logit_bytes` each; `seq_len` sets litgpt's chunk
    share, `tokens_hidden` (tokens x hidden) the fused-linear kernel's kept input gradient.
    `compiled`: the loss runs under torch.compile, whose partitioner keeps the 16-bit logits and
    recomputes the upcast and softmax in the backward pass (standard, older-hf and chunked)."""
    b, n = logit_bytes, logits
    copy = c.FP32 if b != c.FP32 else 0  # the fp32 upcast of 16-bit logits
    if compiled and loss in ("standard", "older-hf", "chunked"):
        grad = ceil(n / TORCHTUNE_CHUNKS) if loss == "chunked" else n
        return LossBytes(b * n, b * n + b * grad, b * grad, 0)
    if loss == "standard":
        return LossBytes((b + copy + c.FP32) * n, 3 * c.FP32 * n, b * n, 0)
    if loss == "older-hf":
        return LossBytes(3 * c.FP32 * n, 3 * c.FP32 * n, b * n, 0)
    if loss == "chunked":
        chunk = ceil(n / TORCHTUNE_CHUNKS)
        forward = (b + c.FP32) * n + copy * chunk
        backward = c.FP32 * n + (2 * c.FP32 + (b if copy else 0)) * chunk
        return LossBytes(forward, backward, b * chunk, 0)
    if loss == "chunked-16bit":
        chunk = ceil(n * min(1.0, LITGPT_CHUNK_TOKENS / seq_len))
        return LossBytes(3 * b * n, 2 * b * n + 2 * b * chunk, b * n + b * chunk, b * n)
    if loss == "fused":
        return LossBytes(b * n, b * n, b * n, 0)
    if loss == "fused-linear":
        kept = c.BF16 * tokens_hidden
        return LossBytes(kept, kept, kept, 0)
    if loss == "chunked-linear":
        chunk, hidden = ceil(n / TORCHTUNE_CHUNKS), c.BF16 * tokens_hidden
        forward = c.FP32 * n + (b + c.FP32) * chunk + hidden
        backward = c.FP32 * n + (2 * c.FP32 + b) * chunk + hidden
        return LossBytes(forward, backward, b * chunk, 0)
    if loss == "forward-grad":
        kept = b * tokens_hidden
        chunk = ceil(n / unsloth_chunks(n, kept))
        return LossBytes(2 * kept + (b + 3 * c.FP32) * chunk, kept, 0, 0)
    if loss == "fp32-inplace":
        return LossBytes((b + copy) * n, (b + copy) * n, b * n, 0)
    raise ValueError(f"unknown loss implementation {loss!r}")


def unsloth_chunks(logits: int, fixed_bytes: int) -> int:
    """Chunks unsloth's fused loss splits `logits` into (unsloth_zoo get_chunk_size): one when
    16 bytes per logit fit the target less `fixed_bytes`, else the next multiple of four."""
    target = max(UNSLOTH_TARGET_BYTES - fixed_bytes, 1)
    exact = UNSLOTH_BUDGET_PER_LOGIT * logits / target
    return 1 if exact <= 1 else 4 * ceil(exact / 4)
