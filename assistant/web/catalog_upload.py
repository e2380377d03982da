"""A price file a user uploads in the Catalog tab: their own quotes, compared in that tab only.

The file is read as `gpu-advisor catalog import` reads one (`tools.catalog.store.import_catalog`):
our CSV or YAML layout, or SkyPilot's CSV layout (rows without a GPU skipped and counted); every
row is validated and one bad row refuses the whole file, naming the row, the field, the value
and what is valid. The file is never saved and never reaches another tab: its rows are laid over
the shared catalog by instance id (`Catalog.merged`), so a quote for an instance the catalog has
replaces its price in that tab. SkyPilot's layout carries no date: its rows are dated the day of
the upload. At most `MAX_CATALOG_UPLOAD_BYTES` (Gradio's upload cap) and `MAX_OWN_INSTANCES`
instance types, so a tab's prices stay small enough to keep beside the shared catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

from assistant.answers.literal import as_text
from assistant.web import cells
from assistant.web.ui_strings import ui_format
from tools.catalog.instances import Catalog
from tools.catalog.merge import Override, import_conflicts
from tools.catalog.store import import_catalog
from tools.errors import InvalidInputError

__all__ = [
    "MAX_CATALOG_UPLOAD_BYTES",
    "MAX_OWN_INSTANCES",
    "CatalogUpload",
    "CatalogUploadError",
    "catalog_upload_problem",
    "read_catalog_upload",
    "upload_summary",
]

MAX_CATALOG_UPLOAD_BYTES = 5_000_000  # Gradio's cap on any upload (blocks.common.UPLOAD_LIMIT)
MAX_OWN_INSTANCES = 2_000  # a provider's whole GPU price list is a few hundred instance types
SUFFIXES = (".csv", ".yaml", ".yml")
SHOWN_REPLACED = 5  # replaced rows listed by name; the rest are counted
Problem = Literal["wrong_type", "too_big", "unreadable", "invalid", "empty", "too_many"]
_PROBLEM_KEYS: dict[Problem, str] = {  # the interface string that words each problem
    "wrong_type": "catalog_upload_wrong_type",
    "too_big": "catalog_upload_too_big",
    "unreadable": "catalog_upload_unreadable",
    "invalid": "catalog_upload_invalid",
    "empty": "catalog_upload_empty",
    "too_many": "catalog_upload_too_many",
}


class CatalogUploadError(InvalidInputError):
    """A price file that cannot be used: which problem (`kind`) and its details."""

    def __init__(self, kind: Problem, name: str, valid: str, **details: str | int) -> None:
        self.kind = kind
        self.details = details
        super().__init__("catalog file", name, valid)


@dataclass(frozen=True)
class CatalogUpload:
    """A price file read and validated: its instance types, how many rows were read and
    skipped (with SkyPilot's reasons), and the shared rows its quotes replace."""

    file: str
    catalog: Catalog
    rows_read: int
    skipped: int
    replaced: tuple[Override, ...]


def read_catalog_upload(path: Path, shared: Catalog, today: date) -> CatalogUpload:
    """Read the uploaded file at `path` (its name as the user's file named it) against the
    `shared` catalog it will be laid over."""
    name = path.name
    if path.suffix.lower() not in SUFFIXES:
        raise CatalogUploadError("wrong_type", name, "a .csv, .yaml or .yml price file")
    try:
        size = path.stat().st_size
    except OSError:
        raise CatalogUploadError("unreadable", name, "a readable uploaded file") from None
    if size > MAX_CATALOG_UPLOAD_BYTES:
        raise CatalogUploadError(
            "too_big", name, f"at most {MAX_CATALOG_UPLOAD_BYTES:,} bytes", size=size
        )
    try:
        result = import_catalog(path, None, today, as_of=today)
    except InvalidInputError as exc:
        raise CatalogUploadError("invalid", name, exc.valid, detail=str(exc)) from None
    except (OSError, UnicodeDecodeError):
        raise CatalogUploadError("unreadable", name, "a UTF-8 text file") from None
    found = len(result.catalog)
    if not found:
        raise CatalogUploadError(
            "empty", name, "at least one GPU instance type", skipped=result.skipped_total
        )
    if found > MAX_OWN_INSTANCES:
        raise CatalogUploadError(
            "too_many", name, f"at most {MAX_OWN_INSTANCES:,} instance types", count=found
        )
    replaced = tuple(import_conflicts(result.catalog, shared))
    return CatalogUpload(name, result.catalog, result.rows_read, result.skipped_total, replaced)


def _replaced_line(replaced: Sequence[Override], lang: str) -> str:
    """'a: $2.49 → $1.90; b: ...; +3' for the shared rows the file's quotes replace."""
    shown = [
        f"{as_text(o.instance_id)} {cells.money(o.current.price_per_hour, lang)}"
        f" → {cells.money(o.new.price_per_hour, lang)}"
        for o in replaced[:SHOWN_REPLACED]
    ]
    more = len(replaced) - SHOWN_REPLACED
    return "; ".join(shown) + (f"; +{cells.count(more, lang)}" if more > 0 else "")


def upload_summary(upload: CatalogUpload, lang: str) -> str:
    """What the file added, in `lang` (the file's name shown as text, never markup)."""
    text = ui_format(
        lang,
        "catalog_upload_done",
        file=as_text(upload.file),
        count=cells.count(len(upload.catalog), lang),
        rows=cells.count(upload.rows_read, lang),
        skipped=cells.count(upload.skipped, lang),
        replaced=cells.count(len(upload.replaced), lang),
    )
    if upload.replaced:
        text += " " + ui_format(
            lang, "catalog_upload_replaced", rows=_replaced_line(upload.replaced, lang)
        )
    return text


def catalog_upload_problem(error: CatalogUploadError, lang: str) -> str:
    """One line in `lang`: the file was not used, why, and what a valid price file is (for a
    toast, which shows it as text)."""
    details = {key: str(value) for key, value in error.details.items()}
    if error.kind == "too_big":
        details["size"] = cells.count(int(error.details["size"]), lang)
    for key in ("count", "skipped"):
        if key in error.details:
            details[key] = cells.count(int(error.details[key]), lang)
    problem = ui_format(lang, _PROBLEM_KEYS[error.kind], **details)
    return ui_format(
        lang,
        "catalog_upload_failed",
        file=str(error.value),
        problem=problem,
        limit=cells.count(MAX_CATALOG_UPLOAD_BYTES, lang),
        most=cells.count(MAX_OWN_INSTANCES, lang),
    )
