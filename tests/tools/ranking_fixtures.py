"""Synthetic instances for the ranking tests: every figure chosen so the arithmetic is exact."""

from __future__ import annotations

from datetime import date
from typing import Any

from tools.catalog.instances import Instance

AS_OF = date(2026, 1, 15)


def instance(instance_type: str, gpu: str, gpu_count: int, price: float, **extra: Any) -> Instance:
    """An instance of provider 'testcloud', per-second billing, no minimum, unless overridden."""
    fields: dict[str, Any] = {
        "provider": "testcloud",
        "instance_type": instance_type,
        "regions": ["us-east"],
        "gpu": gpu,
        "gpu_count": gpu_count,
        "interconnect": "nvswitch" if gpu_count > 1 else "pcie",
        "price_per_hour": price,
        "spot_available": extra.get("spot_price_per_hour") is not None,
        "billing_granularity": "second",
        "min_charge_seconds": 0,
        "persistent_volumes": True,
        "source": "test catalog",
        "as_of": AS_OF,
    }
    fields.update(extra)
    return Instance(**fields)
