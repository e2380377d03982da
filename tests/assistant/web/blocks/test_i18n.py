"""Every string of every component is translated: walked over the whole page, in each language.

Two halves. The labels, hints, placeholders, button texts and choice names the page is built
with must each be a `gr.I18n` key (the browser translates them, and switches them with the
interface language) or data that is the same in every language (model, GPU, provider and region
names, currency codes, the languages' own names). And everything the server writes into the
page after a job (table headers and cells, charts, notes, hints, the launch spec's title, the
examples) must hold no English text in the five other languages.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

import app
from assistant.agent.conversation import Assistant
from assistant.web.blocks import App
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import i18n_tables, ui_keys, ui_text
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalogs import web_catalog
from tools.architectures.registry import list_models
from tools.languages import LANGUAGE_NAMES, LANGUAGES

I18N = "__i18n__"
# Text that is the same in every language: the product's name and a file name.
NEUTRAL = {"# GPU Advisor", "SkyPilot task.yaml"}
TEXT_PROPS = ("label", "info", "placeholder")
VALUE_TEXT = (gr.Button, gr.Markdown, gr.UploadButton, gr.DownloadButton)
OTHER_LANGUAGES = [lang for lang in LANGUAGES if lang != "en"]
# Choice labels that are names: the languages' own names, the registry's model names.
NAMES = {*LANGUAGE_NAMES.values(), *(arch.name for arch in list_models())}


def _blocks(tmp_path: Path) -> list[Any]:
    settings = make_settings(tmp_path / "data")
    demo = app.build_demo(settings, assistant=Assistant(settings, knowledge=TinyKnowledge()))
    return [b for b in demo.blocks.values() if type(b).__name__ != "Api"]  # gr.api endpoints


def _texts(block: Any) -> Iterator[tuple[str, str]]:
    for prop in TEXT_PROPS:
        value = getattr(block, prop, None)
        if isinstance(value, str) and value:
            yield prop, value
    if isinstance(block, VALUE_TEXT) and isinstance(block.value, str) and block.value:
        yield "value", block.value


def test_every_built_string_is_a_translation_key_or_language_neutral(tmp_path: Path) -> None:
    keys = set(i18n_tables()["en"])
    untranslated = []
    for block in _blocks(tmp_path):
        for prop, text in _texts(block):
            found = re.search(r'"key": "([^"]+)"', text)
            if text in NEUTRAL:
                continue
            if not text.startswith(I18N) or found is None or found.group(1) not in keys:
                untranslated.append((type(block).__name__, block.elem_id, prop, text))
        for label, value in getattr(block, "choices", None) or []:
            data = str(label) == str(value) or label in NAMES
            if not data and not str(label).startswith(I18N):
                untranslated.append((type(block).__name__, block.elem_id, "choice", label))
    assert untranslated == [], "shown in English in every language"


def _fragments(lang: str) -> set[str]:
    """English pieces of every interface string that reads differently in `lang`, split at its
    `{name}` places (each piece at least 12 characters, so 'GPU' or '$/h' never count)."""
    pieces = set()
    table = i18n_tables()
    for key, english in table["en"].items():
        if table[lang][key] == english:
            continue
        for literal, *_ in string.Formatter().parse(english):
            pieces |= {p.strip() for p in re.split(r"[*_]", literal) if len(p.strip()) >= 12}
    return pieces


def _shown(value: Any) -> Iterator[str]:
    """The texts an output puts on the page."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key in ("value", "label", "info", "placeholder", "headers"):
            yield from _shown(value.get(key))
        if isinstance(value.get("metadata"), dict):
            yield from _shown(value["metadata"].get("display_value"))
        if "data" in value and "headers" in value:
            yield from _shown(value.get("headers"))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _shown(item)
    elif isinstance(value, gr.components.Component | gr.blocks.BlockContext):
        for prop in ("value", "label", "info", "placeholder", "choices", "examples"):
            yield from _shown(getattr(value, prop, None))


@pytest.fixture(scope="module")
def after_a_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[App, WebSession]:
    settings = make_settings(tmp_path_factory.mktemp("data"))
    ui = App(settings, Assistant(settings, knowledge=TinyKnowledge(), catalog=web_catalog()))
    web = WebSession()
    for _ in ui.respond("QLoRA on Llama 3.1 8B, 100M tokens, spot is fine", "en", web):
        pass
    ui.after_turn(web)
    return ui, web


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_what_the_server_writes_has_no_english_left(
    after_a_job: tuple[App, WebSession], lang: str
) -> None:
    ui, web = after_a_job
    outputs = ui.set_ui_language(web, lang)[1:]  # the chat, the form and the panel
    chat, *rest = outputs
    texts = [t for value in rest for t in _shown(value)]
    texts += [e["text"] for e in chat.examples]
    leftovers = sorted({p for p in _fragments(lang) for text in texts if p in text})
    assert leftovers == [], f"English on the {lang} page"
    assert any(ui_text(lang, "col_need_vram") in t for t in texts), "the table was walked"


def test_the_walk_finds_english_when_there_is_some(after_a_job: tuple[App, WebSession]) -> None:
    ui, web = after_a_job
    texts = [t for value in ui.set_ui_language(web, "en")[2:] for t in _shown(value)]
    assert {p for p in _fragments("de") for text in texts if p in text}, "English is English"


def test_every_key_reads_differently_somewhere() -> None:
    same = [k for k in ui_keys() if all(ui_text(lang, k) == ui_text("en", k) for lang in LANGUAGES)]
    assert same == ["gpu", "col_vram", "col_rank", "legend_gpu", "col_gib"], (
        "only units, signs and the word GPU read alike everywhere"
    )
