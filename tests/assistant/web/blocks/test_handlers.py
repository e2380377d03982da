"""The Gradio handlers called directly (no server): what each returns and what it leaves alone.

A refused message or upload warns once and leaves every output as it was (`gr.skip()`), so no
component turns to an error state; a form edit or an upload changes only what it determines and
says so in the chat; a new conversation replaces the saved record; a reload brings back the
languages and the launch row.
"""

from __future__ import annotations

import inspect
import json
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

import assistant.agent.toolbox as toolbox
import assistant.web.blocks.handlers as handlers
from assistant.agent.conversation import MAX_MESSAGE_CHARS, Assistant, Session
from assistant.web.blocks import App, build_demo
from assistant.web.blocks.common import guarded
from assistant.web.blocks.outputs import FORM_OUTPUTS, LAUNCH_OUTPUTS, PANEL_OUTPUTS
from assistant.web.form import FORM_FIELDS, form_values
from assistant.web.state.feedback import read_feedback
from assistant.web.state.session import WebSession
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalogs import web_catalog
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.jobs import LLAMA_8B_CONFIG
from tools.architectures.architecture import ModelArch
from tools.catalog.instances import Catalog
from tools.job import JobSpec

SKIP = {"__type__": "update"}
JOB_OUTPUTS = 2 + FORM_OUTPUTS + PANEL_OUTPUTS


@pytest.fixture
def ui(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> App:
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    settings = make_settings(tmp_path / "data")
    return App(settings, Assistant(settings, knowledge=TinyKnowledge(), catalog=web_catalog()))


def _warnings(run: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run()
    return result, [str(w.message) for w in caught if w.category is UserWarning]


def _turn(ui: App, text: str, web: WebSession, lang: str = "en") -> list[Any]:
    updates: Iterator[Any] = ui.respond(text, lang, web)
    return list(updates)


def _file(tmp_path: Path, content: bytes | dict[str, object], name: str = "config.json") -> str:
    path = tmp_path / name
    path.write_bytes(json.dumps(content).encode() if isinstance(content, dict) else content)
    return str(path)


def test_feedback_votes_are_stored_and_taken_back_votes_ignored(ui: App, tmp_path: Path) -> None:
    web = WebSession(
        chat=[{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "A"}]
    )
    ui.feedback(web, gr.LikeData(None, {"index": 1, "value": "A", "liked": True}))
    ui.feedback(web, gr.LikeData(None, {"index": 1, "value": "A", "liked": None}))
    records = read_feedback(tmp_path / "data" / "feedback.jsonl")
    assert [(r.rating, r.question, r.answer) for r in records] == [("up", "Q?", "A")]


@pytest.mark.parametrize(
    ("content", "name", "problem"),
    [
        (b"not json at all", "config.json", "it is not valid JSON (1:1)"),
        (b"[1, 2, 3]", "config.json", "it holds a JSON array, not an object"),
        (b"plain text", "notes.txt", "it is not a .json file"),
        (b"{" + b" " * 1_000_001 + b"}", "config.json", "it has 1,000,003 bytes, over the limit"),
    ],
)
def test_a_bad_upload_warns_and_leaves_the_form_and_job_as_they_were(
    ui: App, tmp_path: Path, content: bytes, name: str, problem: str
) -> None:
    web = WebSession(session=Session(state=JobSpec(model="7B", method="lora")))
    outputs, said = _warnings(lambda: ui.upload(web, _file(tmp_path, content, name)))
    assert list(outputs) == [SKIP] * JOB_OUTPUTS, "no output changes, none turns to an error"
    assert said == [
        f"{name} was not used: {problem}. Upload a model's config.json: one JSON "
        "object with model_type, hidden_size, num_hidden_layers and the other "
        "dimensions, at most 1,000,000 bytes. Nothing else changed."
    ]
    assert web.session.state == JobSpec(model="7B", method="lora") and web.chat == []


def test_a_config_with_absurd_dimensions_is_refused_and_the_chat_answers_on(
    ui: App, tmp_path: Path
) -> None:
    """10^21 layers crashed the turn's number formatting and every later message showed an
    error (issue 26, defect 1): now the file is refused naming the key, and the chat goes on."""
    web = WebSession()
    huge = {**LLAMA_8B_CONFIG, "num_hidden_layers": 10**21}
    outputs, said = _warnings(lambda: ui.upload(web, _file(tmp_path, huge)))
    assert list(outputs) == [SKIP] * JOB_OUTPUTS
    assert len(said) == 1 and "num_hidden_layers = 1000000000000000000000 &gt; 10,000" in said[0]
    for message in ("QLoRA on Llama 3.1 8B, 100M tokens", "what about full fine-tuning?"):
        _turn(ui, message, web)
        answer = web.chat[-1]["content"]
        assert web.chat[-1]["role"] == "assistant" and "GiB" in answer, answer


def test_a_good_upload_changes_only_the_model_and_says_so(ui: App, tmp_path: Path) -> None:
    web = WebSession(session=Session(state=JobSpec(method="lora", seq_len=1024)))
    outputs = ui.upload(web, _file(tmp_path, LLAMA_8B_CONFIG))
    assert len(outputs) == JOB_OUTPUTS and outputs[0] is web
    state = web.session.state
    assert isinstance(state.model, ModelArch) and state.model.total_params() == 8_030_261_248
    assert state.model_copy(update={"model": None}) == JobSpec(method="lora", seq_len=1024)
    form = dict(zip(FORM_FIELDS, outputs[2 : 2 + len(FORM_FIELDS)], strict=True))
    assert form["model"]["value"] == "my-llama" and form["seq_len"]["value"] == 1024
    blank = ("tokens", "budget", "micro_batch_size")
    assert [form[f]["value"] for f in blank] == [None, None, None]
    assert form["spot"]["value"] is None and form["spot"]["info"] == "assumed: no spot"
    assert web.panel.estimate is not None and web.panel.estimate.model_name == "my-llama"
    assert web.chat[-1]["content"].startswith("_Updated from the form: model my-llama._")
    download = outputs[-1]
    assert isinstance(download, gr.DownloadButton) and download.visible
    saved = Path(download.value["path"])
    assert json.loads(saved.read_text(encoding="utf-8"))["model"] == "my-llama"


def test_form_edits_reset_the_launch_row_and_replace_their_own_chat_message(ui: App) -> None:
    web = WebSession()
    _turn(ui, "LoRA on Llama 3.1 8B, 100M tokens", web)
    turns = len(web.chat)
    web.chosen = web.panel.ranking.ranked[-1].instance_id if web.panel.ranking else None
    values = dict.fromkeys(FORM_FIELDS) | {
        "model": "meta-llama/Llama-3.1-8B",
        "method": "full",
        "tokens": 100,
    }
    ui.apply_form(web, *values.values(), "USD")
    assert web.session.state.method == "full" and web.session.state.precision is None
    assert web.panel.ranking is not None and web.chosen == web.panel.ranking.ranked[0].instance_id
    assert web.chosen != web.panel.ranking.ranked[-1].instance_id, "follows the new job's #1"
    assert len(web.chat) == turns + 1 and "method full fine-tuning" in web.chat[-1]["content"]
    ui.apply_form(web, *(values | {"method": "qlora"}).values(), "USD")
    assert len(web.chat) == turns + 1, "the next edit replaces the last edit's message"
    assert "method QLoRA" in web.chat[-1]["content"]
    _turn(ui, "only spot", web)
    assert (web.session.state.method, web.session.state.spot) == ("qlora", "required")


def test_an_empty_or_over_long_message_is_refused_before_anything_is_sent(
    ui: App, capsys: pytest.CaptureFixture[str]
) -> None:
    web = WebSession(chat=[{"role": "user", "content": "earlier"}])
    updates, said = _warnings(lambda: _turn(ui, "x" * (5 * MAX_MESSAGE_CHARS), web))
    assert updates == [(web.chat, web)] and web.session.history == []
    assert said == [
        "Your message has 20,000 characters; the limit is 4,000. Shorten it and "
        "send it again: nothing was sent."
    ]
    _turn(ui, "   ", web)
    assert capsys.readouterr().out == "Type a message first, or pick one of the examples.\n"
    assert web.chat == [{"role": "user", "content": "earlier"}]


def test_a_new_conversation_clears_everything_and_replaces_the_saved_record(ui: App) -> None:
    web = WebSession(ui_lang="fr", answer_lang="de")
    _turn(ui, "QLoRA on Llama 3.1 8B", web)
    outputs = ui.reset(web)
    fresh, chat, saved = outputs[0], outputs[1], outputs[-1]
    assert chat.value == [] and fresh.chat == [] and fresh.session.state == JobSpec()
    record = ui.seal.open(saved)
    assert record is not None and record == fresh.to_browser() and record["chat"] == [], (
        "a record, not None: it replaces"
    )
    assert (fresh.ui_lang, fresh.answer_lang) == ("fr", "de"), "the language choices stay"
    assert outputs[2 + FORM_OUTPUTS - 1]["open"] is False, "the form folds again"


def test_a_reload_restores_chat_job_languages_and_launch_row(ui: App) -> None:
    web = WebSession(ui_lang="tr", answer_lang="auto")
    _turn(ui, "QLoRA on Llama 3.1 8B, 100M tokens", web)
    assert web.panel.ranking is not None
    web.chosen = web.panel.ranking.ranked[1].instance_id
    outputs = ui.restore(ui.save_browser(web), None)  # type: ignore[arg-type]
    back = outputs[0]
    assert back.chat == web.chat and back.session.state == web.session.state
    assert outputs[2:4] == ("tr", "auto"), "the language dropdowns"
    assert back.chosen == web.chosen, "the launch spec stays on the row picked"
    assert back.panel.ranking is not None and back.panel.ranking.ranked[0].instance_id == (
        web.panel.ranking.ranked[0].instance_id
    )
    form_box = outputs[3 + FORM_OUTPUTS]
    assert form_box["open"] is True, "a job unfolds the form"


def test_a_new_interface_language_rerenders_what_the_server_wrote(ui: App) -> None:
    web = WebSession()
    _turn(ui, "LoRA on Llama 3.1 8B", web)
    outputs = ui.set_ui_language(web, "de")
    assert web.ui_lang == "de" and web.session.language == "en", "answers keep their language"
    ranked = outputs[2 + FORM_OUTPUTS + 6]
    assert ranked["value"]["headers"][3] == "Aufbau"
    assert outputs[1].examples[0]["text"].startswith("LoRA für Llama 3.1 8B")


def test_a_selected_row_picks_the_launch_spec(ui: App) -> None:
    web = WebSession()
    _turn(ui, "LoRA on Llama 3.1 8B", web)
    assert web.panel.ranking is not None
    second = web.panel.ranking.ranked[1]
    row = [str(second.rank), second.instance_id]
    selected = gr.SelectData(None, {"index": [1, 3], "value": "x", "row_value": row})
    outputs = ui.pick_row(web, selected)
    assert len(outputs) == LAUNCH_OUTPUTS and web.chosen == second.instance_id
    assert f"instance_type: {second.instance_type}" in outputs[2]


def test_a_bug_in_a_handler_is_one_line_with_an_error_id(caplog: pytest.LogCaptureFixture) -> None:
    @guarded(2, lambda *_: "fr")
    def broken() -> tuple[Any, Any]:
        raise RuntimeError("boom")

    outputs, said = _warnings(broken)
    assert outputs == (SKIP, SKIP)
    assert len(said) == 1 and said[0].startswith("Une erreur s'est produite (erreur ")
    assert "boom" not in said[0] and "Traceback" not in said[0], "no traceback on the page"
    assert "boom" in caplog.text, "the traceback goes to the log"


def test_a_turn_whose_tool_fails_leaves_job_panel_and_launch_row_as_they_were(
    ui: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    web = WebSession()
    _turn(ui, "LoRA on Llama 3.1 8B, 100M tokens", web)
    assert web.panel.ranking is not None and web.panel.estimate is not None
    web.chosen = web.panel.ranking.ranked[1].instance_id
    state, panel, chosen = web.session.state, web.panel, web.chosen

    def failing_tool(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("injected fault in rank_instances")

    monkeypatch.setattr(toolbox, "rank_job", failing_tool)
    _turn(ui, "QLoRA on Llama 3.1 70B instead", web)
    tools = [(m.get("metadata") or {}).get("title") for m in web.chat[-3:-1]]
    assert tools == ["estimate_memory", "rank_instances"], "the 70B estimate ran, then the fault"
    assert "went wrong" in web.chat[-1]["content"], "one apology line"
    assert web.session.state == state, "the job is the one before the failed turn"
    assert (web.panel, web.chosen) == (panel, chosen), "the 70B estimate never reached the panel"
    assert web.panel.estimate is not None and "8B" in web.panel.estimate.model_name
    monkeypatch.undo()
    _turn(ui, "QLoRA on Llama 3.1 70B instead", web)
    assert web.session.state.method == "qlora" and web.panel is not panel, "the next turn works"


def test_html_in_a_message_is_shown_as_text_and_stored_as_written(ui: App) -> None:
    web = WebSession()
    text = 'LoRA on Llama 3.1 8B <img src="https://evil.example/x.png"> ![](https://evil.example/q)'
    updates = _turn(ui, text, web)
    shown = updates[-1][0]
    assert shown[0]["content"].startswith("LoRA on Llama 3.1 8B &lt;img"), "the tag as text"
    assert all("<img" not in m["content"] and "![" not in m["content"] for m in shown)
    assert web.chat[0]["content"] == text, "the conversation keeps what was written"
    restored = str(ui.chat_output(web).value)  # what a reload shows
    assert "&lt;img" in restored and "<img" not in restored


def test_the_app_follows_the_catalog_a_price_refresh_reloads(ui: App) -> None:
    """After the background refresh's reload, the panel, tables and catalog tab use the new
    prices; until then, the catalog read at start."""
    before = ui.catalog()
    assert len(ui.instances()) == 3
    fewer = Catalog([item for item in before if item.provider != "runpod"])
    ui.assistant.resources._load_catalog = lambda: fewer  # what load_catalog reads after a refresh
    assert ui.catalog() is before, "no reload asked: the catalog stays"
    ui.assistant.resources.reload_catalog()
    assert ui.catalog() is fewer and sorted(ui.instances()) == sorted(i.id for i in fewer)
    assert ui.outputs is ui.outputs, "the outputs are rebuilt once per new catalog"


def _edits_at_once(
    ui: App, web: WebSession, edits: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> list[tuple[Any, ...]]:
    """Apply `edits` (form values) in parallel threads, as Gradio runs a tab's events: the first
    edit's panel is slowed until the others have returned (or 1 s passed, when they wait for it),
    so the others run inside its read-compute-write, the window the browser hit under load."""
    others_done = threading.Event()
    first = threading.Event()
    real = handlers.compute_panel
    calls: list[int] = []

    def slow(state: JobSpec, catalog: Catalog) -> Any:
        calls.append(1)
        if len(calls) == 1:
            first.set()
            others_done.wait(timeout=1.0)
        return real(state, catalog)

    monkeypatch.setattr(handlers, "compute_panel", slow)
    results: list[tuple[Any, ...]] = [() for _ in edits]

    def run(index: int) -> None:
        results[index] = ui.apply_form(web, *edits[index].values(), "USD")

    threads = [threading.Thread(target=run, args=(0,))]
    threads[0].start()
    assert first.wait(timeout=10)
    threads += [threading.Thread(target=run, args=(i,)) for i in range(1, len(edits))]
    for thread in threads[1:]:
        thread.start()
    for thread in threads[1:]:
        thread.join(timeout=10)
    others_done.set()
    threads[0].join(timeout=10)
    return results


def test_one_pick_sent_twice_at_once_is_answered_and_never_hidden(
    ui: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gradio's dropdown sends one pick as two events (on the pick, and on the blur the pick
    causes) that run in parallel: neither may return a chat without the edit's message (the one
    that arrives last would hide it), and the job is changed once."""
    web = WebSession()
    _turn(ui, "Full fine-tune of Llama 3.1 8B on 100M tokens", web)
    turn_messages = len(web.chat)
    edit = form_values(web.session.state).values | {"method": "qlora"}
    results = _edits_at_once(ui, web, [edit, edit], monkeypatch)
    shown = [r[1].value for r in results if r[1] != SKIP]
    assert shown, "the edit is answered"
    assert all("method QLoRA" in str(chat[-1]["content"]) for chat in shown), shown
    assert len(web.chat) == turn_messages + 1 and "method QLoRA" in web.chat[-1]["content"]
    assert web.session.state.method == "qlora" and web.panel.state == web.session.state


def test_two_edits_at_once_both_apply_and_the_panel_is_the_last_ones(
    ui: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second edit made while the first is computed is applied after it: the job has both, the
    chat's message names the last change, and the panel is the job's (not the first edit's)."""
    web = WebSession()
    _turn(ui, "Full fine-tune of Llama 3.1 8B on 100M tokens", web)
    first = form_values(web.session.state).values | {"method": "qlora"}
    second = first | {"seq_len": 4096}
    results = _edits_at_once(ui, web, [first, second], monkeypatch)
    assert all(r[1] != SKIP for r in results)
    state = web.session.state
    assert (state.method, state.seq_len) == ("qlora", 4096)
    assert web.panel.state == state, "the panel is the job's"
    heading = web.chat[-1]["content"].split("\n")[0]
    assert heading == "_Updated from the form: sequence length 4,096._", "the last change named"


def test_an_edit_that_changes_nothing_redraws_nothing(ui: App) -> None:
    web = WebSession()
    _turn(ui, "LoRA on Llama 3.1 8B, 100M tokens", web)
    web.chosen = web.panel.ranking.ranked[-1].instance_id if web.panel.ranking else None
    chosen, chat = web.chosen, list(web.chat)
    outputs = ui.apply_form(web, *form_values(web.session.state).values.values(), "USD")
    assert list(outputs) == [SKIP] * JOB_OUTPUTS
    assert (web.chosen, web.chat) == (chosen, chat), "the launch row and the chat stay"


def test_a_form_edit_made_while_a_turn_streams_is_kept_when_the_turn_ends(ui: App) -> None:
    """The turn works on a copy of the session; an edit made before it ends is newer, so it is
    applied over the turn's job (not overwritten), its message follows the answer and the panel
    is the merged job's."""
    web = WebSession()
    _turn(ui, "LoRA on Llama 3.1 8B, 100M tokens", web)
    values = form_values(web.session.state).values
    stream: Iterator[Any] = ui.respond("and with spot instances?", "en", web)
    next(stream)  # the turn has started and shown its first tool call
    ui.apply_form(web, *(values | {"method": "qlora"}).values(), "USD")
    assert web.session.state.method == "qlora", "the edit applies at once"
    list(stream)  # the turn ends
    state = web.session.state
    assert (state.method, state.spot) == ("qlora", "allowed"), "the edit and the turn's change"
    assert "method QLoRA" in web.chat[-1]["content"], "the edit's message follows the answer"
    asked = [m["content"] for m in web.chat].index("and with spot instances?")
    assert asked < len(web.chat) - 2, "the turn's question and answer come before the edit's"
    assert web.panel.ranking is not None and web.panel.ranking.job.method == "qlora"
    assert web.form_message_at == len(web.chat) - 1, "the next edit replaces that message"


def _shown(chat: list[dict[str, Any]]) -> list[tuple[Any, Any, Any]]:
    """What a chat shows, without the tool calls' timings."""
    return [(m["role"], m["content"], (m.get("metadata") or {}).get("title")) for m in chat]


def test_an_offline_turn_is_sent_once_and_ends_where_a_streamed_one_does(ui: App) -> None:
    """Without an LLM a turn takes milliseconds: it is answered once, when it ends (the page
    gets the chat one time, not once per tool call and again at the end of the stream), with
    the chat and the session a streamed turn ends with."""
    assert not ui.streams
    streamed_web, once_web = WebSession(), WebSession()
    text = "LoRA on Llama 3.1 8B, 100M tokens"
    streamed = _turn(ui, text, streamed_web)
    assert len(streamed) > 1, "a streamed turn shows its tool calls as they come"
    chat, web = ui.answer(text, "en", once_web)
    assert web is once_web
    assert _shown(chat) == _shown(streamed[-1][0]) == _shown(once_web.chat)
    assert once_web.session.state == streamed_web.session.state
    assert once_web.panel.ranking is not None


def test_only_a_turn_of_an_llm_is_streamed(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data")
    kwargs: dict[str, Any] = {"knowledge": TinyKnowledge(), "catalog": web_catalog()}
    offline = App(settings, Assistant(settings, **kwargs))
    llm = App(settings, Assistant(settings, chat_model=ScriptedChatModel(["Hello."]), **kwargs))
    assert (offline.streams, llm.streams) == (False, True)
    for ui, generator in ((offline, False), (llm, True)):
        demo = build_demo(settings, assistant=ui.assistant)
        chat = next(fn for fn in demo.fns.values() if fn.api_name == "chat")
        assert inspect.isgeneratorfunction(chat.fn) is generator
        names = {"page_answer", "page_respond"}
        page = next(fn for fn in demo.fns.values() if getattr(fn.fn, "__name__", "") in names)
        assert inspect.isgeneratorfunction(page.fn) is generator, "the page's turn too"
