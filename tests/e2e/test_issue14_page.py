"""Issue 14, "The web app as people use it", defects 1-4 (the phone layout, the conversation's
lifecycle, uploads, the chat after an upload), checked in Chromium at both sizes (1440x900 and
390x844) and in three interface languages (English, French, Turkish). Defects 5-8 are in
test_issue14_decision.py. Each test saves test-artifacts/issue14-<defect>-<size>-<language>.png.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from assistant.web import cells as fmt
from assistant.web.ui_strings import example_prompts, ui_text, vocabulary
from assistant.web.uploads import UploadError, model_from_upload, upload_problem
from tests.e2e.conftest import sync_api
from tests.e2e.pages import (
    LOCALES,
    SIZES,
    ask,
    box,
    cells,
    idle,
    last_message,
    messages,
    open_form,
    page_width,
    shot,
    toasts,
    tool_call,
    upload,
    wait_for_messages,
    write_config,
)
from tests.fakes.jobs import LLAMA_8B_CONFIG

CASES = [(size, lang) for size in SIZES for lang in ("en", "fr", "tr")]
AFTER_UPLOAD = {
    "en": "QLoRA with 100M tokens, which GPU should I rent?",
    "fr": "QLoRA avec 100 millions de tokens, quel GPU louer ?",
    "tr": "QLoRA, 100 milyon token, hangi GPU'yu kiralamalıyım?",
}


def _open(open_page: Any, size: str, lang: str) -> Any:
    return open_page(size, LOCALES[lang])


def _name(defect: str, size: str, lang: str) -> str:
    return f"issue14-{defect}-{size}-{lang}"


# --------------------------------------------------------------------- 1. phone layout


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_1_one_column_on_a_phone_and_nothing_wider_than_the_screen(
    open_page: Any, size: str, lang: str
) -> None:
    page = _open(open_page, size, lang)
    ask(page, example_prompts(lang)[0])
    width = SIZES[size][0]
    assert page_width(page) <= width, "no sideways scroll of the page"
    send, answer = box(page, "#send"), box(page, "#chat .message-row >> nth=-1")
    assert send["x"] >= 0 and send["x"] + send["width"] <= width, "Send is on screen"
    assert answer["x"] >= 0 and answer["x"] + answer["width"] <= width, "answers are not cut"
    chat, panel, ranked = box(page, "#chat"), box(page, "#panel-col"), box(page, "#ranked")
    if size == "phone":
        assert chat["y"] + chat["height"] <= panel["y"] <= ranked["y"], "chat, panel, tables"
        assert abs(panel["x"] - chat["x"]) < 2 and panel["width"] > 0.8 * width, "one column"
        for control in ("#send", "#new-chat", "#ui-lang input"):
            assert box(page, control)["height"] >= 44, f"{control} is touch-sized"
        table = box(page, "#ranked")
        scrolled = page.evaluate(
            "() => { const v = document.querySelector('#ranked .virtual-table-viewport');"
            " const wide = v.scrollWidth > v.clientWidth; v.scrollLeft = 600; return wide; }"
        )
        assert scrolled, "the table scrolls inside itself"
        page.wait_for_timeout(300)
        instance = box(page, '#ranked [data-testid="cell-0-1"]')
        assert table["x"] <= instance["x"] < table["x"] + 60, "the instance column stays in view"
        page.set_viewport_size({"width": 360, "height": 780})
        page.wait_for_timeout(300)
        assert page_width(page) <= 360, "nothing wider than a 360 px screen"
    else:
        assert chat["x"] + chat["width"] <= panel["x"], "chat beside the panel"
        assert ranked["width"] > chat["width"] + panel["width"] * 0.8, "the tables below, wide"
    shot(page, _name("1-layout", size, lang))


# --------------------------------------------------------------------- 2. lifecycle


def _empty(page: Any) -> None:
    assert messages(page) == 0, "the chat is empty"
    sync_api.expect(page.locator("#chat button.example").first).to_be_visible()
    sync_api.expect(page.locator("#memory-chart .plan-chart")).to_have_count(0)
    sync_api.expect(page.locator("#results")).to_be_hidden()
    sync_api.expect(page.locator("#job-form [data-testid=accordion-content]")).to_be_hidden()


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_2_new_conversation_and_the_clear_icon_forget_everything_a_reload_restores_the_rest(
    open_page: Any, size: str, lang: str
) -> None:
    page = _open(open_page, size, lang)
    first = example_prompts(lang)[0]
    ask(page, first)
    page.locator('#ranked [data-testid="cell-2-1"]').click()
    idle(page)
    picked = cells(page, "#ranked", 1, 3)[2]
    page.reload()
    page.wait_for_selector("#memory-chart .plan-chart")
    sync_api.expect(page.locator("#chat").get_by_text(first)).to_be_visible()
    launch = page.locator("#launch-choice input")
    sync_api.expect(launch).to_have_value(re.compile(f"^#3 {re.escape(picked)}"))
    page.click("#new-chat")
    idle(page)
    _empty(page)
    page.reload()
    page.wait_for_selector("#chat button.example")
    _empty(page)
    ask(page, first)
    page.locator("#chat button.icon-button").first.click()  # the chat's own clear icon
    idle(page)
    _empty(page)
    second = example_prompts(lang)[1]
    ask(page, second)
    users = page.locator("#chat .message-row.user-row").all_inner_texts()
    assert [u.strip() for u in users] == [second], "the old history does not come back"
    page.reload()
    page.wait_for_selector("#chat .message-row")
    users = page.locator("#chat .message-row.user-row").all_inner_texts()
    assert [u.strip() for u in users] == [second], "the reload shows the new conversation"
    shot(page, _name("2-lifecycle", size, lang))


# --------------------------------------------------------------------- 3. uploads

BAD_FILES: list[tuple[str, bytes]] = [
    ("config.json", b"this is not json"),
    ("notes.txt", b"a text file"),
    ("config.json", b"[1, 2, 3]"),
    ("config.json", b"{" + b" " * 1_000_001 + b"}"),
]


def _expected_refusal(path: Path, lang: str) -> str:
    with pytest.raises(UploadError) as caught:
        model_from_upload(path, lang)
    return upload_problem(caught.value, path.name, lang)


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_3_a_bad_upload_says_why_and_leaves_the_form_usable_a_good_one_changes_only_the_model(
    open_page: Any, files: Path, size: str, lang: str
) -> None:
    page = _open(open_page, size, lang)
    ask(page, example_prompts(lang)[0])
    open_form(page)
    model = page.locator("#form-model input").input_value()
    for index, (name, content) in enumerate(BAD_FILES):
        folder = files / str(index)
        folder.mkdir()
        path = write_config(folder, name, content)
        upload(page, path)
        assert toasts(page)[-1] == _expected_refusal(path, lang), name
        sync_api.expect(page.locator("#job-form .error")).to_have_count(0)
        assert page.locator("#form-model input").input_value() == model, "the job is unchanged"
    rows = messages(page)
    page.locator("#form-spot label").filter(has_text=vocabulary(lang, "spot", "required")).click()
    wait_for_messages(page, rows)
    idle(page)
    heading = ui_text(lang, "form_updated").split("{changes}")[0]
    assert last_message(page).startswith(heading), "the form works after the refusals"
    page.click("#new-chat")
    idle(page)
    open_form(page)
    upload(page, write_config(files, "config.json", LLAMA_8B_CONFIG))
    sync_api.expect(page.locator("#form-model input")).to_have_value("my-llama")
    for field in ("seq-len", "micro-batch-size", "tokens", "budget", "max-price-per-hour"):
        assert page.locator(f"#form-{field} input").input_value() == "", f"{field} stays blank"
    sync_api.expect(page.locator("#panel-notes")).to_contain_text("my-llama")
    shot(page, _name("3-uploads", size, lang))


# --------------------------------------------------------------------- 4. chat after upload


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_4_the_chat_answers_for_the_uploaded_config(
    open_page: Any, files: Path, size: str, lang: str
) -> None:
    page = _open(open_page, size, lang)
    open_form(page)
    upload(page, write_config(files, "config.json", LLAMA_8B_CONFIG))
    sync_api.expect(page.locator("#form-model input")).to_have_value("my-llama")
    ask(page, AFTER_UPLOAD[lang])
    for tool in ("estimate_memory", "rank_instances"):
        assert '"model": "my-llama"' in tool_call(page, tool), f"{tool} got the uploaded model"
    chat = page.locator("#chat").inner_text()
    assert "estimated" not in chat and "Llama-style" not in chat, "no guessed dimensions"
    answer = last_message(page)
    assert "my-llama" in answer, "the answer names the uploaded model"
    sync_api.expect(page.locator("#memory-chart .plan-chart")).to_contain_text(fmt.NBSP + "GiB")
    shot(page, _name("4-upload-chat", size, lang))
