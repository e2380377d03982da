"""Temporaries of the optimizer step itself, on top of the state it keeps.

What PyTorch really allocates inside `optimizer.step()` (measured with MemTracker in
benchmarks/memory_calibration; torch 2.13, transformers 5):

- AdamW, `foreach` implementation (PyTorch's default when every parameter is on CUDA):
  `torch._foreach_sqrt(exp_avg_sqs)` builds the denominators of all parameters at once: one
  extra copy of the second moment (state bytes x trainable parameters).
- AdamW, for-loop implementation (PyTorch's default on the CPU): each parameter's
  `exp_avg_sq.sqrt()` and the division by the bias correction are two temporaries of that
  parameter's size; the peak is twice the largest parameter tensor.
- AdamW, `fused=True` and DeepSpeed's fused Adam: updated in place, no temporaries.
- Hugging Face Adafactor: per parameter `grad**2` and the rebuilt second-moment estimate, or the
  update and its negation: twice the largest tensor in fp32; a 16-bit parameter also gets fp32
  copies of its gradient and of itself (four fp32 tensors of the largest parameter's size).
- SGD (with or without momentum), bitsandbytes 8-bit AdamW and Lion update in place: none counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import ceil

from tools.enums import ResolvedOptimizerImpl
from tools.memory import constants as c
from tools.memory.states.inventory import ParamTensor


def optimizer_temporaries(
    optimizer: str,
    impl: ResolvedOptimizerImpl,
    shards: Iterable[tuple[ParamTensor, int]],
    state_bytes: int,
    param_bytes: int,
    data_parallel: int,
) -> int:
    """Peak bytes the optimizer step allocates beyond its state, on one GPU.

    `shards` pairs each trainable tensor group with the elements of one of its tensors on this
    rank; `state_bytes` is the width of a full-precision state element (4, or 2 under pure
    bf16); `data_parallel` > 1 divides a foreach step's work when ZeRO shards the state (the
    caller passes 1 otherwise).
    """
    groups = list(shards)
    if not groups:
        return 0
    largest = max(elements for _, elements in groups)
    if optimizer == "adamw":
        if impl == "fused":
            return 0
        if impl == "foreach":
            total = sum(elements * t.count for t, elements in groups)
            return state_bytes * ceil(total / data_parallel)
        return 2 * state_bytes * largest
    if optimizer == "adafactor":
        copies = 2 if param_bytes == c.FP32 else 4
        return copies * c.FP32 * largest
    return 0
