"""The app's background price refresh (`Settings.catalog_refresh_hours`).

A daemon thread runs `refresh_older_than` at start and then every `check_every_s` (the refresh
interval, at most one hour): only providers whose copy was last checked more than `hours` ago
are downloaded, each with the engine's timeouts, retries and last-good-copy rule. After a run in
which a provider's prices changed, `on_updated()` is called so the app loads the catalog again
(rankings already running keep the catalog they started with). A run that fails as a whole
(another refresh holds the data folder, an unexpected error) is logged in one line and tried
again at the next check; it never stops the app. It runs unless the setting is 0 (24 hours by
default).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from tools.catalog.refresh.engine import refresh_older_than
from tools.catalog.refresh.models import RefreshConfig, RefreshReport
from tools.errors import InvalidInputError

__all__ = ["MAX_CHECK_INTERVAL_S", "BackgroundRefresh"]

log = logging.getLogger(__name__)

MAX_CHECK_INTERVAL_S = 3600.0  # a due provider waits at most an hour past its age limit

Refresh = Callable[[Path, RefreshConfig | None, float], RefreshReport]


def _default_refresh(data_dir: Path, config: RefreshConfig | None, hours: float) -> RefreshReport:
    return refresh_older_than(data_dir, config, hours)


class BackgroundRefresh:
    """Refreshes prices older than `hours` in the background and reports updates."""

    def __init__(
        self,
        data_dir: Path,
        config: RefreshConfig | None,
        hours: float,
        on_updated: Callable[[], None],
        *,
        refresh: Refresh = _default_refresh,
        check_every_s: float | None = None,
    ) -> None:
        if not hours > 0:
            raise InvalidInputError("catalog_refresh_hours", hours, "a number of hours > 0")
        self.data_dir, self.config, self.hours = data_dir, config, hours
        self.on_updated = on_updated
        self._refresh = refresh
        self.check_every_s = check_every_s or min(hours * 3600.0, MAX_CHECK_INTERVAL_S)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs = 0  # completed checks, failed ones included

    def run_once(self) -> RefreshReport | None:
        """One check: the report, or None when the run failed as a whole (logged)."""
        try:
            report = self._refresh(self.data_dir, self.config, self.hours)
        except Exception as exc:  # the app keeps its last good catalog whatever happens here
            log.warning("background price refresh failed: %s", type(exc).__name__)
            return None
        finally:
            self.runs += 1
        for result in report.failed:
            log.warning("background price refresh: %s failed", result.provider)
        if any(result.status == "updated" for result in report.results):
            self.on_updated()
        return report

    def start(self) -> None:
        """Start the daemon thread (once)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="price-refresh", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Ask the thread to stop and wait up to `timeout_s` for it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.run_once()
            self._stop.wait(self.check_every_s)
