"""A browser session saved in and restored from the browser."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from assistant.agent.conversation import Session
from assistant.web.state.session import MAX_SAVED_MESSAGES, WebSession, browser_secret
from tools.job import JobSpec


def test_a_reload_brings_back_exactly_the_last_state() -> None:
    web = WebSession(
        session=Session(language="tr", state=JobSpec(model="70B")),
        ui_lang="de",
        answer_lang="tr",
        chosen="aws/p5.48xlarge",
    )
    web.chat = [{"role": "user", "content": "70B"}, {"role": "assistant", "content": "tamam"}]
    back = WebSession.from_browser(web.to_browser(), ui_lang="en")
    assert back.session == web.session and back.chat == web.chat
    assert (back.ui_lang, back.answer_lang, back.chosen) == ("de", "tr", "aws/p5.48xlarge")
    assert back.language == "de", "the interface keeps its own language, whatever answers are in"
    assert back.answer_override == "tr" and WebSession().answer_override is None


def test_a_new_conversation_keeps_only_the_language_choices() -> None:
    web = WebSession(
        session=Session(language="tr", state=JobSpec(model="70B")),
        ui_lang="fr",
        answer_lang="de",
        chosen="x",
        chat=[{"role": "user", "content": "hi"}],
    )
    fresh = web.fresh()
    assert (fresh.chat, fresh.session.state, fresh.chosen) == ([], JobSpec(), None)
    assert (fresh.ui_lang, fresh.answer_lang) == ("fr", "de")
    assert fresh.session.id != web.session.id, "a new conversation id"
    saved = fresh.to_browser()
    assert saved["chat"] == [] and saved["session"]["history"] == [], "the record is replaced"
    assert not any(saved["session"]["state"].values()), "with an empty job"


def test_damaged_or_foreign_records_start_afresh_in_the_browser_language() -> None:
    for raw in (None, "text", {"version": 99}, {"version": 2, "session": {"state": {"x": 1}}}):
        fresh = WebSession.from_browser(raw, ui_lang="fr")
        assert fresh.chat == [] and fresh.session.state == JobSpec(), f"{raw!r}"
        assert fresh.language == "fr"
    mixed = {"version": 1, "session": {}, "chat": [{"role": "user", "content": "hi"}, {"x": 1}]}
    assert WebSession.from_browser(mixed).chat == [{"role": "user", "content": "hi"}]
    odd = {"version": 2, "session": {}, "ui_lang": "xx", "answer_lang": 3, "chosen": 4}
    back = WebSession.from_browser(odd, ui_lang="es")
    assert (back.ui_lang, back.answer_lang, back.chosen) == ("es", "auto", None)


def test_only_recent_messages_are_saved() -> None:
    web = WebSession(chat=[{"role": "user", "content": str(i)} for i in range(250)])
    saved = web.to_browser()["chat"]
    assert len(saved) == MAX_SAVED_MESSAGES and saved[0]["content"] == "50"


def test_an_uploaded_model_is_part_of_the_saved_job() -> None:
    from tools.architectures.registry import lookup_model

    arch = lookup_model("llama 3.1 8b").model_copy(update={"source": "uploaded config.json"})
    web = WebSession(session=Session(state=JobSpec(model=arch, method="lora")))
    back = WebSession.from_browser(web.to_browser())
    assert back.session.state.model == arch, "the architecture survives a reload"


def test_a_version_1_session_is_read_with_todays_field_names() -> None:
    old = {
        "version": 1,
        "session": {"version": 1, "state": {"model": "70B", "dataset_tokens": 2e8, "region": "eu"}},
    }
    web = WebSession.from_browser(old)
    assert web.session.state == JobSpec(model="70B", tokens=2e8, regions=["eu"]), "nothing lost"


def test_browser_secret_is_made_once_owner_only_and_reused(tmp_path: Path) -> None:
    first = browser_secret(tmp_path / "data")
    assert len(first) >= 32 and browser_secret(tmp_path / "data") == first
    mode = stat.S_IMODE(os.stat(tmp_path / "data" / "browser-state.key").st_mode)
    assert mode == 0o600, "readable by its owner only"
