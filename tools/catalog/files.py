"""Read and write catalogs in our own formats (YAML and CSV with `Instance` field names).

Reading is all-or-nothing: the first bad row fails the whole file with its row number, the field,
the value given and what is valid. Files are read through `tools.catalog.bounds` (regular files
only, size caps checked first, bounded YAML); CSV is streamed row by row, so a large catalog costs
its rows, not its text. Writing is atomic (temp file in the same folder + os.replace), so a reader
never sees half a file and a failed write leaves the old file in place.

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
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import IO, Any

import yaml
from pydantic import ValidationError

from tools.catalog.bounds import (
    MAX_CSV_BYTES,
    MAX_ROWS,
    MAX_YAML_BYTES,
    CatalogFileError,
    load_yaml,
    open_bounded,
    read_bounded_text,
)
from tools.catalog.instances import Catalog, Instance
from tools.catalog.providers import provider_terms
from tools.errors import InvalidInputError
from tools.files import write_atomic

_BUILTIN_FOLDER = "data/catalog"  # inside the `tools` package
CATALOG_SUFFIXES = (".yaml", ".yml", ".csv")
_FIELDS = tuple(Instance.model_fields)

__all__ = ["CATALOG_SUFFIXES", "CatalogFileError"]


def row_error(source: str, row: int, exc: ValidationError | InvalidInputError) -> CatalogFileError:
    """One clear error for row `row` (1-based) of `source`, naming the first bad field."""
    if isinstance(exc, InvalidInputError):
        return CatalogFileError(f"{source} row {row}: {exc.field}", exc.value, exc.valid)
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "row"
    message = str(first["msg"]).removeprefix("Value error, ")
    valid = f"{message} ({_allowed(field)})" if _allowed(field) else message
    value = "(missing)" if first["type"] == "missing" else first.get("input")
    return CatalogFileError(f"{source} row {row}: field {field}", value, valid)


def _allowed(field: str) -> str:
    """A reminder of what a field takes, from its description in the Instance schema."""
    info = Instance.model_fields.get(field)
    return info.description or "" if info is not None else ""


def instances_from_rows(
    rows: Iterable[Mapping[str, Any]],
    source: str,
    defaults: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Catalog:
    """Validate every row (merged over `defaults`, under `overrides`) into a catalog; the first
    bad row fails all."""
    items: list[Instance] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows, start=1):
        if number > MAX_ROWS:
            raise CatalogFileError(f"{source} rows", f"more than {MAX_ROWS:,}", "a smaller file")
        if not isinstance(row, Mapping):
            raise CatalogFileError(f"{source} row {number}", row, "a mapping of Instance fields")
        try:
            item = Instance.model_validate(
                {**_with_defaults(row, defaults or {}), **(overrides or {})}
            )
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
    data = load_yaml(text, source)
    if data is None:
        return Catalog()
    if isinstance(data, list):
        return instances_from_rows(data, source)
    if not isinstance(data, dict) or not isinstance(data.get("instances", []), list):
        raise CatalogFileError(source, type(data).__name__, "a list of rows or {instances: [...]}")
    if not isinstance(data.get("defaults") or {}, dict):
        raise CatalogFileError(f"{source} defaults", data.get("defaults"), "a mapping of fields")
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
    return parse_csv_stream(io.StringIO(text, newline=""), source)


def parse_csv_stream(
    handle: IO[str], source: str, overrides: Mapping[str, Any] | None = None
) -> Catalog:
    """A catalog from a CSV stream whose header names Instance fields, read row by row;
    `overrides` replace those fields in every row."""
    return instances_from_rows(csv_rows(handle, source), source, overrides=overrides)


def csv_rows(handle: IO[str], source: str) -> Iterator[dict[str, Any]]:
    """The rows of one of our CSV files as field -> value (empty cells left out)."""
    reader = csv.DictReader(handle)
    unknown = [name for name in reader.fieldnames or [] if name not in Instance.model_fields]
    if unknown:
        valid = ", ".join(Instance.model_fields)
        raise CatalogFileError(f"{source} header", unknown, f"Instance field names: {valid}")
    for row in reader:
        if None in row:  # more cells than the header names
            raise CatalogFileError(
                f"{source} line {reader.line_num}",
                row[None],
                f"{len(reader.fieldnames or [])} cells",
            )
        yield {key: _csv_cell(key, val.strip()) for key, val in row.items() if val and val.strip()}


def read_catalog_file(path: Path, overrides: Mapping[str, Any] | None = None) -> Catalog:
    """Our YAML (.yaml/.yml) or CSV (.csv) catalog file (bounded: see tools.catalog.bounds);
    `overrides` replace those fields in every row (e.g. origin='import' for a user's file)."""
    suffix = path.suffix.lower()
    if suffix not in CATALOG_SUFFIXES:
        raise CatalogFileError("catalog file", str(path), f"a file ending in {CATALOG_SUFFIXES}")
    if suffix == ".csv":
        with open_bounded(path, MAX_CSV_BYTES) as handle:
            return parse_csv_stream(handle, path.name, overrides)
    catalog = parse_yaml_text(read_bounded_text(path, MAX_YAML_BYTES), path.name)
    if not overrides:
        return catalog
    return Catalog(item.model_copy(update=dict(overrides)) for item in catalog)


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


def write_catalog_csv(catalog: Iterable[Instance], path: Path) -> Path:
    """Write every field of every row to `path` as our CSV, streamed and atomic; returns `path`.
    Lists (regions) are joined with ';', None is an empty cell."""

    def write(handle: IO[bytes]) -> None:
        text = io.TextIOWrapper(handle, encoding="utf-8", newline="", write_through=True)
        writer = csv.writer(text)
        writer.writerow(_FIELDS)
        for item in catalog:
            data = item.model_dump(mode="json")
            writer.writerow([_csv_text(data[name]) for name in _FIELDS])
        text.flush()
        text.detach()

    return write_atomic(path, write)


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    return str(value)


def read_catalog_files(
    paths: Sequence[Path | str], overrides: Mapping[str, Any] | None = None
) -> Catalog:
    """Our own YAML/CSV catalog files, merged in order (later files replace same ids)."""
    catalog = Catalog()
    for path in paths:
        catalog = catalog.merged(read_catalog_file(Path(path), overrides))
    return catalog


@cache
def builtin_catalog() -> Catalog:
    """The curated catalog shipped in tools/data/catalog/ (read once)."""
    return read_builtin_catalog()
