"""Where a job may run: the providers a message wants or excludes (`read_providers`), and
region hints (`find_region`): an area ("in Europe" -> "eu", "in de VS" -> "us", "Asya'da" ->
"asia") or a cloud region name as written ("eu-west", "us-east-1", "westeurope"). Whether a
catalog region lies in a hint is the catalog's to say (`tools.catalog.regions.region_matches`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tools.catalog.providers import known_providers

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


def read_providers(p: Patterns, text: str, slots: dict[str, Any]) -> None:
    """The providers folded `text` wants (or, when it only excludes some, all the others)."""
    wanted: list[str] = []
    unwanted: list[str] = []
    previous: tuple[bool, int] | None = None  # (set aside, end) of the last provider
    for key, match in p.providers.finditer(text):
        negated = p.set_aside(text, match)
        joined = previous is not None and p.conjunction.fullmatch(text, previous[1], match.start())
        if previous is not None and previous[0] and joined:
            negated = True  # "not AWS or GCP": both excluded
        (unwanted if negated else wanted).append(key)
        previous = (negated, match.end())
    if wanted:
        slots["providers"] = list(dict.fromkeys(wanted))
    elif unwanted:
        slots["providers"] = [key for key in known_providers() if key not in unwanted]
