"""One browser session of the web app: the conversation, the chat as shown, the panel, and the
two language choices.

The server keeps a `WebSession` per browser tab (never shared between tabs). What a reload must
bring back exactly (the conversation and its job, the chat messages, the chosen launch row, the
interface language and the answer-language choice) is saved in the browser with `to_browser` and
read back with `from_browser`; the panel is recomputed from the job. A new conversation saves a
fresh record, so the old one cannot come back.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from assistant.agent.conversation import Session
from assistant.web.panel import PanelData
from assistant.web.ui_strings import ui_lang
from tools.languages import LANGUAGES

BROWSER_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1 lacked the languages and the launch choice
MAX_SAVED_MESSAGES = 200  # chat messages kept in the browser (tool calls and citations count)
BROWSER_KEY_FILE = "browser-state.key"
AUTO = "auto"  # the answer-language choice that follows each message


class SessionLock:
    """What lets the handlers of one tab change its session one at a time. Gradio runs a tab's
    events in parallel threads (one pick in a dropdown alone sends two events), and each handler
    reads the session, computes and writes it back: unserialised, one handler's write can hide
    another's. Re-entrant, so a handler may call another; a copy of the session gets its own."""

    def __init__(self) -> None:
        self._lock = threading.RLock()

    def __enter__(self) -> SessionLock:
        self._lock.acquire()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._lock.release()

    def __deepcopy__(self, _memo: dict[int, Any]) -> SessionLock:
        return SessionLock()


H = TypeVar("H", bound=Callable[..., Any])


def one_at_a_time(handler: H) -> H:
    """A handler method (`handler(self, web, ...)`) that holds its tab's session lock while it
    runs (see `SessionLock`): Gradio runs a tab's events in parallel, and without it two
    handlers reading and writing the same session could each return what the other had not
    written yet."""

    @wraps(handler)
    def call(self: Any, web: WebSession | None, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(web, WebSession):
            return handler(self, web, *args, **kwargs)
        with web.lock:
            return handler(self, web, *args, **kwargs)

    return call  # type: ignore[return-value]


class WebSession(BaseModel):
    """Server-side state of one browser tab."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: Session = Field(default_factory=Session)
    chat: list[dict[str, Any]] = Field(
        default_factory=list, description="messages as the chat shows them (role, content, ...)"
    )
    panel: PanelData = Field(default_factory=PanelData)
    chosen: str | None = Field(default=None, description="instance id of the launch spec")
    ui_lang: str = Field(default="en", description="the interface language")
    answer_lang: str = Field(default=AUTO, description="'auto' or the language answers are in")
    form_message_at: int | None = Field(
        default=None, description="index in `chat` of the message the last form edit added"
    )
    _lock: SessionLock = PrivateAttr(default_factory=SessionLock)
    # what a chat turn last sent this tab's form and panel, or None when unknown
    # (opaque here: `assistant.web.blocks.outputs.Outputs.after_turn`)
    _sent: object | None = PrivateAttr(default=None)

    @property
    def sent(self) -> object | None:
        return self._sent

    @sent.setter
    def sent(self, record: object | None) -> None:
        self._sent = record

    @property
    def lock(self) -> SessionLock:
        """Held by each handler while it reads and changes this session (see `SessionLock`)."""
        return self._lock

    @property
    def language(self) -> str:
        """The interface language: every label, table, chart and hint the server renders."""
        return ui_lang(self.ui_lang)

    @property
    def answer_override(self) -> str | None:
        """The language answers must be in, or None to follow each message."""
        return self.answer_lang if self.answer_lang in LANGUAGES else None

    def to_browser(self) -> dict[str, Any]:
        """What the browser keeps: the conversation, the recent chat, the choices."""
        return {
            "version": BROWSER_VERSION,
            "session": self.session.model_dump(mode="json"),
            "chat": self.chat[-MAX_SAVED_MESSAGES:],
            "chosen": self.chosen,
            "ui_lang": self.ui_lang,
            "answer_lang": self.answer_lang,
        }

    def fresh(self) -> WebSession:
        """A new conversation in this tab: nothing kept but the two language choices."""
        return WebSession(ui_lang=self.ui_lang, answer_lang=self.answer_lang)

    @classmethod
    def from_browser(cls, raw: object, ui_lang: str = "en") -> WebSession:
        """The session the browser saved; a missing, unknown or damaged record starts afresh in
        `ui_lang` (the browser's language)."""
        if not isinstance(raw, dict) or raw.get("version") not in READABLE_VERSIONS:
            return cls(ui_lang=ui_lang)
        try:
            session = Session.model_validate(raw.get("session") or {})
        except ValidationError:
            return cls(ui_lang=ui_lang)
        chat = [m for m in raw.get("chat") or [] if _is_message(m)]
        saved_ui = raw.get("ui_lang")
        answer = raw.get("answer_lang")
        chosen = raw.get("chosen")
        return cls(
            session=session,
            chat=chat,
            chosen=chosen if isinstance(chosen, str) else None,
            ui_lang=saved_ui if saved_ui in LANGUAGES else ui_lang,
            answer_lang=answer if answer in (AUTO, *LANGUAGES) else AUTO,
        )


def _is_message(item: object) -> bool:
    return (
        isinstance(item, dict)
        and item.get("role") in ("user", "assistant")
        and isinstance(item.get("content"), str)
    )


def browser_secret(data_dir: Path) -> str:
    """The key the browser's saved conversation is encrypted with. It is kept in `data_dir`
    (created owner-only on first use) so a saved conversation survives a server restart."""
    path = data_dir / BROWSER_KEY_FILE
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(24)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(value)
    return value
