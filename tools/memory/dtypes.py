"""Bytes per element of each kind of tensor a training step keeps, by precision, engine and device.

Which dtype a saved tensor has depends on more than the precision name:

- `engine="pytorch"` with a mixed precision and full fine-tuning is torch.autocast over fp32
  weights (the Hugging Face Trainer's `bf16=True`): matmuls run in 16-bit, but the residual
  stream, the norms and the embeddings stay fp32, every linear layer keeps its own 16-bit cast
  of an fp32 input, and autocast caches a 16-bit copy of every trainable weight it multiplies
  (kept until the backward pass has used it). Mixture-of-experts grouped matmuls are not
  autocast and run in the weights' fp32.
- `engine="deepspeed"` (and pure bf16) computes on a 16-bit copy of the model: every activation
  is 16-bit and there are no casts.
- LoRA under autocast keeps a 16-bit base model; only LayerNorm (autocast's fp32 list) keeps an
  fp32 copy of its input.
- On the CPU, dropout keeps its mask in the input's dtype (CUDA: 1-byte bool), 16-bit LayerNorm
  keeps mean and rstd in the input's dtype (CUDA: fp32), and scaled_dot_product_attention with
  dropout falls back to the math kernel, which upcasts 16-bit inputs to fp32 and keeps the s x s
  softmax, mask and dropped probabilities (CUDA's flash and memory-efficient kernels support
  dropout and keep none of them).
These rules were read off the tensors PyTorch 2.13 saves (`saved_tensors_hooks`) and the
calibration runs in benchmarks/memory_calibration.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tools.memory import constants as c


@dataclass(frozen=True, slots=True)
class SavedDtypes:
    """Element sizes in bytes of the tensors one training step keeps."""

    act: int  # matmul outputs and what follows them: Q/K/V, MLP intermediates, logits
    stream: int  # residual stream: norm outputs, embeddings, rotary tables
    norm_input: int  # what LayerNorm keeps of its input
    norm_stats: int  # LayerNorm mean and rstd per token
    mask_act: int  # dropout mask on a matmul output (attention probabilities, residual branch)
    mask_stream: int  # dropout mask on the embeddings
    casts: bool  # autocast: a linear fed from the fp32 stream keeps its own 16-bit cast
    weight_copy: int  # bytes per trainable matmul weight element autocast caches (0: none)
    experts: int  # MoE grouped matmuls (not autocast: the weights' dtype)
    math_attention: bool  # CPU: SDPA with dropout runs the math kernel in fp32
    logits: int  # the lm_head output


@lru_cache(maxsize=64)  # a few combinations, read for every saved tensor (the result is frozen)
def saved_dtypes(
    precision: str, engine: str, full: bool, device: str, fp32_base: bool = False
) -> SavedDtypes:
    """The element sizes for one precision, engine ('pytorch' or 'deepspeed'), method and device.
    `fp32_base`: LoRA over an fp32 base under autocast (an fp32-loaded model, PEFT's k-bit
    preparation): the embeddings and with them the residual stream stay fp32, as in a full
    fine-tune, but autocast caches no copies of the frozen weights (it caches leaf tensors
    that require grad only)."""
    cpu = device == "cpu"
    if precision == "fp32":
        mask = c.FP32 if cpu else c.MASK
        return SavedDtypes(
            act=c.FP32, stream=c.FP32, norm_input=c.FP32, norm_stats=c.FP32, mask_act=mask,
            mask_stream=mask, casts=False, weight_copy=0, experts=c.FP32, math_attention=cpu,
            logits=c.FP32,
        )  # fmt: skip
    half_mask = c.BF16 if cpu else c.MASK
    if precision in c.MIXED_PRECISIONS and engine == "pytorch":
        weights = c.FP32 if full or fp32_base else c.BF16
        return SavedDtypes(
            act=c.BF16, stream=weights, norm_input=c.FP32, norm_stats=c.FP32,
            mask_act=half_mask, mask_stream=weights if cpu else c.MASK, casts=True,
            weight_copy=c.BF16 if full else 0, experts=weights, math_attention=cpu,
            logits=c.BF16,
        )  # fmt: skip
    return SavedDtypes(
        act=c.BF16, stream=c.BF16, norm_input=c.BF16, norm_stats=c.BF16 if cpu else c.FP32,
        mask_act=half_mask, mask_stream=half_mask, casts=False, weight_copy=0, experts=c.BF16,
        math_attention=cpu, logits=c.BF16,
    )  # fmt: skip
