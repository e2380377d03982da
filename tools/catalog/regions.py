"""Regions: whether a catalog region lies in an area ('eu', 'us', 'asia') or matches a name.

Providers spell regions their own way ("eu-west-1", "europe-west4", "westeurope", "FR",
"Iceland, Norway"); the areas and the spellings that lie in each are data
(tools/data/regions.yaml). A region hint that is no area is a region name, which matches itself
and its numbered zones ("eu-west" matches "eu-west-1" and "eu-west2", not "eu-westfalia").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import cache
from importlib import resources

import yaml

_DATA_FILE = "data/regions.yaml"  # inside the `tools` package


def _fold(text: str) -> str:
    """Lower case without diacritics, trimmed."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).strip()


@cache
def areas() -> dict[str, tuple[str, ...]]:
    """Area key -> the region spellings that lie in it (folded; a trailing * is a prefix)."""
    text = resources.files("tools").joinpath(_DATA_FILE).read_text(encoding="utf-8")
    raw = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["areas"]
    return {str(key): tuple(_fold(str(entry)) for entry in entries) for key, entries in raw.items()}


def is_area(hint: str) -> bool:
    """Whether `hint` names an area ('eu', 'us', 'asia') rather than one region."""
    return _fold(hint) in areas()


def region_matches(hint: str, region: str) -> bool:
    """Whether catalog region `region` lies in `hint`: an area, or a region name matching itself
    and its numbered zones."""
    key, name = _fold(hint), _fold(region)
    entries = areas().get(key)
    if entries is None:
        return name == key or (name.startswith(key) and _zone_boundary(key[-1], name[len(key)]))
    parts = [part.strip() for part in name.split(",")]
    return any(_entry_matches(entry, part) for entry in entries for part in parts)


def matching_regions(hint: str, regions: Iterable[str]) -> list[str]:
    """The regions of `regions` that `hint` matches, sorted and each once."""
    return sorted({region for region in regions if region_matches(hint, region)})


def _zone_boundary(last: str, following: str) -> bool:
    """Whether `following` starts a zone after a region name ending in `last`: 'eu-west' +
    '-1' or '1', but not 'us-east-1' + '2' (another region) or 'eu-west' + 'falia'."""
    return not (following.isalpha() and last.isalpha()) and not (
        following.isdigit() and last.isdigit()
    )


def _entry_matches(entry: str, part: str) -> bool:
    if entry.endswith("*"):
        return part.startswith(entry[:-1])
    return part == entry
