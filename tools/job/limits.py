"""What a job's fields may hold: the limits, the names people use for a value, what is valid.

Beyond the limits a request is almost certainly a typo. The aliases map the names people use
for a ZeRO stage ("fsdp-full-shard", "zero2") or a fused attention kernel ("flash", "FA2") to
the job's own words; `VALID` says, per field, what an error message offers instead.
"""

from __future__ import annotations

from typing import Final

from tools.enums import Sharding
from tools.errors import InvalidInputError

__all__ = [
    "ATTENTION_ALIASES",
    "MAX_BATCH",
    "MAX_CONTEXT_GIB",
    "MAX_GPUS",
    "MAX_HOURS",
    "MAX_NODES",
    "MAX_SEQ_LEN",
    "MAX_TOKENS",
    "VALID",
    "VALID_ZERO",
    "ZERO_ALIASES",
    "attention_alias",
    "zero_alias",
]

# Limits on inputs: beyond these the question is almost certainly a typo.
MAX_SEQ_LEN: Final = 10_000_000
MAX_BATCH: Final = 100_000
MAX_GPUS: Final = 100_000
MAX_NODES: Final = 4096
MAX_CONTEXT_GIB: Final = 64.0
MAX_TOKENS: Final = 1e15  # a thousand trillion tokens: far beyond any published training run
MAX_HOURS: Final = 1e6


# Names people use for a ZeRO stage, and the sharding implementation each implies.
ZERO_ALIASES: Final[dict[str, tuple[int, Sharding]]] = {
    "ddp": (0, "deepspeed"),
    "none": (0, "deepspeed"),
    "no-shard": (0, "deepspeed"),
    "zero0": (0, "deepspeed"),
    "zero1": (1, "deepspeed"),
    "zero2": (2, "deepspeed"),
    "zero3": (3, "deepspeed"),
    "fsdp-shard-grad-op": (2, "fsdp"),
    "shard-grad-op": (2, "fsdp"),
    "fsdp-full-shard": (3, "fsdp"),
    "full-shard": (3, "fsdp"),
    "fsdp": (3, "fsdp"),
}
VALID_ZERO: Final = "0, 1, 2, 3 or an alias: " + ", ".join(ZERO_ALIASES)
# Names of fused attention kernels, all modelled as sdpa (no s x s tensors).
ATTENTION_ALIASES: Final[dict[str, str]] = {
    "flash": "sdpa",
    "flash-attention": "sdpa",
    "flash-attention-2": "sdpa",
    "flash_attention_2": "sdpa",
    "fa2": "sdpa",
    "spda": "sdpa",
}


# What is valid, per field, for the errors built from pydantic's constraint messages.
VALID: Final[dict[str, str]] = {
    "micro_batch_size": f"an integer from 1 to {MAX_BATCH} (sequences per GPU per step)",
    "seq_len": f"an integer from 1 to {MAX_SEQ_LEN} (tokens)",
    "num_gpus": f"an integer from 1 to {MAX_GPUS} (GPUs)",
    "tensor_parallel": "an integer >= 1 that divides the number of attention heads",
    "lora_rank": "an integer from 1 to the model's hidden size",
    "lora_dropout": "a probability from 0 to below 1",
    "zero_stage": VALID_ZERO,
    "cuda_context_gib": f"GiB from 0 to {MAX_CONTEXT_GIB:g}",
    "fragmentation": "a fraction from 0 to 1 of the bytes a step allocates and frees",
    "gradient_accumulation_steps": f"an integer from 1 to {MAX_BATCH} (micro-batches per step)",
    "tokens": f"a count above 0 and at most {MAX_TOKENS:.0e} (tokens)",
    "samples": f"a count above 0 and at most {MAX_TOKENS:.0e} (samples)",
    "epochs": "a number of passes above 0 and at most 10,000",
    "deadline_hours": f"hours above 0 and at most {MAX_HOURS:.0e}",
    "max_nodes": f"an integer from 1 to {MAX_NODES} (nodes)",
}


def zero_alias(value: object) -> tuple[int, Sharding | None] | None:
    """(stage, sharding) for a ZeRO alias such as 'fsdp-full-shard' or 'zero2' (a digit string
    is a plain stage); None when `value` is not text. Unknown text is an InvalidInputError."""
    if not isinstance(value, str):
        return None
    key = value.strip().lower().replace("_", "-").replace(" ", "-")
    if key.isdigit():
        return int(key), None
    if key not in ZERO_ALIASES:
        raise InvalidInputError("zero_stage", value, VALID_ZERO)
    return ZERO_ALIASES[key]


def attention_alias(value: object) -> object:
    """'flash', 'FA2', 'flash_attention_2' -> 'sdpa'; other values unchanged (lower-cased)."""
    if isinstance(value, str):
        key = value.strip().lower().replace("_", "-")
        return ATTENTION_ALIASES.get(key, key)
    return value
