"""Region hints: an area ("in Europe" -> "eu", "in de VS" -> "us", "Asya'da" -> "asia") or a
cloud region name as written ("eu-west", "us-east-1", "westeurope"). Whether a catalog region
lies in a hint is the catalog's to say (`tools.catalog.regions.region_matches`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

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
