"""Cloud GPU instances: the typed catalog, provider billing terms, catalog files and imports.

`instances` defines `Instance` and the immutable `Catalog` (with the plausibility bounds of a
row), `providers` the billing terms of each provider, `regions` which catalog regions lie in an
area, `bounds` what a catalog file may be (regular, size-capped, bounded YAML), `files` our own
YAML/CSV catalog format (streamed, atomic writes) and the built-in catalog, `skypilot_rows` and
`skypilot` the SkyPilot importer, `refresh/` live prices from gpuhunt's and SkyPilot's hosted
catalogs, `merge` how refreshed and imported rows lie over the curated ones, `freshness` the age
of every price, and `store` the merged catalog a session ranks (built-in + refreshed snapshots +
saved imports + extra files).
"""

from tools.catalog.files import builtin_catalog, read_catalog_files
from tools.catalog.instances import Catalog, Instance
from tools.catalog.regions import is_area, matching_regions, region_matches
from tools.catalog.store import import_catalog, load_catalog, save_import

__all__ = [
    "Catalog",
    "Instance",
    "builtin_catalog",
    "import_catalog",
    "is_area",
    "load_catalog",
    "matching_regions",
    "read_catalog_files",
    "region_matches",
    "save_import",
]
