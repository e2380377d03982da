"""Random and extreme page events never break a session (issue 26): chat messages, uploads,
form edits, language switches, picks and new conversations with huge, NaN, negative, markup,
long and wrongly typed values. After every sequence the session still answers a plain job
question, no handler failed with a bug (the log's "web handler ... failed"), and nothing a user
or a file wrote reaches the chat as markup (images, links, HTML).

100 sequences of 9 random events and the closing question: 1,000 page events a run (the same
ones every run: derandomized).
"""

from __future__ import annotations

import json
import logging
import math
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.agent.conversation import Assistant
from assistant.web.blocks import App
from assistant.web.form import FORM_FIELDS
from assistant.web.state.session import WebSession
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalogs import web_catalog
from tests.fakes.jobs import LLAMA_8B_CONFIG

SEQUENCES = 100
FORM_VALUES = len(FORM_FIELDS) + 1  # the fields, then the currency
EVENTS = 9
MARKUP = ["**bold**", "[link](http://x.example)", "![i](http://evil.example/a.png)",
          "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "`code`"]  # fmt: skip
EXTREME = st.sampled_from(
    [0, -1, 1, 2**63, 10**21, -(10**9), 1e309, -1e309, math.nan, 0.5, 1e-300, "", " ",
     "NaN", "inf", "-5", "1e400", "七", "x" * 5000, None, True, [], {}, *MARKUP]
)  # fmt: skip
WORDS = st.sampled_from(
    ["QLoRA", "LoRA on Llama 3.1 8B", "full fine-tune", "70B", "spot", "200M tokens",
     "under $3/h", "why not an H100?", "A100 or H100?", "what is ZeRO?", "8k context",
     "10^400 tokens", "NaN tokens", "1e309 tokens", "use 99999999999 GPUs", "bonjour",
     "günaydın", "FLUX LoRA", "SDXL at 1024 res", "", "\u200b", "🙂", *MARKUP]
)  # fmt: skip
LANGS = st.sampled_from(["en", "nl", "fr", "tr", "de", "es", "auto", "xx", ""])


def _config(values: list[Any]) -> dict[str, Any]:
    config: dict[str, Any] = dict(LLAMA_8B_CONFIG)
    keys = ["num_hidden_layers", "hidden_size", "vocab_size", "intermediate_size",
            "num_attention_heads", "_name_or_path", "model_type"]  # fmt: skip
    for key, value in zip(keys, values, strict=False):
        config[key] = value
    return config


EVENT = st.one_of(
    st.tuples(st.just("chat"), st.lists(WORDS, min_size=1, max_size=3).map(" ".join)),
    st.tuples(st.just("upload"), st.lists(EXTREME, min_size=1, max_size=4)),
    st.tuples(st.just("form"), st.lists(EXTREME, min_size=FORM_VALUES, max_size=FORM_VALUES)),
    st.tuples(st.just("lang"), LANGS),
    st.tuples(st.just("pick"), st.sampled_from([None, "", "nope/x", *MARKUP])),
    st.tuples(st.just("reset"), st.just(None)),
)


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> App:
    data = tmp_path_factory.mktemp("fuzz") / "data"
    config = make_settings(data)
    return App(config, Assistant(config, knowledge=TinyKnowledge(), catalog=web_catalog()))


def _run(ui: App, web: WebSession, event: tuple[str, Any], folder: Path) -> None:
    kind, value = event
    if kind == "chat":
        list(ui.respond(value, web.language, web))
    elif kind == "upload":
        path = folder / "config.json"
        try:
            path.write_text(json.dumps(_config(value)), encoding="utf-8")
        except ValueError:  # a value JSON cannot hold: send the bytes as they are
            path.write_text(str(_config(value)), encoding="utf-8")
        ui.upload(web, str(path))
    elif kind == "form":
        ui.apply_form(web, *value)
    elif kind == "lang":
        ui.set_ui_language(web, value)
        ui.set_answer_language(web, value)
    elif kind == "pick":
        ui.pick(web, value)
    else:
        ui.reset(web)


def _shown(ui: App, web: WebSession) -> str:
    """The chat as the page receives it."""
    out = ui.chat_output(web)
    messages = out.get("value", out) if isinstance(out, dict) else out
    return json.dumps(messages, ensure_ascii=False, default=str)


@settings(
    max_examples=SEQUENCES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(events=st.lists(EVENT, min_size=EVENTS, max_size=EVENTS))
def test_random_page_events_never_break_the_session(
    ui: App, tmp_path_factory: pytest.TempPathFactory, events: list[tuple[str, Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    folder = tmp_path_factory.mktemp("upload")
    web = WebSession()
    caplog.clear()
    with caplog.at_level(logging.ERROR), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the refusals' toasts
        for event in events:
            _run(ui, web, event, folder)
        ui.set_answer_language(web, "en")
        list(ui.respond("LoRA on Llama 3.1 8B, 100M tokens", "en", web))
    bugs = [r.getMessage() for r in caplog.records if "failed; error id" in r.getMessage()]
    assert not bugs, f"a handler hit a bug after {events}: {bugs}"
    last = web.chat[-1]
    assert last["role"] == "assistant" and "GiB" in str(last["content"]), (events, last)
    shown = _shown(ui, web)
    for bad in ("<img", "<script", "](http://x.example)", "![i]"):
        assert bad not in shown, f"{bad!r} reached the chat as markup after {events}"
