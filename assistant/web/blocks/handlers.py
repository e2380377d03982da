"""The app's event handlers: a chat turn, a page load, a new conversation, a language change, a
form edit, an upload, a launch choice, a thumbs rating.

`App` holds what every browser tab shares (the assistant with its catalog and knowledge base,
the settings, a folder for downloads); each handler receives the tab's `WebSession` and returns
the values its components show, computed by the pure modules of `assistant.web`. No handler
raises into the page: a refused message or a bad upload is one toast in the interface language
and leaves every component as it was.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from assistant.agent.conversation import MAX_MESSAGE_CHARS, Assistant, Session
from assistant.agent.events import Final, ToolEnd, ToolStart
from assistant.languages import language_from_header
from assistant.settings import Settings
from assistant.web.blocks.common import STREAM_INTERVAL_S, guarded, inform, warn
from assistant.web.blocks.outputs import LAUNCH_OUTPUTS, SLOTS, Outputs, PageUpdates
from assistant.web.chat_view import (
    chat_examples,
    chat_messages,
    form_update_message,
    message_problem,
)
from assistant.web.form import FORM_FIELDS, edited_fields, spec_from_form, values_from_widgets
from assistant.web.panel import (
    PanelData,
    PanelNote,
    complete_options,
    compute_panel,
    panel_from_events,
)
from assistant.web.prices import PriceRefresher
from assistant.web.safe_text import safe_messages
from assistant.web.state.feedback import append_feedback, feedback_path, record_for_like
from assistant.web.state.sealed import BrowserSeal
from assistant.web.state.session import WebSession, browser_secret, one_at_a_time
from assistant.web.state.tab_catalogs import MAX_TABS, TabCatalogs
from assistant.web.ui_strings import ui_lang, ui_text
from assistant.web.uploads import UploadError, model_from_upload, upload_problem
from tools.catalog.instances import Catalog, Instance
from tools.job import JobSpec

__all__ = ["App"]

_JOB_OUTPUTS = 2 + SLOTS  # session, chat, form, panel


@dataclass(frozen=True)
class TurnStart:
    """What a turn started from: the job and how long the chat was (to see edits made while it
    ran)."""

    job: JobSpec
    chat_len: int


def _skipped(count: int) -> tuple[Any, ...]:
    return tuple(gr.skip() for _ in range(count))


def _lang(web: WebSession | None, *_rest: Any) -> str:
    return web.language if isinstance(web, WebSession) else "en"


def _failed(events: list[Any]) -> bool:
    """Whether a turn ended without its answer (the assistant's apology, or no final result):
    what its tools made before the fault must not reach the panel."""
    final = next((e for e in reversed(events) if isinstance(e, Final)), None)
    return final is None or final.result.error_id is not None


class App:
    """What the handlers share: the assistant (tools, catalog, knowledge base) and settings."""

    def __init__(self, settings: Settings, assistant: Assistant) -> None:
        self.settings = settings
        self.assistant = assistant
        # Launch-spec downloads: outside data_dir (which is never served), removed at exit.
        self._exports = tempfile.TemporaryDirectory(prefix="gpu-advisor-exports-")
        self.export_dir = Path(self._exports.name)
        # Read here: the knowledge base may still be loading when the first page opens.
        self._catalog = assistant.resources.catalog()
        self._instances = {item.id: item for item in self._catalog}
        self._outputs = Outputs(self._catalog, self._instances, self.export_dir)
        self.seal = BrowserSeal(browser_secret(settings.data_dir))
        # The Catalog tab's button and the refresh_prices endpoint: one refresh at a time.
        self.prices = PriceRefresher(
            settings.data_dir, settings.refresh_config(), on_updated=self._reload_catalog
        )
        # Set when the page is wired (`wire_chat`): the form and panel its browser applies.
        self.page_updates: PageUpdates | None = None
        # Price files tabs uploaded (the Catalog tab), and the outputs over each tab's catalog.
        self.tab_catalogs = TabCatalogs()
        self._tab_outputs: dict[int, tuple[Catalog, Outputs]] = {}

    def _reload_catalog(self) -> None:
        """After a refresh changed prices: load the catalog now (the refresh waits for it, not
        the next chat turn), and follow it."""
        self.assistant.resources.reload_catalog()
        self._follow_catalog()

    def _follow_catalog(self) -> None:
        """Take the assistant's catalog when a price refresh replaced it."""
        current = self.assistant.resources.catalog()
        if current is not self._catalog:
            self._catalog = current
            self._instances = {item.id: item for item in current}
            self._outputs = Outputs(current, self._instances, self.export_dir)

    @property
    def outputs(self) -> Outputs:
        self._follow_catalog()
        return self._outputs

    def catalog(self) -> Catalog:
        self._follow_catalog()
        return self._catalog

    def instances(self) -> dict[str, Instance]:
        self._follow_catalog()
        return self._instances

    def own_catalog(self, web: WebSession | None) -> Catalog | None:
        """The catalog tab `web` ranks from when it uploaded prices (the shared catalog with
        its rows laid over), else None."""
        prices = self.tab_catalogs.get(web.session.id) if isinstance(web, WebSession) else None
        return prices.over(self.catalog()) if prices is not None else None

    def catalog_for(self, web: WebSession | None) -> Catalog:
        """The catalog tab `web` ranks from: its own, else the shared one."""
        own = self.own_catalog(web)
        return own if own is not None else self.catalog()

    def outputs_for(self, web: WebSession) -> Outputs:
        """The page's outputs over the catalog tab `web` ranks from."""
        own = self.own_catalog(web)
        if own is None:
            return self.outputs
        kept = self._tab_outputs.get(id(own))
        if kept is None:
            if len(self._tab_outputs) >= MAX_TABS:
                self._tab_outputs.clear()
            kept = (own, Outputs(own, {item.id: item for item in own}, self.export_dir))
            self._tab_outputs[id(own)] = kept
        return kept[1]

    def form_outputs(self, web: WebSession) -> tuple[Any, ...]:
        return self.outputs_for(web).form_outputs(web)

    def panel_outputs(self, web: WebSession) -> tuple[Any, ...]:
        return self.outputs_for(web).panel_outputs(web)

    def chat_output(self, web: WebSession) -> Any:
        """The chat with the first screen's examples in the interface language."""
        examples: Any = chat_examples(web.language)  # ExampleMessage dicts
        messages: Any = safe_messages(web.chat)  # MessageDicts, shown as text
        return gr.Chatbot(value=messages, examples=examples)

    def job_outputs(self, web: WebSession) -> tuple[Any, ...]:
        """Session, chat, form and panel: everything a change of the job updates."""
        return (web, self.chat_output(web), *self.form_outputs(web), *self.panel_outputs(web))

    # -- a chat turn ---------------------------------------------------------------------

    @property
    def streams(self) -> bool:
        """Whether a turn's updates are streamed: only an LLM's turn takes long enough to show
        its tool calls and answer as they come; an offline turn is sent once, when it ends."""
        return self.assistant.chat_model is not None

    def respond(self, message: str, language: str, web: WebSession | None) -> Iterator[Any]:
        """Stream one turn: the chat so far plus this turn's tool calls, answer and sources.
        An empty or over-long message is refused with a hint before anything is sent."""
        yield from self._turn(message, language, web, stream=True)

    def answer(self, message: str, language: str, web: WebSession | None) -> tuple[Any, Any]:
        """One turn sent once, when it ends (the chat, the session): the page gets the whole
        chat one time instead of once per tool call, then again at the end of the stream."""
        *_, last = self._turn(message, language, web, stream=False)
        return last

    def page_answer(self, message: str, language: str, web: WebSession | None) -> tuple[Any, ...]:
        """A turn as the page runs it, in one event: the chat and the session (`answer`), then
        the form, the panel and what the browser keeps (`after_turn`), the form and panel as
        the page's payload where `page_updates` is set (`outputs.PageUpdates`). A second event
        after the answer cost another round of the queue and its HTTP."""
        chat, session = self.answer(message, language, web)
        return (chat, session, *self._page_rest(session))

    def page_respond(
        self, message: str, language: str, web: WebSession | None
    ) -> Iterator[tuple[Any, ...]]:
        """`page_answer` streamed (an LLM's turn): the chat as it comes, the rest at the end."""
        waiting = _skipped(1 + (self.page_updates.outputs if self.page_updates else SLOTS))
        for chat, session in self._turn(message, language, web, stream=True):
            if isinstance(session, WebSession):  # the turn's last update
                yield (chat, session, *self._page_rest(session))
            else:
                yield (chat, session, *waiting)

    def _page_rest(self, web: WebSession) -> tuple[Any, ...]:
        *shown, saved = self.after_turn(web)
        return (*(self.page_updates.split(shown) if self.page_updates else shown), saved)

    def _turn(
        self, message: str, language: str, web: WebSession | None, *, stream: bool
    ) -> Iterator[tuple[Any, Any]]:
        """The chat (and the session once it changed) as a turn runs; with `stream`, an update
        per tool call and per answer chunks arriving together, else only the last."""
        web = web if web is not None else WebSession()
        text = message or ""
        problem = message_problem(text, MAX_MESSAGE_CHARS, web.language)
        if problem is not None:
            (inform if not text.strip() else warn)(web.language, problem)
            yield safe_messages(web.chat), web
            return
        text = text.strip()
        with web.lock:  # the session changes only if the turn ends: the turn works on a copy
            if web.session.language is None:  # a first message too short to tell: the UI's
                web.session.language = web.language
            shown = [*web.chat, {"role": "user", "content": text}]
            draft = web.session.model_copy(deep=True)
            started = TurnStart(job=web.session.state, chat_len=len(web.chat))
        override = None if language in (None, "", "auto") else language
        events: list[Any] = []
        last = time.monotonic()
        own = self.own_catalog(web)
        for event in self.assistant.respond(text, draft, lang=override, catalog=own):
            events.append(event)
            if not stream:
                continue
            now = time.monotonic()
            if isinstance(event, ToolStart | ToolEnd) or now - last >= STREAM_INTERVAL_S:
                last = now  # answer chunks arriving together are sent together
                yield safe_messages([*shown, *chat_messages(events, web.language)]), gr.skip()
        with web.lock:
            chat = [*shown, *chat_messages(events, web.language)]
            self._commit_turn(web, draft, chat, events, started)
            chat = safe_messages(web.chat)
        yield chat, web

    def _commit_turn(
        self,
        web: WebSession,
        draft: Session,
        chat: list[dict[str, Any]],
        events: list[Any],
        started: TurnStart,
    ) -> None:
        """The turn's conversation and chat; its job's panel unless the turn failed (then the
        apology is shown and job and panel stay as they were). A form edit or upload made while
        the turn ran is newer than the turn: its fields are applied over the turn's job, its
        chat message follows the answer, and the panel is the merged job's."""
        edited = edited_fields(started.job, web.session.state)
        edit_messages = web.chat[started.chat_len :] if edited else []
        web.session, web.chat, web.form_message_at = draft, chat, None
        if not _failed(events):
            panel = panel_from_events(events, web.panel)
            if panel is not web.panel:
                web.panel, web.chosen = panel, None  # a new job: the launch spec follows its #1
        if not edited:
            return
        web.session.state = web.session.state.model_copy(update=edited)
        web.panel, web.chosen = compute_panel(web.session.state, self.catalog_for(web)), None
        web.chat = [*web.chat, *edit_messages]
        if edit_messages:
            web.form_message_at = len(web.chat) - 1

    @one_at_a_time
    def after_turn(self, web: WebSession) -> tuple[Any, ...]:
        """Form and panel after a turn (the cost chart gets every option that fits), only what
        changed (`Outputs.after_turn`), then what the browser keeps: the rest of the page's turn
        event (`page_answer`)."""
        web.panel = complete_options(web.panel, web.session.state, self.catalog_for(web))
        return (*self.outputs_for(web).after_turn(web), self.save_browser(web))

    def feedback(self, web: WebSession | None, like: gr.LikeData) -> None:
        index = like.index if isinstance(like.index, int) else like.index[0]
        if web is None:
            return
        record = record_for_like(
            web.chat, index, like.liked, session=web.session.id, language=web.session.language
        )
        if record is not None:
            append_feedback(feedback_path(self.settings.data_dir), record)
            inform(web.language, ui_text(web.language, "feedback_saved"))

    # -- the session: load, new conversation, languages ------------------------------------

    def restore(self, raw: Any, request: gr.Request) -> tuple[Any, ...]:
        """The session the browser saved (or a new one in the browser's language), with its
        panel recomputed from the job: session, chat, the two language choices, form, panel."""
        header = request.headers.get("accept-language") if request else None
        web = WebSession.from_browser(self.seal.open(raw), language_from_header(header))
        if web.session.state.model is not None:
            web.panel = compute_panel(web.session.state, self.catalog_for(web))
        session, chat, *rest = self.job_outputs(web)
        return (session, chat, web.ui_lang, web.answer_lang, *rest)

    @one_at_a_time
    def save_browser(self, web: WebSession) -> str:
        """What the browser keeps for `web`, sealed (see `assistant.web.state.sealed`)."""
        return self.seal.seal(web.to_browser())

    def reset(self, web: WebSession | None) -> tuple[Any, ...]:
        """A new conversation: chat, job, form and panel cleared, and the saved record replaced
        (the languages stay): session, chat, form, panel, then what the browser keeps."""
        fresh = web.fresh() if web is not None else WebSession()
        if web is not None:  # the tab's uploaded prices are the tab's, not the conversation's
            self.tab_catalogs.move(web.session.id, fresh.session.id)
        return (*self.job_outputs(fresh), self.save_browser(fresh))

    @one_at_a_time
    def set_ui_language(self, web: WebSession | None, lang: str) -> tuple[Any, ...]:
        """Everything the server writes, again in interface language `lang`."""
        web = web if web is not None else WebSession()
        web.ui_lang = ui_lang(lang)
        return self.job_outputs(web)

    @one_at_a_time
    def set_answer_language(self, web: WebSession | None, lang: str) -> WebSession:
        web = web if web is not None else WebSession()
        web.answer_lang = lang or "auto"
        return web

    # -- the job panel ---------------------------------------------------------------------

    def _changed(self, web: WebSession, before: JobSpec, data: PanelData) -> None:
        """A new job from the form or an upload: its panel, its #1 for the launch spec, and one
        chat message saying what changed (the next edit replaces it)."""
        web.panel, web.chosen = data, None
        text = form_update_message(before, data, web.session.language or web.language)
        if text is None:
            return
        if web.form_message_at is not None and web.form_message_at == len(web.chat) - 1:
            web.chat = web.chat[:-1]
        web.chat = [*web.chat, {"role": "assistant", "content": text}]
        web.form_message_at = len(web.chat) - 1

    @guarded(_JOB_OUTPUTS, _lang)
    @one_at_a_time
    def apply_form(self, web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        """The form's values (FORM_FIELDS order, then the currency) amend the job."""
        web = web if web is not None else WebSession()
        *fields, currency = values
        before = web.session.state
        form = values_from_widgets(dict(zip(FORM_FIELDS, fields, strict=True)), currency)
        after = spec_from_form(form, before)
        if after == before:  # nothing new (one dropdown pick arrives twice): nothing to redraw
            return _skipped(_JOB_OUTPUTS)
        web.session.state = after
        self._changed(web, before, compute_panel(after, self.catalog_for(web)))
        return self.job_outputs(web)

    @guarded(_JOB_OUTPUTS, _lang)
    @one_at_a_time
    def upload(self, web: WebSession | None, path: str | None) -> tuple[Any, ...]:
        """An uploaded config.json becomes the job's model; nothing else changes. A file that
        cannot be used is one warning saying why and what is valid; the form stays as it was."""
        web = web if web is not None else WebSession()
        if not path:
            return _skipped(_JOB_OUTPUTS)
        file = Path(path)
        try:
            arch = model_from_upload(file, web.language)
        except UploadError as exc:
            warn(web.language, upload_problem(exc, file.name, web.language))
            return _skipped(_JOB_OUTPUTS)
        before = web.session.state
        web.session.state = before.model_copy(update={"model": arch})
        data = compute_panel(web.session.state, self.catalog_for(web))
        data.notes.insert(
            0,
            PanelNote(key="upload_done", values={"name": arch.name, "params": arch.total_params()}),
        )
        self._changed(web, before, data)
        return self.job_outputs(web)

    @guarded(LAUNCH_OUTPUTS, _lang)
    @one_at_a_time
    def pick(self, web: WebSession | None, chosen: str | None) -> tuple[Any, ...]:
        """The launch spec of the instance `chosen` (a ranked row's id)."""
        web = web if web is not None else WebSession()
        web.chosen = chosen
        return self.outputs_for(web).launch_outputs(web)

    def pick_row(self, web: WebSession | None, selected: gr.SelectData) -> tuple[Any, ...]:
        """The launch spec of the ranked row the user selected (its instance id, so a sorted
        table picks the row shown)."""
        row = selected.row_value if isinstance(selected.row_value, list) else []
        chosen = str(row[1]) if len(row) > 1 else None
        if chosen is None:
            return _skipped(LAUNCH_OUTPUTS)
        return self.pick(web, chosen)
