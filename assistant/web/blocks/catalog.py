"""The Catalog tab: every instance type with its filters, a search that the count follows, the key
columns first ($/h and $/GPU-hour on demand and spot, price age, source link) and the rest behind
an expander; and the "Refresh prices" button, which downloads current offers with a line per
provider as it goes (`assistant.web.prices`), then shows the new catalog, the outcome per
provider, and the filters' new choices. Returns the (handler, inputs, outputs) that fill the tab
in the page's language."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import gradio as gr

from assistant.web.blocks.common import (
    Widths,
    choice_input,
    guarded,
    inform,
    input_row,
    number_input,
    t,
    table_update,
    warn,
)
from assistant.web.blocks.handlers import App
from assistant.web.blocks.header import Header
from assistant.web.blocks.own_prices import OwnPrices, own_prices_box, own_prices_line
from assistant.web.prices import RefreshRunning, outcome_table, progress_markdown, report_markdown
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import ui_format, ui_text
from assistant.web.views import CatalogFilters, catalog_view
from tools.catalog.instances import Catalog
from tools.catalog.refresh import RefreshEvent, RefreshReport
from tools.errors import AdvisorError

__all__ = ["CatalogTab", "catalog_tab"]

log = logging.getLogger("assistant.web")

KEY_WIDTHS: Widths = [270, 150, 90, 100, 110, 100, 120, 110, 220]
MORE_WIDTHS: Widths = [270, 110, 120, 110, 300, 130, 130, 140]
OUTCOME_WIDTHS: Widths = [130, 100, 140, 120, 190, 100, 420]
_FILTERS = ("gpus", "min_vram_gib", "providers", "regions", "max_price", "spot_only", "text")


def _lang(web: WebSession | None, *_rest: Any) -> str:
    return web.language if isinstance(web, WebSession) else "en"


def _choices(catalog: Catalog) -> tuple[list[str], list[str], list[str]]:
    """The GPU, provider and region filters' choices."""
    regions = sorted({r for i in catalog for r in i.regions})
    return sorted({i.gpu for i in catalog}), catalog.providers(), regions


def _filters(catalog: Catalog) -> list[Any]:
    gpus, providers, regions = _choices(catalog)
    with input_row():
        gpu = choice_input(gpus, "gpu", "cat-gpu", multiselect=True)
        vram = number_input("min_vram", "cat-vram")
        provider = choice_input(providers, "provider", "cat-provider", multiselect=True)
        region = choice_input(regions, "region", "cat-region", multiselect=True)
        price = number_input("max_price", "cat-price")
        spot = gr.Checkbox(label=t("spot_only"), elem_id="cat-spot", min_width=120)
    return [gpu, vram, provider, region, price, spot]


@dataclass(frozen=True)
class CatalogTab:
    """The tab's fill (handler, inputs, outputs: in the page's language, after a load or a
    language change) and its own-prices box, wired with the job's outputs by the page."""

    fill: list[Any]
    tables: list[Any]
    own: OwnPrices


def catalog_tab(app: App, web_state: gr.State, head: Header) -> CatalogTab:
    """The catalog with its filters, the refresh button and the own-prices box. The header's
    refresh button runs the same refresh, and its price line is written again after each. The
    table shows the catalog the tab ranks from (its uploaded prices laid over the shared one)."""
    with gr.Column():
        filters = _filters(app.catalog())
        search = gr.Textbox(
            label=t("search"), placeholder=t("catalog_search"), elem_id="cat-search", max_lines=1
        )
        button, count, table, more, note = _tables()
        own = own_prices_box()
        refresh_parts = _refresh_box()

    @guarded(4, _lang)
    def show(web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        lang = web.language if web else "en"
        raw = dict(zip(_FILTERS, values, strict=True))
        chosen = CatalogFilters(**{k: v for k, v in raw.items() if v is not None})
        stale = app.settings.stale_price_days
        view = catalog_view(app.catalog_for(web), chosen, datetime.now(UTC), stale, lang)
        return (
            view.count_markdown,
            table_update(view.key),
            table_update(view.more),
            ui_format(lang, "catalog_note", days=stale),
        )

    @guarded(6, _lang)
    def fill(web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        """The tables and the own-prices line (after a load or a language change)."""
        return (*show(web, *values), *own_prices_line(app, web, _lang(web)))

    inputs = [web_state, *filters, search]
    outputs = [count, table, more, note]
    gpu, vram, provider, region, price, spot = filters
    changes = [gpu.change, provider.change, region.change, spot.change, vram.submit, price.submit]
    gr.on(
        [*changes, search.change],
        show,
        inputs,
        outputs,
        api_visibility="private",
        trigger_mode="always_last",
    )

    def refresh(web: WebSession | None) -> Iterator[tuple[Any, ...]]:
        yield from _refresh(app, web)  # a generator function: Gradio streams what it yields

    refreshed = [*refresh_parts, gpu, provider, region]
    prices_line, line_inputs, line_outputs = head.fill(app, web_state)
    gr.on(
        [button.click, head.refresh.click], refresh, [web_state], refreshed,
        api_visibility="private", concurrency_limit=None, concurrency_id="price-refresh",
    ).then(show, inputs, outputs, api_visibility="private").then(
        prices_line, line_inputs, line_outputs, api_visibility="private"
    )  # fmt: skip
    filled = [*outputs, own.status, own.remove]
    return CatalogTab([fill, inputs, filled], [show, inputs, outputs], own)


def _tables() -> tuple[Any, ...]:
    """The count beside the refresh button, the key columns, the rest behind an expander."""
    with gr.Row(equal_height=True, elem_id="cat-count-row"):
        count = gr.Markdown(elem_id="cat-count")
        button = gr.Button(
            t("refresh_prices"), elem_id="refresh-prices", size="sm", scale=0, min_width=160
        )
    table = gr.Dataframe(
        interactive=False, wrap=True, max_height=620, elem_id="catalog", column_widths=KEY_WIDTHS
    )
    with gr.Accordion(t("more_columns"), open=False, elem_id="catalog-more-box"):
        more = gr.Dataframe(
            interactive=False, wrap=True, max_height=620, elem_id="catalog-more",
            column_widths=MORE_WIDTHS,
        )  # fmt: skip
    note = gr.Markdown(elem_id="catalog-note")
    return button, count, table, more, note


def _refresh_box() -> list[Any]:
    """What the refresh shows: a status line per provider, then the outcome table."""
    gr.Markdown(t("refresh_note"), elem_id="refresh-note")
    status = gr.Markdown(elem_id="refresh-status")
    with gr.Accordion(
        t("refresh_outcome"), open=False, visible=False, elem_id="refresh-outcome-box"
    ) as box:
        outcome = gr.Dataframe(
            interactive=False, wrap=True, elem_id="refresh-outcome", column_widths=OUTCOME_WIDTHS
        )
    return [status, box, outcome]


def _refresh(app: App, web: WebSession | None) -> Iterator[tuple[Any, ...]]:
    """Run the refresh: yield the status as each provider moves on, then the outcome and the
    filters' new choices. A refresh already running is one toast; nothing else changes."""
    lang = _lang(web)
    skip = gr.skip()
    events: list[RefreshEvent] = []
    try:
        for item in app.prices.stream():
            if isinstance(item, RefreshReport):
                yield _finished(app, item, lang)
                return
            events.append(item)
            yield (progress_markdown(events, lang), *(skip,) * 5)
    except RefreshRunning:
        inform(lang, ui_text(lang, "refresh_running"))
    except AdvisorError as exc:
        warn(lang, ui_format(lang, "error_input", error=str(exc)))
    except Exception:
        error_id = uuid.uuid4().hex[:8]
        log.exception("price refresh failed; error id %s", error_id)
        warn(lang, ui_format(lang, "error_unexpected", id=error_id))
    yield (skip,) * 6


def _finished(app: App, report: RefreshReport, lang: str) -> tuple[Any, ...]:
    catalog = app.catalog()
    gpus, providers, regions = _choices(catalog)
    return (
        report_markdown(report, len(catalog), lang),
        gr.Accordion(visible=True),
        table_update(outcome_table(report, datetime.now(UTC), lang)),
        gr.Dropdown(choices=gpus),
        gr.Dropdown(choices=providers),
        gr.Dropdown(choices=regions),
    )
