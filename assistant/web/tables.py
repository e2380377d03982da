"""The app's tables, computed from the tools' typed results: raw values to sort by and the text
to show, in the interface language.

Every figure is copied from an artifact (`RankedOption`, `Excluded`, a catalog row) and only
rounded and formatted here, never recomputed. A table is a list of `Column`s, each a header key,
how to read its raw value from a row and how to show it; a column is added by adding one entry.
Number columns keep numbers (the table sorts by them) and show locale text ('1,80 $'); links are
Markdown. `Table.value()` is the shape the table component takes, raw data plus display text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from assistant.web import cells
from assistant.web.ui_strings import ui_text, vocabulary
from tools.catalog.freshness import catalog_row
from tools.catalog.instances import Instance
from tools.memory import MemoryEstimate
from tools.ranking.models import Excluded, RankedOption

__all__ = [
    "CATALOG_KEY_COLUMNS",
    "RANKED_KEY_COLUMNS",
    "Table",
    "breakdown_table",
    "catalog_tables",
    "excluded_table",
    "ranked_tables",
]

Cell = str | int | float | None
Datatype = Literal["str", "number", "markdown"]
RowT = TypeVar("RowT")
PARTS = ("weights", "gradients", "optimizer", "activations", "overhead")
INTERCONNECT_NAMES = {"nvswitch": "NVSwitch", "nvlink": "NVLink", "pcie": "PCIe"}
NETWORK_NAMES = {"infiniband": "InfiniBand", "roce": "RoCE", "ethernet": "Ethernet"}
STALE = "⚠"


class Table(BaseModel):
    """Rows for a table component: a header, a datatype, raw values and shown text per column."""

    headers: list[str]
    datatypes: list[Datatype]
    rows: list[list[Cell]]
    display: list[list[str]]

    def value(self) -> dict[str, Any]:
        """The table as a table component's value: raw data and its display text."""
        styling = [[""] * len(self.headers) for _ in self.rows]
        metadata = {"display_value": self.display, "styling": styling} if self.rows else None
        return {"headers": self.headers, "data": self.rows, "metadata": metadata}


@dataclass(frozen=True)
class Column(Generic[RowT]):
    """One column: its header key, its raw value (what a number column sorts by; a text
    column's raw value is its text) and its text in a language."""

    header: str
    datatype: Datatype
    raw: Callable[[RowT], Cell]
    shown: Callable[[RowT, str], str]


def build_table(columns: Sequence[Column[RowT]], items: Iterable[RowT], lang: str) -> Table:
    """The rows of `items` under `columns`, headers and text in `lang`."""
    rows: list[list[Cell]] = []
    display: list[list[str]] = []
    for item in items:
        shown = [column.shown(item, lang) for column in columns]
        raw = [
            c.raw(item) if c.datatype == "number" else text
            for c, text in zip(columns, shown, strict=True)
        ]
        rows.append(raw)
        display.append(shown)
    return Table(
        headers=[ui_text(lang, c.header) for c in columns],
        datatypes=[c.datatype for c in columns],
        rows=rows,
        display=display,
    )


def text_column(header: str, get: Callable[[RowT], str]) -> Column[RowT]:
    return Column(header, "str", get, lambda item, _lang: get(item))


def money_column(header: str, get: Callable[[RowT], float | None]) -> Column[RowT]:
    def raw(item: RowT) -> Cell:
        value = get(item)
        return None if value is None else round(value, 4)

    return Column(header, "number", raw, lambda item, lang: cells.money(get(item), lang))


def number_column(header: str, get: Callable[[RowT], float], digits: int = 1) -> Column[RowT]:
    return Column(
        header,
        "number",
        lambda item: round(get(item), digits),
        lambda item, lang: cells.number(get(item), lang, digits),
    )


# --------------------------------------------------------------------------- ranked options


def gpus_text(option: RankedOption) -> str:
    """'8 × H100-SXM', or '2 × 8 × H100-SXM' over two nodes."""
    if option.nodes > 1:
        return f"{option.nodes} × {option.gpus_per_node} × {option.gpu}"
    return f"{option.gpus_per_node} × {option.gpu}"


def setup_text(option: RankedOption, lang: str) -> str:
    """The parallel plan and the pricing in the answers' words: 'ZeRO-3/FSDP · spot'."""
    plan = vocabulary(lang, "plan", option.plan)
    plan = option.plan_label if plan == option.plan else plan
    return f"{plan} · {vocabulary(lang, 'pricing', option.pricing)}"


def age_text(option: RankedOption, lang: str) -> str:
    """The price's age, with ⚠ when it is stale."""
    shown = cells.age_cell(
        option.price_age_days, option.price_age_hours, option.fetched_at is not None, lang
    )
    return f"{STALE} {shown}" if option.stale else shown


RANKED_KEY_COLUMNS: tuple[Column[RankedOption], ...] = (
    Column("col_rank", "number", lambda o: o.rank, lambda o, _l: str(o.rank)),
    text_column("col_instance", lambda o: o.instance_id),
    text_column("col_gpus", gpus_text),
    Column("col_plan", "str", lambda o: o.plan, setup_text),
    Column(
        "col_need_vram",
        "number",
        lambda o: cells.gib_of(o.need_per_gpu_bytes),
        lambda o, lang: cells.need_of_vram(o.need_per_gpu_bytes, o.vram_per_gpu_bytes, lang),
    ),
    money_column("col_price", lambda o: o.price_per_hour),
    Column(
        "col_hours",
        "number",
        lambda o: round(o.hours, 2),
        lambda o, lang: cells.hours(o.hours, lang),
    ),
    money_column("col_total", lambda o: o.total_cost),
    money_column("col_spot_total", lambda o: o.spot_total_cost),
    Column("col_age", "number", lambda o: o.price_age_days, age_text),
)


def _more_ranked(instances: Mapping[str, Instance]) -> tuple[Column[RankedOption], ...]:
    def interconnect(option: RankedOption) -> str:
        inst = instances.get(option.instance_id)
        return INTERCONNECT_NAMES.get(inst.interconnect, inst.interconnect) if inst else ""

    return (
        Column("col_rank", "number", lambda o: o.rank, lambda o, _l: str(o.rank)),
        text_column("col_instance", lambda o: o.instance_id),
        text_column("col_provider", lambda o: o.provider),
        text_column("col_interconnect", interconnect),
        Column(
            "col_margin",
            "number",
            lambda o: round(o.margin * 100, 1),
            lambda o, lang: cells.percent(o.margin, lang),
        ),
        Column(
            "col_mfu",
            "number",
            lambda o: round(o.mfu * 100, 1),
            lambda o, lang: cells.percent(o.mfu, lang),
        ),
        text_column("col_regions", lambda o: ", ".join(o.regions)),
        Column(
            "col_source",
            "markdown",
            lambda o: cells.source_link(o.source, "en"),
            lambda o, lang: cells.source_link(o.source, lang),
        ),
        Column(
            "col_as_of",
            "str",
            lambda o: o.as_of.isoformat(),
            lambda o, lang: cells.day(o.as_of, lang),
        ),
    )


def ranked_tables(
    options: Sequence[RankedOption], instances: Mapping[str, Instance], lang: str
) -> tuple[Table, Table]:
    """The ranked options, best first: the key columns (rank, instance, GPUs, setup, need/VRAM,
    $/h, hours, total, spot total, price age), then every other column for the expander."""
    return (
        build_table(RANKED_KEY_COLUMNS, options, lang),
        build_table(_more_ranked(instances), options, lang),
    )


# --------------------------------------------------------------------------- excluded


def excluded_table(
    excluded: Sequence[Excluded], instances: Mapping[str, Instance], lang: str
) -> Table:
    """Every excluded instance with the rule it broke. English shows the tool's own reason
    (with its figures); the other languages the rule explained in their words, as the answers do."""

    def gpus(item: Excluded) -> str:
        inst = instances.get(item.instance_id)
        return f"{inst.gpu_count} × {item.gpu}" if inst is not None else item.gpu

    def reason(item: Excluded, lang: str) -> str:
        return item.reason if lang == "en" else vocabulary(lang, "exclusion", item.kind)

    columns: tuple[Column[Excluded], ...] = (
        text_column("col_instance", lambda e: e.instance_id),
        text_column("col_gpus", gpus),
        Column(
            "col_kind", "str", lambda e: e.kind, lambda e, lang: ui_text(lang, f"excl_{e.kind}")
        ),
        Column("col_reason", "str", lambda e: e.reason, reason),
    )
    return build_table(columns, excluded, lang)


# --------------------------------------------------------------------------- the catalog

CatalogRow = dict[str, Any]  # tools.catalog.freshness.catalog_row: Instance fields + price age


def _age(row: CatalogRow, lang: str) -> str:
    shown = cells.age_cell(
        row["price_age_days"], row["price_age_hours"], row["fetched_at"] is not None, lang
    )
    return f"{STALE} {shown}" if row["stale"] else shown


def _origin(row: CatalogRow, lang: str) -> str:
    origin = str(row["origin"])
    return ui_text(lang, f"origin_{origin}") if origin in ("curated", "import") else origin


CATALOG_KEY_COLUMNS: tuple[Column[CatalogRow], ...] = (
    text_column("col_instance", lambda r: str(r["id"])),
    text_column("col_gpus", lambda r: f"{r['gpu_count']} × {r['gpu']}"),
    number_column("col_vram", lambda r: float(r["vram_per_gpu_gib"]), 0),
    money_column("col_price", lambda r: r["price_per_hour"]),
    money_column("col_per_gpu_hour", lambda r: r["price_per_gpu_hour"]),
    money_column("col_spot_price", lambda r: r["spot_price_per_hour"]),
    money_column("col_spot_per_gpu_hour", lambda r: r["spot_price_per_gpu_hour"]),
    Column("col_age", "number", lambda r: r["price_age_days"], _age),
    Column(
        "col_source",
        "markdown",
        lambda r: cells.source_link(r["source"], "en"),
        lambda r, lang: cells.source_link(r["source"], lang),
    ),
)
CATALOG_MORE_COLUMNS: tuple[Column[CatalogRow], ...] = (
    text_column("col_instance", lambda r: str(r["id"])),
    text_column("col_provider", lambda r: str(r["provider"])),
    text_column("col_interconnect", lambda r: INTERCONNECT_NAMES[r["interconnect"]]),
    text_column("col_network", lambda r: NETWORK_NAMES[r["network"]]),
    text_column("col_regions", lambda r: ", ".join(r["regions"])),
    Column(
        "col_billing",
        "str",
        lambda r: r["billing_granularity"],
        lambda r, lang: ui_text(lang, f"billing_{r['billing_granularity']}"),
    ),
    Column(
        "col_as_of",
        "str",
        lambda r: r["as_of"],
        lambda r, lang: cells.day(date.fromisoformat(r["as_of"]), lang),
    ),
    Column("col_origin", "str", lambda r: r["origin"], _origin),
)


def catalog_tables(
    instances: Iterable[Instance], now: datetime, stale_days: int, lang: str
) -> tuple[Table, Table]:
    """Catalog rows cheapest per GPU-hour first (then by id): the key columns (instance, GPUs,
    memory, $/h and $/GPU-hour on demand and spot, price age, source link), then the rest.
    The rows are `catalog_row`s, so a field added there is one `Column` away from the table."""
    rows = [catalog_row(item, now, stale_days) for item in instances]
    rows.sort(key=lambda r: (r["price_per_gpu_hour"], r["id"]))
    return (
        build_table(CATALOG_KEY_COLUMNS, rows, lang),
        build_table(CATALOG_MORE_COLUMNS, rows, lang),
    )


# --------------------------------------------------------------------------- estimator


def breakdown_table(estimate: MemoryEstimate, lang: str) -> Table:
    """The estimate's parts per GPU and their total, in GiB (2^30 bytes) and exact bytes."""
    keys = [*(f"part_{key}" for key in PARTS), "chart_need"]
    values = [*(getattr(estimate.per_gpu, key) for key in PARTS), estimate.per_gpu.total]
    columns: tuple[Column[tuple[str, int]], ...] = (
        Column(
            "memory_chart",
            "str",
            lambda r: ui_text("en", r[0]),
            lambda r, lang: ui_text(lang, r[0]),
        ),
        Column(
            "col_gib",
            "number",
            lambda r: cells.gib_of(r[1], 2),
            lambda r, lang: cells.number(cells.gib_of(r[1], 2), lang, 2),
        ),
        Column("col_bytes", "number", lambda r: r[1], lambda r, lang: cells.count(r[1], lang)),
    )
    return build_table(columns, list(zip(keys, values, strict=True)), lang)
