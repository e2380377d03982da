"""One browser session of the web app: the conversation, the chat as shown, and the panel.

The server keeps a `WebSession` per browser tab (never shared between tabs). The part worth keeping
across a page reload (the conversation and the chat messages, not the panel, which is recomputed
from the job state) is saved in the browser with `to_browser` and read back with `from_browser`.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assistant.agent.conversation import Session
from assistant.web.panel import PanelData

BROWSER_VERSION = 1
MAX_SAVED_MESSAGES = 200  # chat messages kept in the browser (tool calls and citations count)
BROWSER_KEY_FILE = "browser-state.key"


class WebSession(BaseModel):
    """Server-side state of one browser tab."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: Session = Field(default_factory=Session)
    chat: list[dict[str, Any]] = Field(
        default_factory=list, description="messages as the chat shows them (role, content, ...)"
    )
    panel: PanelData = Field(default_factory=PanelData)
    chosen: str | None = Field(default=None, description="instance id of the launch spec")
    ui_lang: str = Field(default="en", description="the browser's language, before any answer")

    @property
    def language(self) -> str:
        """Language of server-rendered text: the conversation's, else the browser's."""
        return self.session.language or self.ui_lang

    def to_browser(self) -> dict[str, Any]:
        """What the browser keeps: the conversation and the most recent chat messages."""
        return {
            "version": BROWSER_VERSION,
            "session": self.session.model_dump(mode="json"),
            "chat": self.chat[-MAX_SAVED_MESSAGES:],
        }

    @classmethod
    def from_browser(cls, raw: object, ui_lang: str = "en") -> WebSession:
        """The session the browser saved; a missing, old or damaged record starts afresh."""
        if not isinstance(raw, dict) or raw.get("version") != BROWSER_VERSION:
            return cls(ui_lang=ui_lang)
        try:
            session = Session.model_validate(raw.get("session") or {})
        except ValidationError:
            return cls(ui_lang=ui_lang)
        chat = [m for m in raw.get("chat") or [] if _is_message(m)]
        return cls(session=session, chat=chat, ui_lang=ui_lang)


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
