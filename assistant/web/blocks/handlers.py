"""The app's event handlers: a chat turn, a form edit, an upload, a thumbs rating, the panel.

`App` holds what every browser tab shares (the assistant with its catalog and knowledge base,
the settings, a folder for downloads); each handler receives the tab's `WebSession` and returns
the values its components show, computed by the pure modules of `assistant.web`.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from assistant.agent.conversation import Assistant
from assistant.agent.events import ToolEnd, ToolStart, events_to_chat_messages
from assistant.settings import Settings
from assistant.web.blocks.common import STREAM_INTERVAL_S, frame, shown_error
from assistant.web.feedback import append_feedback, feedback_path, record_for_like
from assistant.web.form import (
    FORM_FIELDS,
    assumed_defaults,
    form_values,
    spec_from_form,
    values_from_widgets,
)
from assistant.web.panel import compute_panel, panel_from_events, panel_view
from assistant.web.session import WebSession
from assistant.web.ui_strings import ui_text
from assistant.web.uploads import model_from_upload
from tools.catalog.instances import Catalog, Instance
from tools.errors import AdvisorError

__all__ = ["App"]


class App:
    """What the handlers share: the assistant (tools, catalog, knowledge base) and settings."""

    def __init__(self, settings: Settings, assistant: Assistant) -> None:
        self.settings = settings
        self.assistant = assistant
        # Launch-spec downloads: outside data_dir (which is never served), removed at exit.
        self._exports = tempfile.TemporaryDirectory(prefix="gpu-advisor-exports-")
        self.export_dir = Path(self._exports.name)
        # Read once here: the knowledge base may still be loading when the first page opens.
        self._catalog = assistant.resources.catalog()
        self._instances = {item.id: item for item in self._catalog}

    def catalog(self) -> Catalog:
        return self._catalog

    def instances(self) -> dict[str, Instance]:
        return self._instances

    # -- panel ---------------------------------------------------------------------------

    def panel_outputs(self, web: WebSession) -> tuple[Any, ...]:
        """Notes, chart, ranked and excluded tables, launch choices, spec and download."""
        view = panel_view(web.panel, self.instances(), web.language, web.chosen)
        web.chosen = view.chosen
        download = gr.DownloadButton(visible=False)
        if view.launch_json is not None and view.chosen is not None:
            folder = self.export_dir / web.session.id
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"launch-{view.chosen.replace('/', '-')}.json"
            path.write_text(view.launch_json, encoding="utf-8")
            download = gr.DownloadButton(value=str(path), visible=True)
        excluded = view.excluded
        label = f"{ui_text(web.language, 'excluded')} ({len(excluded.rows)})"
        return (
            view.notes_markdown,
            view.chart_svg,
            frame(view.ranked),
            gr.Accordion(label=label),
            frame(excluded),
            gr.Dropdown(choices=view.launch_choices, value=view.chosen),
            view.launch_yaml,
            download,
        )

    def form_outputs(self, web: WebSession) -> tuple[Any, ...]:
        """The form's widget values (FORM_FIELDS order), then the currency."""
        state = web.session.state
        shown = form_values(state, assumed_defaults(state, self._catalog))
        return (*(shown.values[name] for name in FORM_FIELDS), shown.currency)

    # -- chat ----------------------------------------------------------------------------

    def respond(self, message: str, language: str, web: WebSession | None) -> Iterator[Any]:
        """Stream one turn: the chat so far plus this turn's tool calls, answer and citations."""
        web = web if web is not None else WebSession()
        text = (message or "").strip()
        if not text:
            yield web.chat, web
            return
        shown = [*web.chat, {"role": "user", "content": text}]
        override = None if language in (None, "", "auto") else language
        events: list[Any] = []
        last = time.monotonic()
        for event in self.assistant.respond(text, web.session, lang=override):
            events.append(event)
            now = time.monotonic()
            if isinstance(event, ToolStart | ToolEnd) or now - last >= STREAM_INTERVAL_S:
                last = now  # answer chunks arriving together are sent together
                yield [*shown, *events_to_chat_messages(events)], gr.skip()
        web.chat = [*shown, *events_to_chat_messages(events)]
        web.panel = panel_from_events(events, web.panel)
        yield web.chat, web

    def feedback(self, web: WebSession | None, like: gr.LikeData) -> None:
        index = like.index if isinstance(like.index, int) else like.index[0]
        if web is None:
            return
        record = record_for_like(
            web.chat, index, like.liked, session=web.session.id, language=web.session.language
        )
        if record is not None:
            append_feedback(feedback_path(self.settings.data_dir), record)
            gr.Info(ui_text(web.language, "feedback_saved"))

    # -- form ----------------------------------------------------------------------------

    def apply_form(self, web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        """The form's values (FORM_FIELDS order, then the currency) amend the job."""
        web = web if web is not None else WebSession()
        *fields, currency = values
        state = web.session.state
        try:
            form = values_from_widgets(dict(zip(FORM_FIELDS, fields, strict=True)), currency)
            defaults = assumed_defaults(state, self._catalog)
            web.session.state = spec_from_form(form, state, defaults)
        except AdvisorError as exc:
            raise shown_error(ui_text(web.language, "error_prefix"), exc) from None
        web.panel = compute_panel(web.session.state, self.catalog())
        return (web, *self.panel_outputs(web))

    def upload(self, web: WebSession | None, path: str | None) -> tuple[Any, ...]:
        """An uploaded config.json becomes the job's model."""
        web = web if web is not None else WebSession()
        if not path:
            return (web, *self.form_outputs(web), *self.panel_outputs(web))
        try:
            arch = model_from_upload(Path(path))
        except AdvisorError as exc:
            raise shown_error(ui_text(web.language, "error_prefix"), exc) from None
        web.session.state = web.session.state.model_copy(update={"model": arch})
        web.panel = compute_panel(web.session.state, self.catalog())
        note = f"{ui_text(web.language, 'uploaded')}: {arch.name} ({arch.total_params():,})"
        web.panel.notes.insert(0, note)
        return (web, *self.form_outputs(web), *self.panel_outputs(web))
