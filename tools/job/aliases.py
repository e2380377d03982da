"""Words people use for a ZeRO stage and for fused attention kernels, read into the job's own.

`zero_alias("fsdp-full-shard")` is `(3, "fsdp")`; `attention_alias("FA2")` is `"sdpa"`. Both are
applied by `tools.job.spec.JobSpec` and `tools.memory.inputs.EstimateInput` before validation.
"""

from __future__ import annotations

from typing import Final

from tools.enums import Sharding
from tools.errors import InvalidInputError

__all__ = ["ATTENTION_ALIASES", "VALID_ZERO", "ZERO_ALIASES", "attention_alias", "zero_alias"]

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
