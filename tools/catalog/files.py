"""Read and write catalogs in our own formats (YAML and CSV with `Instance` field names).

Reading is all-or-nothing: the first bad row fails the whole file with its row number, the field,
the value given and what is valid. Writing is atomic (temp file in the same folder + os.replace),
so a reader never sees half a file and a failed write leaves the old file in place.

YAML layout (the curated files under tools/data/catalog/ use it):

    provider: aws                 # optional; default for every row
    defaults: {billing_granularity: second, ...}   # optional; merged under every row
    instances:
      - {instance_type: p5.48xlarge, gpu: H100-SXM, gpu_count: 8, ...}

A bare list of rows is accepted too. CSV: one row per instance, header = field names, `regions`
separated by ';', empty cells = not given.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from tools.catalog.instances import Catalog, Instance
from tools.catalog.providers import provider_terms
from tools.errors import InvalidInputError
from tools.files import write_atomic

_BUILTIN_FOLDER = "data/catalog"  # inside the `tools` package
CATALOG_SUFFIXES = (".yaml", ".yml", ".csv")


class CatalogFileError(InvalidInputError):
    """A catalog file (or one row of it) is not valid; nothing from the file was used."""


def row_error(source: str, row: int, exc: ValidationError | InvalidInputError) -> CatalogFileError:
    """One clear error for row `row` (1-based) of `source`, naming the first bad field."""
    if isinstance(exc, InvalidInputError):
        return CatalogFileError(f"{source} row {row}: {exc.field}", exc.value, exc.valid)
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "row"
    valid = f"{first['msg']} ({_allowed(field)})" if _allowed(field) else first["msg"]
    value = "(missing)" if first["type"] == "missing" else first.get("input")
    return CatalogFileError(f"{source} row {row}: field {field}", value, valid)


def _allowed(field: str) -> str:
    """A reminder of what a field takes, from its description in the Instance schema."""
    info = Instance.model_fields.get(field)
    return info.description or "" if info is not None else ""


def instances_from_rows(
    rows: Iterable[Mapping[str, Any]], source: str, defaults: Mapping[str, Any] | None = None
) -> Catalog:
    """Validate every row (merged over `defaults`) into a catalog; the first bad row fails all."""
    items: list[Instance] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, Mapping):
            raise CatalogFileError(f"{source} row {number}", row, "a mapping of Instance fields")
        try:
            item = Instance.model_validate(_with_defaults(row, defaults or {}))
        except ValidationError as exc:
            raise row_error(source, number, exc) from None
        if item.id in seen:
            raise CatalogFileError(
                f"{source} row {number}: field id", item.id, f"unique ids (row {seen[item.id]})"
            )
        seen[item.id] = number
        items.append(item)
    return Catalog(items)


def _with_defaults(row: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Row fields over file defaults over the provider's recorded billing terms."""
    provider = row.get("provider") or defaults.get("provider")
    terms = provider_terms(provider) if isinstance(provider, str) else None
    base = terms.row_defaults() if terms is not None else {}
    return {**base, **defaults, **row}


def parse_yaml_text(text: str, source: str) -> Catalog:
    """A catalog from YAML text in the layout described in this module's docstring."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CatalogFileError(f"{source}", "unparseable YAML", f"valid YAML ({exc})") from None
    if data is None:
        return Catalog()
    if isinstance(data, list):
        return instances_from_rows(data, source)
    if not isinstance(data, dict) or not isinstance(data.get("instances", []), list):
        raise CatalogFileError(source, type(data).__name__, "a list of rows or {instances: [...]}")
    defaults = dict(data.get("defaults") or {})
    if "provider" in data:
        defaults.setdefault("provider", data["provider"])
    return instances_from_rows(data.get("instances") or [], source, defaults)


def _csv_cell(field: str, value: str) -> Any:
    if field == "regions":
        return [part.strip() for part in value.split(";") if part.strip()]
    return value


def parse_csv_text(text: str, source: str) -> Catalog:
    """A catalog from CSV text whose header names Instance fields."""
    reader = csv.DictReader(text.splitlines())
    unknown = [name for name in reader.fieldnames or [] if name not in Instance.model_fields]
    if unknown:
        valid = ", ".join(Instance.model_fields)
        raise CatalogFileError(f"{source} header", unknown, f"Instance field names: {valid}")
    rows = (
        {key: _csv_cell(key, val.strip()) for key, val in row.items() if val and val.strip()}
        for row in reader
    )
    return instances_from_rows(rows, source)


def read_catalog_file(path: Path) -> Catalog:
    """Our YAML (.yaml/.yml) or CSV (.csv) catalog file."""
    suffix = path.suffix.lower()
    if suffix not in CATALOG_SUFFIXES:
        raise CatalogFileError("catalog file", str(path), f"a file ending in {CATALOG_SUFFIXES}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogFileError("catalog file", str(path), f"a readable file ({exc})") from None
    if suffix == ".csv":
        return parse_csv_text(text, path.name)
    return parse_yaml_text(text, path.name)


def read_builtin_catalog() -> Catalog:
    """Every curated provider file under tools/data/catalog/, in file-name order."""
    folder = resources.files("tools").joinpath(_BUILTIN_FOLDER)
    catalog = Catalog()
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yaml", ".yml")):
            catalog = catalog.merged(parse_yaml_text(entry.read_text(encoding="utf-8"), entry.name))
    return catalog


def catalog_to_yaml(catalog: Catalog) -> str:
    """Normalised YAML: every field of every row written out, dates as ISO strings."""
    rows = [item.model_dump(mode="json") for item in catalog]
    return yaml.safe_dump({"instances": rows}, sort_keys=False, allow_unicode=True)


def write_catalog_yaml(catalog: Catalog, path: Path) -> Path:
    """Write `catalog` to `path` atomically; returns `path`."""
    return write_atomic(path, catalog_to_yaml(catalog))


def read_catalog_files(paths: Sequence[Path | str]) -> Catalog:
    """Our own YAML/CSV catalog files, merged in order (later files replace same ids)."""
    catalog = Catalog()
    for path in paths:
        catalog = catalog.merged(read_catalog_file(Path(path)))
    return catalog


@cache
def builtin_catalog() -> Catalog:
    """The curated catalog shipped in tools/data/catalog/ (read once)."""
    return read_builtin_catalog()
