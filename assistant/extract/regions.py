"""Region hints: an area ("in Europe" -> "eu", "in de VS" -> "us", "Asya'da" -> "asia") or a
cloud region name as written ("eu-west", "us-east-1", "westeurope"), and whether a catalog
region lies in one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assistant.extract.lexicon import lexicon
from assistant.extract.text import fold

if TYPE_CHECKING:
    from assistant.extract.patterns import Patterns

# Cloud region names: AWS/GCP style ("eu-west-1", "europe-west4", "us-central1") and the Azure
# style of a direction glued to an area ("westeurope", "eastus2").
_REGION_NAME = re.compile(
    r"(?<![\w-])(?:eu|us|ap|sa|ca|me|af|il|mx|europe|asia|australia|northamerica|southamerica)"
    r"-(?:north|south|east|west|central|northeast|southeast|northwest|southwest)\w*(?:-\d+)?"
    r"|(?<!\w)(?:west|north|east|south|central|northcentral|southcentral|westcentral)"
    r"(?:europe|us|asia)\d?(?!\w)"
)


def find_region(p: Patterns, text: str) -> str | None:
    """The last region hint in folded `text`: an area key or a region name, or None."""
    hits = [(m.start(), m.group()) for m in _REGION_NAME.finditer(text)]
    hits += [(m.start(), area) for area, m in p.regions.finditer(text)]
    return max(hits)[1] if hits else None


def region_in_area(hint: str, region: str) -> bool:
    """Whether catalog region `region` lies in `hint`: an area of the lexicon ('eu', 'us',
    'asia'), or a region name matching itself and its numbered zones ('eu-west' matches
    'eu-west-1')."""
    key = fold(hint).strip()
    name = fold(region).strip()
    entries = lexicon().region_areas.get(key)
    if entries is None:
        return name == key or (name.startswith(key) and _zone_boundary(key[-1], name[len(key)]))
    parts = [part.strip() for part in name.split(",")]
    return any(_entry_matches(entry, part) for entry in entries for part in parts)


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
