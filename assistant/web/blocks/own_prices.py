"""The Catalog tab's own-prices box: upload a price file (CSV or YAML, our layout or SkyPilot's)
and the chat, the panel and the catalog table of this browser tab rank with it; remove it and
they rank from the shared catalog again (`assistant.web.catalog_upload` reads the file,
`assistant.web.state.tab_catalogs` keeps it). A file that cannot be used is one warning that says
which row or what was wrong and what is valid; nothing else changes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import gradio as gr

from assistant.answers.literal import as_text
from assistant.web import cells
from assistant.web.blocks.common import guarded, t, warn
from assistant.web.blocks.handlers import App
from assistant.web.blocks.outputs import SLOTS
from assistant.web.catalog_upload import (
    CatalogUploadError,
    catalog_upload_problem,
    read_catalog_upload,
    upload_summary,
)
from assistant.web.panel import PanelNote, compute_panel
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import ui_format

__all__ = [
    "OWN_OUTPUTS",
    "OwnPrices",
    "add_prices",
    "own_prices_box",
    "own_prices_line",
    "remove_prices",
    "wire_own_prices",
]

OWN_OUTPUTS = 2 + SLOTS + 2  # session, chat, form and panel; the status line, the remove button


@dataclass(frozen=True)
class OwnPrices:
    """The box's components: the upload and remove buttons and the status line."""

    upload: Any
    remove: Any
    status: Any


def own_prices_box() -> OwnPrices:
    """What the box shows: how to write a price file, the two buttons, the status line."""
    with gr.Accordion(t("catalog_upload"), open=False, elem_id="own-prices-box"):
        gr.Markdown(t("catalog_upload_note"), elem_id="own-prices-note")
        with gr.Row(equal_height=True):
            upload = gr.UploadButton(
                t("catalog_upload"),
                type="filepath",
                file_types=[".csv", ".yaml", ".yml"],
                elem_id="own-prices-upload",
                size="sm",
            )
            remove = gr.Button(
                t("catalog_remove"), elem_id="own-prices-remove", size="sm", visible=False
            )
        status = gr.Markdown(elem_id="own-prices-status")
    return OwnPrices(upload, remove, status)


def own_prices_line(app: App, web: WebSession | None, lang: str) -> tuple[str, Any]:
    """The status line and the remove button for tab `web` (after a load or a language change)."""
    prices = app.tab_catalogs.get(web.session.id) if isinstance(web, WebSession) else None
    if prices is None:
        return "", gr.Button(visible=False)
    line = ui_format(
        lang,
        "catalog_own_line",
        file=as_text(prices.file),
        count=cells.count(len(prices.own), lang),
    )
    return line, gr.Button(visible=True)


def _lang(_app: App, web: WebSession | None, *_rest: Any) -> str:
    return web.language if isinstance(web, WebSession) else "en"


def _ranked_again(app: App, web: WebSession, note: PanelNote | None) -> None:
    """The panel of `web`'s job ranked from the catalog the tab now uses (none without a job)."""
    if web.session.state.model is None:
        return
    web.panel, web.chosen = compute_panel(web.session.state, app.catalog_for(web)), None
    if note is not None:
        web.panel.notes.insert(0, note)


@guarded(OWN_OUTPUTS, _lang)
def add_prices(app: App, web: WebSession | None, path: str | None) -> tuple[Any, ...]:
    """The uploaded price file at `path` becomes tab `web`'s prices (replacing any before) and
    its job is ranked again: the job's outputs, the status line, the remove button."""
    web = web if isinstance(web, WebSession) else WebSession()
    if not path:
        return _skipped()
    lang = web.language
    with web.lock:
        try:
            upload = read_catalog_upload(Path(path), app.catalog(), date.today())
        except CatalogUploadError as exc:
            warn(lang, catalog_upload_problem(exc, lang))
            return _skipped()
        app.tab_catalogs.put(web.session.id, upload.file, upload.catalog)
        values: dict[str, str | int] = {"file": upload.file, "count": len(upload.catalog)}
        _ranked_again(app, web, PanelNote(key="own_prices_panel", values=values))
        return (*app.job_outputs(web), upload_summary(upload, lang), gr.Button(visible=True))


@guarded(OWN_OUTPUTS, _lang)
def remove_prices(app: App, web: WebSession | None) -> tuple[Any, ...]:
    """Tab `web` ranks from the shared catalog again: the job's outputs, the status line, the
    remove button (hidden)."""
    web = web if isinstance(web, WebSession) else WebSession()
    with web.lock:
        dropped = app.tab_catalogs.drop(web.session.id)
        if dropped is None:
            return _skipped()
        _ranked_again(app, web, None)
        line = ui_format(web.language, "catalog_removed", file=as_text(dropped.file))
        return (*app.job_outputs(web), line, gr.Button(visible=False))


def _skipped() -> tuple[Any, ...]:
    return tuple(gr.skip() for _ in range(OWN_OUTPUTS))


def wire_own_prices(app: App, web_state: Any, parts: OwnPrices, job: list[Any]) -> list[Any]:
    """Wire the two buttons (`job`: the job's outputs); returns their events, after which the
    page shows the catalog table again."""
    outputs = [*job, parts.status, parts.remove]
    added = parts.upload.upload(
        lambda web, path: add_prices(app, web, path), [web_state, parts.upload], outputs,
        api_visibility="private",
    )  # fmt: skip
    removed = parts.remove.click(
        lambda web: remove_prices(app, web), [web_state], outputs, api_visibility="private"
    )
    return [added, removed]
