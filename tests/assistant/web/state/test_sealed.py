"""The browser's record sealed on the server: it opens only intact and under our key, and the
key never reaches a client (Gradio's /config carries only a one-way derivative)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

import app
from assistant.agent.conversation import Assistant
from assistant.web.state.sealed import MAX_TOKEN_CHARS, BrowserSeal
from assistant.web.state.session import BROWSER_KEY_FILE, WebSession
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalogs import web_catalog

RECORD = {"version": 2, "chat": [{"role": "user", "content": "<b>hi</b> ünïcode"}]}


def test_a_sealed_record_opens_back_and_hides_its_content() -> None:
    seal = BrowserSeal("k" * 32)
    token = seal.seal(RECORD)
    assert seal.open(token) == RECORD
    # whole words of the record, in the clear or base64-encoded at any alignment: a random token
    # holds a given 2-letter string by chance (about 1 in 40), a 24-letter one never
    secret = "confidential-conversation"
    hidden = seal.seal({"version": 2, "chat": [{"role": "user", "content": secret}]})
    encodings = {
        base64.b64encode(pad + secret.encode()).decode()[4:20] for pad in (b"", b"x", b"xx")
    }
    assert secret not in hidden and not any(e in hidden for e in encodings), "opaque to the browser"
    assert seal.seal(RECORD) != token, "a fresh IV each time"


@pytest.mark.parametrize(
    "token",
    [None, "", 42, {"version": 2}, "not a token", "x" * (MAX_TOKEN_CHARS + 1)],
)
def test_anything_but_an_intact_token_opens_as_nothing(token: object) -> None:
    assert BrowserSeal("k" * 32).open(token) is None


def test_an_altered_token_or_another_key_opens_as_nothing() -> None:
    seal = BrowserSeal("k" * 32)
    token = seal.seal(RECORD)
    flipped = token[:40] + ("A" if token[40] != "A" else "B") + token[41:]
    assert seal.open(flipped) is None, "tampering is detected"
    assert BrowserSeal("j" * 32).open(token) is None, "another server's key"
    array = seal.seal([1, 2])  # type: ignore[arg-type]
    assert seal.open(array) is None, "a record is an object"


def test_the_gradio_secret_is_stable_and_not_the_key() -> None:
    seal = BrowserSeal("k" * 32)
    assert seal.gradio_secret == BrowserSeal("k" * 32).gradio_secret
    assert seal.gradio_secret != BrowserSeal("j" * 32).gradio_secret
    assert "k" * 8 not in seal.gradio_secret and len(seal.gradio_secret) == 64


def test_the_key_file_never_reaches_the_page_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    settings = make_settings(tmp_path / "data")
    assistant = Assistant(settings, knowledge=TinyKnowledge(), catalog=web_catalog())
    demo = app.build_demo(settings, assistant=assistant)
    key = (settings.data_dir / BROWSER_KEY_FILE).read_text(encoding="utf-8").strip()
    config = json.dumps(demo.get_config_file(), default=str)
    assert len(key) >= 32 and key not in config, "the key stays on the server"
    assert BrowserSeal(key).gradio_secret in config, "only its one-way derivative is sent"
    web = WebSession(ui_lang="nl")
    restored = WebSession.from_browser(
        BrowserSeal(key).open(BrowserSeal(key).seal(web.to_browser()))
    )
    assert restored.ui_lang == "nl"
