"""How refreshed prices are laid over the curated catalog, and what a user's import overrides.

Layers, lowest first (`tools.catalog.store.load_catalog`): the curated built-in catalog, then each
refreshed provider snapshot (oldest download first), then the user's saved imports, then the files
in Settings.catalog_paths. The rules:

1. Same instance type and region: a fresh row replaces every older row of the same provider and
   instance type in the regions it lists. An older row keeps the regions the fresh rows do not
   list (renamed '<id>@<region>' if the fresh rows took its id); an older row with no regions
   left is dropped, and rows that state no region cover every region.
2. Same provider, other names: an older curated row of a provider that a fresh snapshot covers,
   whose instance type the snapshot does not list, is dropped when the snapshot sells the same
   GPU in the same count (marketplace SKUs are named differently by every catalog: the curated
   'runpod/community-h100-pcie-1x' is gpuhunt's 'NVIDIA H100 PCIe' x1); otherwise it stays.
3. Providers no fresh snapshot covers keep their curated rows as they are.
4. The user's imports and files come last and replace rows by id: they are the user's own, a
   refresh never writes or shadows them, and `import_conflicts` lists what an import would
   override so that the import can ask for consent (`catalog import --replace`).

"Older" compares `fetched_at` (a refresh's download time), else the start of `as_of` (UTC).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time

from tools.catalog.instances import Catalog, Instance


def price_time(item: Instance) -> datetime:
    """When a row's price was read: the download time, else midnight UTC of `as_of`."""
    return item.fetched_at or datetime.combine(item.as_of, time(), tzinfo=UTC)


@dataclass(frozen=True)
class OverlayCount:
    """What laying one snapshot over a catalog did to the older rows."""

    replaced: int = 0  # older rows dropped: every region taken by fresh rows (rule 1)
    narrowed: int = 0  # older rows kept for the regions the fresh rows do not list (rule 1)
    superseded: int = 0  # older curated rows of a covered provider with the same GPUs (rule 2)


def overlay_fresh(base: Catalog, fresh: Catalog) -> tuple[Catalog, OverlayCount]:
    """`base` with `fresh` laid over it by the rules in this module's docstring."""
    if not len(fresh):
        return base, OverlayCount()
    regions: dict[tuple[str, str], set[str]] = defaultdict(set)
    shapes: set[tuple[str, str, int]] = set()
    newest: dict[str, datetime] = {}
    for item in fresh:
        regions[(item.provider, item.instance_type)].update(r.lower() for r in item.regions)
        shapes.add((item.provider, item.gpu, item.gpu_count))
        stamp = price_time(item)
        newest[item.provider] = max(newest.get(item.provider, stamp), stamp)
    fresh_ids = {item.id for item in fresh}
    kept: list[Instance] = []
    replaced = narrowed = superseded = 0
    for item in base:
        when = newest.get(item.provider)
        if when is None or price_time(item) > when:
            kept.append(item)
            continue
        covered = regions.get((item.provider, item.instance_type))
        if covered is None:
            if item.origin == "curated" and (item.provider, item.gpu, item.gpu_count) in shapes:
                superseded += 1
            else:
                kept.append(item)
            continue
        left = [r for r in item.regions if r.lower() not in covered]
        if not covered or not left:  # fresh rows stating no region cover them all
            replaced += 1
            continue
        if len(left) == len(item.regions) and item.id not in fresh_ids:
            kept.append(item)
            continue
        narrowed += 1
        new_id = item.id if item.id not in fresh_ids else f"{item.id}@{left[0]}"
        kept.append(item.model_copy(update={"regions": left, "id": new_id}))
    merged = Catalog(_unique([*kept, *fresh]))
    return merged, OverlayCount(replaced, narrowed, superseded)


def _unique(items: Iterable[Instance]) -> list[Instance]:
    """Later rows win an id (a renamed older row can only collide with another renamed one)."""
    by_id: dict[str, Instance] = {}
    for item in items:
        by_id.pop(item.id, None)
        by_id[item.id] = item
    return list(by_id.values())


@dataclass(frozen=True)
class Override:
    """A row an import replaces: a newer price over an older one goes ahead (and is reported),
    an older price over a newer one needs consent (`needs_consent`)."""

    instance_id: str
    current: Instance
    new: Instance

    @property
    def needs_consent(self) -> bool:
        """The import's price is older than the row it would replace."""
        return price_time(self.current) > price_time(self.new)

    @property
    def reason(self) -> str:
        was, now = self.current, self.new
        kind = "built-in" if was.origin == "curated" else was.origin
        return (
            f"{self.instance_id}: {kind} ${was.price_per_hour:g}/h as of {was.as_of.isoformat()}"
            f" -> ${now.price_per_hour:g}/h as of {now.as_of.isoformat()}"
        )


def import_conflicts(imported: Catalog, current: Catalog) -> list[Override]:
    """Rows of `imported` that replace a row of `current` (same instance id), newer or older."""
    found: list[Override] = []
    for item in imported:
        try:
            old = current.get(item.id)
        except LookupError:
            continue
        if old.id == item.id:
            found.append(Override(item.id, old, item))
    return found


def describe_overrides(overrides: Sequence[Override], limit: int = 5, kind: str = "") -> str:
    """'3 older rows: a (...); b (...); and 1 more' (`kind`: a word before 'rows')."""
    shown = "; ".join(o.reason for o in overrides[:limit])
    more = f"; and {len(overrides) - limit} more" if len(overrides) > limit else ""
    noun = f"{kind} row" if kind else "row"
    return f"{len(overrides)} {noun}{'s' if len(overrides) != 1 else ''}: {shown}{more}"
