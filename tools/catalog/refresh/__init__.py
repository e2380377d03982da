"""Live prices: refresh provider catalogs from gpuhunt's and SkyPilot's hosted catalogs.

`refresh_catalogs(data_dir, config, providers=..., source=..., on_progress=...)` is the one entry
point (the CLI's `catalog refresh` and the app's Catalog tab call it); it returns a typed
`RefreshReport`. `refresh_older_than(data_dir, config, hours)` refreshes only what is older than
that (the app's background thread, with Settings.catalog_refresh_hours). `plan_refresh` says
what would be refreshed, `due_for_refresh` what is due, `load_refreshed` reads the snapshots back.
Modules: `models` (config, events, report), `http` (one download), `gpuhunt_source` and
`skypilot_source` (the two layouts), `parsed` (checks against the last good copy), `state`
(snapshots and state file), `engine` (the loop over providers).
"""

from tools.catalog.refresh.engine import (
    due_for_refresh,
    load_refreshed,
    plan_refresh,
    refresh_catalogs,
    refresh_older_than,
)
from tools.catalog.refresh.models import (
    DEFAULT_TTL_HOURS,
    ProviderPlan,
    ProviderResult,
    RefreshConfig,
    RefreshEvent,
    RefreshReport,
)
from tools.catalog.refresh.state import RefreshBusyError

__all__ = [
    "DEFAULT_TTL_HOURS",
    "ProviderPlan",
    "ProviderResult",
    "RefreshBusyError",
    "RefreshConfig",
    "RefreshEvent",
    "RefreshReport",
    "due_for_refresh",
    "load_refreshed",
    "plan_refresh",
    "refresh_catalogs",
    "refresh_older_than",
]
