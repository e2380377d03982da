"""Region hints ('eu', 'us', 'asia', 'eu-west') matched against catalog region names."""

from __future__ import annotations


def region_in_area(hint: str, region: str) -> bool:
    """Whether catalog region `region` lies in the area or region named by `hint`."""
    return region.strip().lower().startswith(hint.strip().lower())
