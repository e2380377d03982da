"""Where catalogs live: the built-in one, refreshed snapshots under `<data_dir>/prices/`, imports
saved under `<data_dir>/catalogs/`, extra files.

`import_catalog` validates a whole source (SkyPilot CSVs, our CSV or YAML) before anything is
written; `save_import` then writes it atomically as our CSV (streamed), one file per imported
source, so re-importing the same source replaces its file (an older `.yaml` save of the same name
is removed). `load_catalog` lays the refreshed snapshots over the built-in catalog by the rules of
`tools.catalog.merge`, then every saved import (file-name order) and any extra files, later rows
replacing same ids. `import_overrides` lists what an import would replace (older prices over
newer ones need the --replace consent).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Literal

from tools.catalog.bounds import MAX_CSV_BYTES, MAX_YAML_BYTES, open_bounded, read_bounded_text
from tools.catalog.files import (
    CatalogFileError,
    builtin_catalog,
    parse_csv_stream,
    parse_yaml_text,
    read_catalog_files,
    write_catalog_csv,
)
from tools.catalog.instances import Catalog
from tools.catalog.merge import Override, import_conflicts, overlay_fresh
from tools.catalog.skypilot import ImportResult, import_skypilot
from tools.errors import InvalidInputError

IMPORTED = {"origin": "import", "fetched_at": None}  # what every row of a user's file is

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
    with open_bounded(path, MAX_CSV_BYTES) as handle:
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
        result = import_skypilot(path, as_of=min(as_of or _modified(path), today))
        return ImportResult(_as_imported(result.catalog), result.rows_read, result.skipped)
    if path.is_dir():
        raise CatalogFileError("path", str(path), f"a single .{chosen} file for --format {chosen}")
    if chosen == "csv":
        with open_bounded(path, MAX_CSV_BYTES) as handle:
            catalog = parse_csv_stream(handle, path.name, IMPORTED)
    else:
        catalog = _as_imported(parse_yaml_text(read_bounded_text(path, MAX_YAML_BYTES), path.name))
    return ImportResult(catalog, rows_read=len(catalog))


def _as_imported(catalog: Catalog) -> Catalog:
    return Catalog(item.model_copy(update=IMPORTED) for item in catalog)


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
    """Write `catalog` to `<data_dir>/catalogs/<name>.csv` atomically; returns the path."""
    if not len(catalog):
        raise CatalogFileError("import", name, "a source with at least one usable GPU instance")
    folder = user_catalog_dir(data_dir)
    saved = write_catalog_csv(catalog, folder / f"{name}.csv")
    (folder / f"{name}.yaml").unlink(missing_ok=True)  # the format saves were written in before
    return saved


def saved_imports(data_dir: Path) -> list[Path]:
    """Saved import files (.csv, and .yaml from before), in the order they are merged."""
    folder = user_catalog_dir(data_dir)
    if not folder.is_dir():
        return []
    return sorted([*folder.glob("*.csv"), *folder.glob("*.yaml")], key=lambda p: p.name)


def import_overrides(
    catalog: Catalog, data_dir: Path, name: str, extra_paths: Sequence[Path] = ()
) -> list[Override]:
    """Rows of `catalog` (to be saved as import `name`) that would replace a row of the catalog
    as it is now (the import's own earlier save aside), newer or older."""
    current = load_catalog(data_dir, extra_paths, skip_import=name)
    return import_conflicts(catalog, current)


def load_catalog_leniently(
    data_dir: Path | None = None, extra_paths: Sequence[Path] = ()
) -> tuple[Catalog, list[str]]:
    """`load_catalog` for a long-running app: a saved import or extra file that cannot be read
    is left out, and each refusal is one line naming the file and, from its reader, the row
    and field; every other file is used as `load_catalog` uses it."""
    catalog = load_catalog(data_dir, (), skip_imports=frozenset(_imports(data_dir)))
    refused: list[str] = []
    for path in [*_imports(data_dir), *extra_paths]:
        try:
            catalog = catalog.merged(read_catalog_files([path], IMPORTED))
        except (InvalidInputError, OSError) as exc:
            refused.append(f"{path}: {exc}")
    return catalog, refused


def _imports(data_dir: Path | None) -> list[Path]:
    return saved_imports(data_dir) if data_dir is not None else []


def load_catalog(
    data_dir: Path | None = None,
    extra_paths: Sequence[Path] = (),
    *,
    skip_import: str = "",
    skip_imports: frozenset[Path] = frozenset(),
) -> Catalog:
    """Built-in catalog, refreshed snapshots over it (tools.catalog.merge), then saved imports,
    then `extra_paths`; imports and extra files replace same ids. skip_import: leave out the saved
    import of that name (skip_imports: those files)."""
    from tools.catalog.refresh.engine import load_refreshed

    catalog = builtin_catalog()
    imports: list[Path] = []
    if data_dir is not None:
        for snapshot in load_refreshed(data_dir):
            catalog, _ = overlay_fresh(catalog, snapshot)
        imports = [
            p for p in saved_imports(data_dir) if p.stem != skip_import and p not in skip_imports
        ]
    paths = [*imports, *extra_paths]
    return catalog.merged(read_catalog_files(paths, IMPORTED)) if paths else catalog
