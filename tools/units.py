"""Byte units. Everything is counted in bytes internally; display units are always labelled."""

from __future__ import annotations

GIB = 1 << 30  # gibibyte, 2^30 bytes: what nvidia-smi and PyTorch call "GB"
GB = 10**9  # gigabyte, 1e9 bytes: what vendor datasheets and the ZeRO/QLoRA papers use
MIB = 1 << 20


def to_gib(n_bytes: float) -> float:
    """Bytes to GiB (2^30)."""
    return n_bytes / GIB


def to_gb(n_bytes: float) -> float:
    """Bytes to GB (1e9)."""
    return n_bytes / GB


def format_gib(n_bytes: float, digits: int = 1) -> str:
    """'12.3 GiB'."""
    return f"{to_gib(n_bytes):.{digits}f} GiB"
