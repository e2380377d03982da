"""After a chat turn only what changed is sent (`Outputs.after_turn`): every form and panel value
the page was last sent becomes `gr.skip()`, and a page that applies each update it gets shows
exactly what a whole render shows, whatever happened in between (a guidance question, a change
of the job, a form edit, another interface language, a pick in the launch list).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gradio as gr
import pytest
from gradio.blocks import Block

from assistant.agent.conversation import Assistant
from assistant.web.blocks import App
from assistant.web.blocks.outputs import (
    FORM_OUTPUTS,
    PANEL_OUTPUTS,
    Outputs,
    browser_update,
    sent_key,
)
from assistant.web.form import FORM_FIELDS
from assistant.web.state.session import WebSession
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalogs import web_catalog

SKIP = {"__type__": "update"}
SLOTS = FORM_OUTPUTS + PANEL_OUTPUTS
DOWNLOAD = SLOTS - 1  # the launch spec's JSON file, the panel's last value
JOB = "QLoRA on Llama 3.1 8B, 100M tokens, spot is fine"
GUIDANCE = "Are spot instances safe for training?"


@pytest.fixture
def ui(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> App:
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    settings = make_settings(tmp_path / "data")
    return App(settings, Assistant(settings, knowledge=TinyKnowledge(), catalog=web_catalog()))


def shown(value: Any) -> Any:
    """What a value puts on the page (a file by its path, unlike `sent_key`)."""
    return (type(value), value.constructor_args) if isinstance(value, Block) else value


class Page:
    """The form and panel as the browser shows them: each value it gets replaces its slot's,
    a skip leaves the slot as it was."""

    def __init__(self) -> None:
        self.slots: list[Any] = [None] * SLOTS

    def get(self, values: tuple[Any, ...] | list[Any]) -> list[int]:
        """Apply `values` (one per slot); the slots that were sent a value."""
        assert len(values) == SLOTS
        sent = [i for i, value in enumerate(values) if value != SKIP]
        for i in sent:
            self.slots[i] = values[i]
        return sent

    def shows(self, ui: App, web: WebSession) -> bool:
        """Whether the page shows what a whole render of `web` shows now (rendered without
        touching what `web` records as sent)."""
        record = web.sent
        whole = (*ui.outputs.form_outputs(web), *ui.outputs.panel_outputs(web))
        web.sent = record
        return [shown(v) for v in self.slots] == [shown(v) for v in whole]


def turn(ui: App, page: Page, web: WebSession, text: str) -> list[int]:
    """A chat turn, then its form and panel (`App.after_turn`, as `page_answer` runs them); the
    slots the page was sent."""
    ui.answer(text, "auto", web)
    *values, saved = ui.after_turn(web)
    assert isinstance(saved, str) and saved, "the browser's record is always saved"
    return page.get(values)


def test_a_guidance_question_sends_nothing_but_the_launch_file(ui: App) -> None:
    web, page = WebSession(), Page()
    assert turn(ui, page, web, JOB) == list(range(SLOTS)), "a new page gets everything"
    assert page.shows(ui, web)
    assert turn(ui, page, web, GUIDANCE) == [DOWNLOAD]
    assert page.shows(ui, web)
    assert isinstance(page.slots[DOWNLOAD], gr.DownloadButton)


def test_a_change_of_the_job_sends_what_it_changed(ui: App) -> None:
    web, page = WebSession(), Page()
    turn(ui, page, web, JOB)
    # more tokens: a longer run costs more; what fits, the notes and the memory chart stay
    sent = turn(ui, page, web, "make it 300M tokens")
    panel = {2: "cost chart", 6: "ranked table", 12: "launch YAML", 13: "launch file"}
    assert sent == [FORM_FIELDS.index("tokens"), *(FORM_OUTPUTS + i for i in panel)]
    assert page.shows(ui, web)
    for text in ("use 2 GPUs", "no spot", GUIDANCE, "use LoRA instead", "what about 8 GPUs?"):
        turn(ui, page, web, text)
        assert page.shows(ui, web), text


def test_any_other_render_makes_the_next_turn_send_everything(ui: App) -> None:
    web, page = WebSession(), Page()
    turn(ui, page, web, JOB)
    values = dict.fromkeys(FORM_FIELDS) | {"model": "meta-llama/Llama-3.1-8B", "method": "lora"}
    page.get(ui.apply_form(web, *values.values(), "USD")[2:])  # session and chat come first
    assert web.sent is None
    assert turn(ui, page, web, GUIDANCE) == list(range(SLOTS))
    assert page.shows(ui, web)
    page.get(ui.set_ui_language(web, "fr")[2:])
    assert turn(ui, page, web, GUIDANCE) == list(range(SLOTS)), "everything, in French"
    assert page.shows(ui, web) and turn(ui, page, web, GUIDANCE) == [DOWNLOAD]
    assert web.panel.ranking is not None
    picked = web.panel.ranking.ranked[2].instance_id
    launch = ui.pick(web, picked)  # the launch spec's four values close the panel's
    page.get([SKIP] * (SLOTS - len(launch)) + list(launch))
    assert turn(ui, page, web, GUIDANCE) == list(range(SLOTS))
    assert page.shows(ui, web) and web.chosen == picked


def test_the_panel_is_rendered_again_only_when_what_it_shows_could_change(ui: App) -> None:
    web, page = WebSession(), Page()
    turn(ui, page, web, JOB)
    renders: list[int] = []
    original = Outputs.panel_outputs

    def counted(self: Outputs, web: WebSession, view: Any = None) -> tuple[Any, ...]:
        renders.append(1)
        return original(self, web, view)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Outputs, "panel_outputs", counted)
        turn(ui, page, web, GUIDANCE)
        assert renders == [], "the same panel data, language and launch row"
        turn(ui, page, web, "make it 300M tokens")
        assert renders == [1], "a new job: a new panel"
        renewed = Outputs(ui.catalog(), ui.instances(), ui.export_dir)  # a price refresh's
        page.get(renewed.after_turn(web))
        assert renders == [1, 1], "another catalog renders it again"
    assert page.shows(ui, web)


def test_a_files_key_is_never_the_one_sent_before() -> None:
    download = gr.DownloadButton(value=None, visible=False)
    assert sent_key(download) != sent_key(download), "the same path may hold a new launch spec"
    assert sent_key("text") == sent_key("text") != sent_key("other text")
    update = gr.update(value=[[1, "a"]], info=None)
    key = sent_key(update)
    update.pop("info"), update["value"][0].append("b")  # as Gradio changes what it is given
    assert key == sent_key(gr.update(value=[[1, "a"]], info=None)), "the key is kept apart"
    number = sent_key(gr.Number(value=3, placeholder="assumed: 1"))
    assert number == sent_key(gr.Number(value=3, placeholder="assumed: 1"))
    assert number != sent_key(gr.Number(value=3, placeholder="assumed: 2"))


def test_the_pages_turn_is_the_answer_then_what_changed(ui: App) -> None:
    web, other = WebSession(), WebSession()
    chat, session, *rest = ui.page_answer(JOB, "en", web)
    texts = [m["content"] for m in ui.answer(JOB, "en", other)[0]]
    assert session is web and [m["content"] for m in chat] == texts, "the same turn"
    assert len(rest) == SLOTS + 1 and SKIP not in rest, "a new page: everything"
    chat, session, *rest = ui.page_answer(GUIDANCE, "en", web)
    assert [i for i, value in enumerate(rest[:-1]) if value != SKIP] == [DOWNLOAD]
    assert isinstance(rest[-1], str) and rest[-1], "the record is saved every turn"


def test_a_streamed_page_turn_sends_form_panel_and_record_once_at_its_end(ui: App) -> None:
    web = WebSession()
    *streamed, last = ui.page_respond(JOB, "en", web)
    assert streamed, "the tool calls as they come"
    for chat, session, *rest in streamed:
        assert session == SKIP and rest == [SKIP] * (SLOTS + 1) and chat
    chat, session, *rest = last
    assert session is web and SKIP not in rest
    assert Page().get(rest[:-1]) == list(range(SLOTS)) and web.sent is not None


def test_an_update_for_the_browser_is_what_gradio_would_send() -> None:
    """`browser_update`: a skip leaves the component alone; a value goes through the
    component's own postprocess; properties left as None are dropped, as Gradio drops them;
    choices become (label, value) pairs; anything the browser is not given raises."""
    table = gr.Dataframe(render=False, interactive=False)
    assert browser_update(table, SKIP) is None
    assert browser_update(gr.Markdown(render=False), "**12** options") == {
        "__type__": "update", "value": "**12** options",
    }  # fmt: skip
    update = browser_update(table, gr.update(value={"headers": ["#", "GPU"], "data": [[1, "L4"]]},
                                             datatype=["number", "str"], label=None))  # fmt: skip
    assert update is not None and set(update) == {"__type__", "value", "datatype"}
    assert update["value"]["headers"] == ["#", "GPU"] and update["value"]["data"] == [[1, "L4"]]
    money = gr.update(value="EUR", choices=["USD", "EUR"])
    assert browser_update(gr.Dropdown(["USD", "EUR"], render=False), money) == {
        "__type__": "update", "value": "EUR", "choices": [["USD", "USD"], ["EUR", "EUR"]],
    }  # fmt: skip
    with pytest.raises(TypeError):
        browser_update(table, gr.DownloadButton(render=False))
    with pytest.raises(ValueError, match="interactive"):
        browser_update(table, gr.update(interactive=True))


def test_the_page_applies_from_its_payload_what_a_whole_render_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wired page's turn (`page_answer`): its payload, applied as the browser applies it
    (each update's properties over the component's), leaves every form and panel component
    showing what a whole render of the session shows; the launch choice and file come as
    Gradio outputs; a guidance question's payload leaves everything alone."""
    import app

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    settings = make_settings(tmp_path / "data")
    assistant = Assistant(settings, knowledge=TinyKnowledge(), catalog=web_catalog())
    demo = app.build_demo(settings, assistant=assistant)
    page_fn = next(f for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "page_answer")
    ui: App = page_fn.fn.__self__
    assert ui.page_updates is not None
    split = ui.page_updates
    assert len(split.in_browser) == SLOTS - 2 and split.on_server == [SLOTS - 3, SLOTS - 1]
    browser: list[dict[str, Any]] = [{} for _ in split.in_browser]
    web = WebSession()
    for text in (JOB, GUIDANCE, "make it 300M tokens", "use LoRA instead", GUIDANCE):
        _, _, text_payload, choose, download, saved = ui.page_answer(text, "en", web)
        assert isinstance(saved, str) and isinstance(download, gr.DownloadButton)
        payload = json.loads(text_payload)
        if text == GUIDANCE:
            assert payload["updates"] == [None] * len(browser) and choose == SKIP, text
        for props, update in zip(browser, payload["updates"], strict=True):
            props.update(update or {})
        record = web.sent
        whole = (*ui.outputs.form_outputs(web), *ui.outputs.panel_outputs(web))
        web.sent = record
        expected = json.loads(split.split(whole)[0])["updates"]
        for props, want in zip(browser, expected, strict=True):
            assert {key: props.get(key) for key in want} == want, text
    streamed = list(ui.page_respond("use 2 GPUs", "en", web))
    assert all(rest == [SKIP] * 4 for _, _, *rest in streamed[:-1]) and len(streamed) > 1
    _, session, text_payload, _, download, _ = streamed[-1]
    assert session is web and isinstance(download, gr.DownloadButton)
    assert json.loads(text_payload)["updates"][FORM_FIELDS.index("num_gpus")]["value"] == 2
