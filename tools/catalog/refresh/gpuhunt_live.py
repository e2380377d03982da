"""gpuhunt's online providers: live marketplace queries, made only for a provider a user names.

gpuhunt has no offline catalog for its online providers (Vast.ai, DigitalOcean, Crusoe, ...):
`gpuhunt.Catalog` asks their APIs at query time, most with the user's own credentials
(`<Provider>.from_env()`, e.g. DIGITAL_OCEAN_API_KEY). A refresh never calls them by default;
`catalog refresh --providers digitalocean` (or `--source gpuhunt --providers vast`, where SkyPilot's
hosted catalog would otherwise serve Vast.ai) does, through `Catalog(auto_reload=False)` with that
one provider added, in a worker thread bounded by the refresh's timeout. The offers are paired
and tiered like the offline catalogs' (`gpuhunt_source.add_offer`).
"""

from __future__ import annotations

import importlib
import threading
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from tools.catalog.refresh.gpuhunt_source import OURS, add_offer, catalog_from_offers
from tools.catalog.refresh.http import FetchError
from tools.catalog.refresh.models import ProviderPlan
from tools.catalog.refresh.parsed import Parsed, unknown_gpus

LIVE_OURS = {**OURS, "vastai": "vast"}


def live_providers() -> dict[str, str]:
    """Our provider key -> gpuhunt's name, for every gpuhunt online provider."""
    from gpuhunt._internal.catalog import ONLINE_PROVIDERS

    return {LIVE_OURS.get(name, name): name for name in ONLINE_PROVIDERS}


def make_provider(remote: str) -> Any:
    """gpuhunt's online provider `remote`, built from its environment variables."""
    from gpuhunt import MissingCredsError
    from gpuhunt._internal.default import ONLINE_PROVIDER_MODULES

    for module_name, class_name in ONLINE_PROVIDER_MODULES:
        cls = getattr(importlib.import_module(module_name), class_name)
        if getattr(cls, "NAME", None) == remote:
            try:
                return cls.from_env()
            except MissingCredsError as exc:
                raise FetchError(f"needs credentials: {exc}") from None
    raise FetchError(f"gpuhunt has no online provider {remote!r}")


def query(
    plan: ProviderPlan, timeout_s: float, factory: Callable[[str], Any] | None = None
) -> list[Any]:
    """Every offer gpuhunt's live provider returns, within `timeout_s` seconds (wall)."""
    import gpuhunt

    provider = (factory or make_provider)(plan.remote)
    catalog = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
    catalog.add_provider(provider)
    found: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            found.extend(catalog.query(provider=plan.remote))
        except Exception as exc:  # a vendor SDK error of any kind: reported, never raised
            failure.append(exc)

    worker = threading.Thread(target=run, name=f"gpuhunt-live-{plan.remote}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise FetchError(f"live query of {plan.remote} timed out after {timeout_s:g} s")
    if failure:
        exc = failure[0]
        raise FetchError(f"live query of {plan.remote} failed ({type(exc).__name__}: {exc})"[:200])
    return found


def parse(plan: ProviderPlan, items: list[Any], now: datetime) -> Parsed:
    """The instances of a live query's offers."""
    skipped: Counter[str] = Counter()
    offers: dict[Any, dict[str, Any]] = {}
    for item in items:
        add_offer(item, offers, skipped)
    label = f"gpuhunt live query of {plan.remote} ({now:%Y-%m-%d %H:%M} UTC)"
    catalog, skipped = catalog_from_offers(plan, offers, skipped, label, now)
    return Parsed(["live"], len(items), catalog, dict(skipped), unknown_gpus(skipped))
