"""Byte counts used by the estimator, each with where it comes from.

Everything here is an exact integer or fraction taken from a paper or a library's source; the
modelling choices built on them are stated in `tools.memory.estimator` assumptions.
"""

from __future__ import annotations

from tools.units import GIB

FP32 = 4
BF16 = 2  # also fp16
MASK = 1  # torch.bool dropout mask: one byte per element
INT64 = 8

# fp8 training keeps what bf16 mixed precision keeps: torchao's Float8Linear and Transformer
# Engine cast the bf16 weight and input to FP8 inside each matmul (transient copies) and leave
# the weights, the fp32 master and the saved activations as they are (pytorch/torchtitan
# docs/float8.md: Float8Linear casts its high-precision weight to float8 inside forward).
MIXED_PRECISIONS: frozenset[str] = frozenset({"bf16-mixed", "fp16-mixed", "fp8"})

# ZeRO (Rajbhandari et al. 2019, arXiv:1910.02054, §3.1 and Table 1): mixed-precision Adam keeps
# 16-bit parameters (2 bytes) and gradients (2 bytes) plus K = 12 bytes of optimizer state per
# parameter: an fp32 master copy, fp32 momentum and fp32 variance.
ZERO_PAPER_K = 12
FP32_MASTER = FP32

# bitsandbytes 8-bit optimizers (bitsandbytes/optim/optimizer.py, Optimizer8bit.init_state): each
# state is uint8 with one fp32 absmax per block of 256 values; tensors with fewer than
# min_8bit_size = 4096 elements keep 32-bit state instead.
BNB_STATE_BLOCK = 256
BNB_MIN_8BIT_SIZE = 4096
# bitsandbytes paged optimizers (optimizer.py get_state_buffer): the state of a parameter with at
# least 1e5 elements is allocated in CUDA unified memory (functional.py get_paged,
# cget_managed_ptr); smaller ones, and the absmax blocks, are ordinary CUDA tensors.
BNB_PAGED_MIN_ELEMENTS = 100_000

# QLoRA (Dettmers et al. 2023, arXiv:2305.14314, §3 "Double Quantization"): NF4 stores 4 bits per
# weight and one absmax per block of 64 weights. Without double quantization the absmax is fp32
# (32/64 = 0.5 bits per parameter); with it the absmax is 8-bit plus one fp32 constant per 256
# blocks (8/64 + 32/(64*256) = 0.127 bits per parameter).
NF4_BLOCK = 64
NF4_SECOND_LEVEL_BLOCKS = 256


# Limits on inputs: beyond these the question is almost certainly a typo.
MAX_SEQ_LEN = 10_000_000
MAX_BATCH = 100_000
MAX_GPUS = 100_000
MAX_CONTEXT_BYTES = 64 * GIB


def weight_bytes(precision: str) -> int:
    """Bytes of a working (forward/backward) copy of a parameter."""
    return FP32 if precision == "fp32" else BF16


def activation_bytes(precision: str) -> int:
    """Bytes of an activation element: 16-bit under mixed or pure bf16, 4 under fp32."""
    return FP32 if precision == "fp32" else BF16
