"""What the web app shows, computed from the tools' typed results: tables and chart data.

Pure functions, no UI library: the app only hands their output to its components. Every figure is
copied from an artifact (`RankResult`, `MemoryEstimate`, `Instance`), rounded for display and
never recomputed. Numeric columns stay numbers so the table sorts them as numbers; units are in
the headers (USD, hours, GiB = 2^30 bytes, percent).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from assistant.answers.i18n import has_message, message
from assistant.web.charts import memory_chart, render_memory_chart, vram_lines
from assistant.web.ui_strings import ui_text
from knowledge.retrieval import Passage
from tools.advice import Assumed
from tools.catalog.instances import Catalog, Instance
from tools.memory import MemoryEstimate
from tools.ranking.models import Excluded, RankedOption
from tools.units import GIB

Cell = str | int | float | None
Datatype = Literal["str", "number", "markdown", "date", "bool"]
PARTS = ("weights", "gradients", "optimizer", "activations", "overhead")


class Table(BaseModel):
    """Rows for a table component: one header and one datatype per column."""

    headers: list[str]
    datatypes: list[Datatype]
    rows: list[list[Cell]]


def _gib(n_bytes: float, digits: int = 1) -> float:
    return round(n_bytes / GIB, digits)


def _money(amount: float | None) -> float | None:
    return None if amount is None else round(amount, 2)


def _gpu_cell(count_per_node: int, nodes: int, gpu: str) -> str:
    if nodes > 1:
        return f"{nodes} × {count_per_node} × {gpu}"
    return f"{count_per_node} × {gpu}"


def _plan_text(option: RankedOption, lang: str) -> str:
    key = f"plan.{option.plan}"
    plan = message(lang, key) if has_message(lang, key) else option.plan_label
    pricing_key = f"pricing.{option.pricing}"
    pricing = message(lang, pricing_key) if has_message(lang, pricing_key) else option.pricing
    return f"{plan} · {pricing}"


def ranked_table(
    options: Sequence[RankedOption], instances: Mapping[str, Instance], lang: str
) -> Table:
    """The ranked options, best first: provider, instance, GPUs, VRAM per GPU (GiB), interconnect,
    USD per hour (at the row's pricing), hours, total USD, expected spot total USD, fit margin
    (percent of the need) and a translated why (parallel plan and pricing)."""
    keys = ("col_rank", "col_provider", "col_instance", "col_gpus", "col_vram",
            "col_interconnect", "col_price", "col_hours", "col_total", "col_spot_total",
            "col_margin", "col_why")  # fmt: skip
    types: list[Datatype] = ["number", "str", "str", "str", "number", "str",
                             "number", "number", "number", "number", "number", "str"]  # fmt: skip
    rows: list[list[Cell]] = []
    for option in options:
        inst = instances.get(option.instance_id)
        rows.append([
            option.rank,
            option.provider,
            option.instance_type,
            _gpu_cell(option.gpus_per_node, option.nodes, option.gpu),
            _gib(option.vram_per_gpu_bytes),
            inst.interconnect if inst is not None else "",
            _money(option.price_per_hour),
            round(option.hours, 1),
            _money(option.total_cost),
            _money(option.spot_total_cost),
            round(option.margin * 100, 1),
            _plan_text(option, lang),
        ])  # fmt: skip
    return Table(headers=[ui_text(lang, k) for k in keys], datatypes=types, rows=rows)


def excluded_table(
    excluded: Sequence[Excluded], instances: Mapping[str, Instance], lang: str
) -> Table:
    """Every excluded instance with the rule it broke (translated) and the tool's reason."""
    keys = ("col_provider", "col_instance", "col_gpus", "col_kind", "col_reason")
    rows: list[list[Cell]] = []
    for item in excluded:
        provider, _, instance_type = item.instance_id.partition("/")
        inst = instances.get(item.instance_id)
        gpus = f"{inst.gpu_count} × {item.gpu}" if inst is not None else item.gpu
        kind = ui_text(lang, f"excl_{item.kind}")
        rows.append([provider, instance_type, gpus, kind, item.reason])
    return Table(headers=[ui_text(lang, k) for k in keys], datatypes=["str"] * len(keys), rows=rows)


def catalog_table(instances: Iterable[Instance], today: date, stale_days: int, lang: str) -> Table:
    """Catalog rows cheapest first: prices in USD per instance-hour with their source and date;
    a price older than `stale_days` on `today` is flagged."""
    keys = ("col_provider", "col_instance", "col_gpus", "col_vram", "col_interconnect",
            "col_price", "col_spot_price", "col_regions", "col_source", "col_as_of",
            "col_stale")  # fmt: skip
    types: list[Datatype] = ["str", "str", "str", "number", "str", "number", "number",
                             "str", "str", "str", "str"]  # fmt: skip
    flag = ui_text(lang, "stale_flag")
    rows: list[list[Cell]] = []
    for inst in sorted(instances, key=lambda item: (item.price_per_hour, item.id)):
        rows.append([
            inst.provider, inst.instance_type, f"{inst.gpu_count} × {inst.gpu}",
            round(inst.vram_per_gpu_gib, 1), inst.interconnect, _money(inst.price_per_hour),
            _money(inst.spot_price_per_hour), ", ".join(inst.regions), inst.source,
            inst.as_of.isoformat(), flag if inst.is_stale(today, stale_days) else "",
        ])  # fmt: skip
    return Table(headers=[ui_text(lang, k) for k in keys], datatypes=types, rows=rows)


def passages_markdown(passages: Sequence[Passage]) -> str:
    """Search results as Markdown: title, topic and language, then the passage and its source."""
    blocks = []
    for passage in passages:
        topic = f"`{passage.topic}` · " if passage.topic else ""
        note = " ↩" if passage.lang_fallback else ""
        blocks.append(
            f"### {passage.title}\n{topic}**{passage.lang}**{note}\n\n{passage.text}\n\n"
            f"<sub>{passage.source}</sub>"
        )
    return "\n\n---\n\n".join(blocks)


def breakdown_table(estimate: MemoryEstimate, lang: str) -> Table:
    """The estimate's parts per GPU and their total, in GiB (2^30 bytes) and exact bytes."""
    per_gpu = estimate.per_gpu
    rows: list[list[Cell]] = [
        [ui_text(lang, f"part_{key}"), _gib(getattr(per_gpu, key), 2), getattr(per_gpu, key)]
        for key in PARTS
    ]
    rows.append([ui_text(lang, "chart_need"), _gib(per_gpu.total, 2), per_gpu.total])
    return Table(
        headers=[ui_text(lang, "memory_chart"), "GiB", "bytes"],
        datatypes=["str", "number", "number"],
        rows=rows,
    )


class CatalogFilters(BaseModel):
    """The catalog tab's filters; empty lists and None mean 'any'."""

    gpus: list[str] = Field(default_factory=list, description="GPU names, any of them")
    min_vram_gib: float | None = Field(None, description="least memory per GPU, GiB")
    providers: list[str] = Field(default_factory=list)
    regions: list[str] = Field(default_factory=list)
    max_price: float | None = Field(None, description="most USD per instance-hour")
    spot_only: bool = False


def filter_catalog_table(
    catalog: Catalog, filters: CatalogFilters, today: date, stale_days: int, lang: str
) -> tuple[str, Table]:
    """The rows matching `filters` and a 'matched / all rows' line (Markdown)."""
    found = catalog.filter(
        gpu=filters.gpus or None,
        min_vram_gib=filters.min_vram_gib or None,
        providers=filters.providers or None,
        regions=filters.regions or None,
        max_price=filters.max_price or None,
        spot_only=filters.spot_only,
    )
    table = catalog_table(found, today, stale_days, lang)
    return f"**{len(table.rows)}** / {len(catalog)} {ui_text(lang, 'rows_shown')}", table


class EstimatorView(BaseModel):
    chart_svg: str
    parts: Table
    assumptions_markdown: str


def estimator_view(
    result: MemoryEstimate, assumed: Sequence[Assumed], compare_gpus: Sequence[str], lang: str
) -> EstimatorView:
    """The estimator tab for one estimate: chart against `compare_gpus`, parts, the defaults
    assumed for what was left open, then the estimator's assumptions."""
    chart = memory_chart(result, vram_lines(None, compare_gpus), lang)
    defaults = [f"- {item.field} = {item.value}: {item.reason}" for item in assumed]
    lines = [*defaults, *(f"- {line}" for line in result.assumptions)]
    return EstimatorView(
        chart_svg=render_memory_chart(chart),
        parts=breakdown_table(result, lang),
        assumptions_markdown="\n".join(lines),
    )
