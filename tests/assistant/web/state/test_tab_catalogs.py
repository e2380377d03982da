"""The tabs' uploaded price files: found by conversation id, moved, dropped, bounded."""

from __future__ import annotations

from assistant.web.state.tab_catalogs import TabCatalogs
from tests.fakes.catalogs import make_instance, web_catalog
from tools.catalog.instances import Catalog

OWN = Catalog([make_instance(price_per_hour=0.3)])


def test_the_merged_catalog_is_built_once_per_shared_catalog() -> None:
    tabs = TabCatalogs()
    prices = tabs.put("a", "q.csv", OWN)
    shared = web_catalog()
    merged = prices.over(shared)
    assert prices.over(shared) is merged
    assert [i.price_per_hour for i in merged][:1] == [0.3] and len(merged) == 3
    refreshed = web_catalog()
    assert prices.over(refreshed) is not merged, "a refreshed shared catalog: built again"


def test_move_drop_and_the_least_recently_used_tab_goes_first() -> None:
    tabs = TabCatalogs(limit=2)
    tabs.put("a", "a.csv", OWN)
    tabs.put("b", "b.csv", OWN)
    tabs.move("a", "a2")
    assert tabs.get("a") is None and tabs.get("a2") is not None
    tabs.put("c", "c.csv", OWN)  # b was used least recently
    assert [tabs.get(t) is not None for t in ("a2", "b", "c")] == [True, False, True]
    dropped = tabs.drop("c")
    assert dropped is not None and dropped.file == "c.csv" and tabs.drop("c") is None
    tabs.move("nobody", "x")
    assert tabs.get("x") is None
