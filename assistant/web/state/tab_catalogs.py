"""The price files browser tabs uploaded, kept on the server beside the shared catalog.

A tab's prices are found by its conversation's id (`Session.id`), which the browser keeps
sealed: a reload of the tab finds them again, and no other tab can name them. A new
conversation moves them to its new id (they are the tab's quotes, not the conversation's); the
tab's "Remove my prices" drops them. The most recently used `MAX_TABS` tabs keep theirs: each
holds at most `catalog_upload.MAX_OWN_INSTANCES` rows, so the server's memory stays bounded.
The catalog a tab ranks from (the shared one with its rows laid over it) is built once per
shared catalog and kept until a price refresh replaces the shared catalog.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from tools.catalog.instances import Catalog

__all__ = ["MAX_TABS", "TabCatalogs", "TabPrices"]

MAX_TABS = 64


@dataclass
class TabPrices:
    """One tab's uploaded price file: its name, its rows, and the merged catalog last built."""

    file: str
    own: Catalog
    _merged: tuple[int, Catalog] | None = field(default=None, repr=False)

    def over(self, shared: Catalog) -> Catalog:
        """`shared` with this tab's rows replacing the rows of the same instance id."""
        if self._merged is None or self._merged[0] != id(shared):
            self._merged = (id(shared), shared.merged(self.own))
        return self._merged[1]


class TabCatalogs:
    """Uploaded price files by conversation id, the least recently used dropped past
    `limit`."""

    def __init__(self, limit: int = MAX_TABS) -> None:
        self._limit = limit
        self._tabs: OrderedDict[str, TabPrices] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, tab: str) -> TabPrices | None:
        with self._lock:
            found = self._tabs.get(tab)
            if found is not None:
                self._tabs.move_to_end(tab)
            return found

    def put(self, tab: str, file: str, own: Catalog) -> TabPrices:
        with self._lock:
            prices = TabPrices(file, own)
            self._tabs[tab] = prices
            self._tabs.move_to_end(tab)
            while len(self._tabs) > self._limit:
                self._tabs.popitem(last=False)
            return prices

    def drop(self, tab: str) -> TabPrices | None:
        with self._lock:
            return self._tabs.pop(tab, None)

    def move(self, old: str, new: str) -> None:
        """The prices of conversation `old` now belong to `new` (a new conversation)."""
        with self._lock:
            prices = self._tabs.pop(old, None)
            if prices is not None:
                self._tabs[new] = prices
