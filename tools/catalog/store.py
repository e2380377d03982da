"""Where catalogs live: the built-in one, imports saved under `<data_dir>/catalogs/`, extra files.

`import_catalog` validates a whole source (SkyPilot CSVs, our CSV or YAML) before anything is
written; `save_import` then writes it atomically as normalised YAML, one file per imported source,
so re-importing the same source replaces its file. `load_catalog` merges the built-in catalog with
every saved import (file-name order) and any extra files, later rows replacing same ids.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Literal

from tools.catalog.files import (
    CatalogFileError,
    builtin_catalog,
    parse_csv_text,
    parse_yaml_text,
    read_catalog_files,
    write_catalog_yaml,
)
from tools.catalog.instances import Catalog
from tools.catalog.skypilot import ImportResult, import_skypilot

ImportFormat = Literal["skypilot", "csv", "yaml"]
IMPORT_FORMATS: tuple[ImportFormat, ...] = ("skypilot", "csv", "yaml")
CATALOGS_SUBDIR = "catalogs"


def user_catalog_dir(data_dir: Path) -> Path:
    """The folder holding saved imports."""
    return data_dir / CATALOGS_SUBDIR


def detect_format(path: Path) -> ImportFormat:
    """skypilot for a folder or a CSV with SkyPilot's columns, yaml for .yaml/.yml, else csv."""
    if path.is_dir():
        return "skypilot"
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix != ".csv":
        raise CatalogFileError("format", str(path), "a folder, a .csv or a .yaml/.yml file")
    with path.open(newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle), [])
    return "skypilot" if {"InstanceType", "AcceleratorName"} <= set(header) else "csv"


def import_catalog(
    path: Path, fmt: ImportFormat | None, today: date, as_of: date | None = None
) -> ImportResult:
    """Read and validate everything at `path` (all-or-nothing). SkyPilot rows carry no date: their
    as_of is `as_of` if given, else the newest modification date of the files read (the download
    date for ~/.sky/catalogs), never later than `today`."""
    if not path.exists():
        raise CatalogFileError("path", str(path), "an existing file or folder")
    chosen = fmt or detect_format(path)
    if chosen == "skypilot":
        return import_skypilot(path, as_of=min(as_of or _modified(path), today))
    if path.is_dir():
        raise CatalogFileError("path", str(path), f"a single .{chosen} file for --format {chosen}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogFileError("path", str(path), f"a readable text file ({exc})") from None
    parse = parse_csv_text if chosen == "csv" else parse_yaml_text
    catalog = parse(text, path.name)
    return ImportResult(catalog, rows_read=len(catalog))


def _modified(path: Path) -> date:
    files = [path] if path.is_file() else list(path.rglob("*.csv"))
    newest = max((f.stat().st_mtime for f in files), default=path.stat().st_mtime)
    return date.fromtimestamp(newest)


def import_name(path: Path, fmt: ImportFormat) -> str:
    """File name (without .yaml) a source is saved under: 'skypilot-aws', 'yaml-my-prices'."""
    stem = path.parent.name if path.name == "vms.csv" else (path.stem or path.name)
    slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") or "catalog"
    return f"{fmt}-{slug}"


def save_import(catalog: Catalog, data_dir: Path, name: str) -> Path:
    """Write `catalog` to `<data_dir>/catalogs/<name>.yaml` atomically; returns the path."""
    if not catalog.instances:
        raise CatalogFileError("import", name, "a source with at least one usable GPU instance")
    return write_catalog_yaml(catalog, user_catalog_dir(data_dir) / f"{name}.yaml")


def saved_imports(data_dir: Path) -> list[Path]:
    """Saved import files, in the order they are merged."""
    folder = user_catalog_dir(data_dir)
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def load_catalog(data_dir: Path | None = None, extra_paths: Sequence[Path] = ()) -> Catalog:
    """Built-in catalog, then saved imports, then `extra_paths`; later rows replace same ids."""
    catalog = builtin_catalog()
    paths = [*(saved_imports(data_dir) if data_dir is not None else []), *extra_paths]
    return catalog.merged(read_catalog_files(paths)) if paths else catalog
