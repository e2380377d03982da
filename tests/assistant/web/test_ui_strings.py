"""The interface string table: six languages for every key, the same placeholders in each, one
unit spelling, the answers' words for the form's choices, examples, and no unused key."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from assistant.web.ui_strings import (
    MAX_EXAMPLES,
    MIN_EXAMPLES,
    example_prompts,
    i18n_tables,
    ui_format,
    ui_keys,
    ui_lang,
    ui_text,
    vocabulary,
    vocabulary_key,
)
from tools.languages import LANGUAGES

ROOT = Path(__file__).resolve().parents[3]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_key_has_a_text_in_all_six_languages() -> None:
    tables = i18n_tables()
    assert list(tables) == list(LANGUAGES)
    for lang, table in tables.items():
        ours = [k for k in table if not k.startswith("vocab_") and "." not in k]
        assert ours == ui_keys(), f"{lang}: in order"
        assert table["chatbot.copy_message"] and table["errors.use_via_api_or_mcp"], "Gradio's"
        assert all(text.strip() for text in table.values()), f"{lang}: no empty text"


def test_every_language_fills_in_the_same_places() -> None:
    for key in ui_keys():
        expected = _fields(ui_text("en", key))
        for lang in LANGUAGES:
            assert _fields(ui_text(lang, key)) == expected, f"{key} in {lang}"


def test_memory_is_spelled_gib_in_every_language() -> None:
    for lang in LANGUAGES:
        table = i18n_tables()[lang]
        assert not [k for k, v in table.items() if re.search(r"\b(Gio|Go|GB)\b", v)], lang
    assert ui_text("fr", "col_vram") == "VRAM/GPU (GiB)", "as the French answers write it"


def test_texts_differ_by_language_where_they_should() -> None:
    assert [ui_text(lang, "send") for lang in LANGUAGES] == [
        "Send",
        "Versturen",
        "Envoyer",
        "Gönder",
        "Senden",
        "Enviar",
    ]
    assert ui_text("it", "send") == "Send", "an unknown language falls back to English"
    assert ui_lang("it") == "en" and ui_lang("tr") == "tr"
    assert ui_format("de", "too_long", count="20.000", limit="4.000") == (
        "Ihre Nachricht hat 20.000 Zeichen; die Grenze ist 4.000. Kürzen Sie sie und senden Sie "
        "erneut: Es wurde nichts gesendet."
    )


def test_the_forms_choices_use_the_answers_words() -> None:
    fr = i18n_tables()["fr"]
    assert fr[vocabulary_key("method", "full")] == "affinage complet"
    assert fr[vocabulary_key("spot", "never")] == "pas de spot"
    assert fr[vocabulary_key("pricing", "on-demand")] == "à la demande"
    assert vocabulary("tr", "spot", "required") == "yalnızca spot"
    assert vocabulary("de", "plan", "zero3") == "ZeRO-3/FSDP"
    assert vocabulary("en", "plan", "no-such-plan") == "no-such-plan", "the value when unknown"


def test_four_to_six_examples_in_each_language_on_the_first_screen() -> None:
    for lang in LANGUAGES:
        prompts = example_prompts(lang)
        assert MIN_EXAMPLES <= len(prompts) <= MAX_EXAMPLES, lang
        assert len(set(prompts)) == len(prompts), f"{lang}: no repeats"
    assert example_prompts("tr")[0].startswith("70 milyar parametreli modelde QLoRA")
    assert example_prompts("it") == example_prompts("en")


@pytest.mark.parametrize("key", ui_keys())
def test_every_key_is_used_by_the_app(key: str) -> None:
    sources = [p.read_text(encoding="utf-8") for p in (ROOT / "assistant" / "web").rglob("*.py")]
    used = any(re.search(rf"""["'](?:\w*_)?{re.escape(key)}["']""", s) for s in sources)
    prefixed = any(
        f'f"{prefix}' in s for s in sources for prefix in ("excl_", "part_", "billing_", "origin_")
    )
    dynamic = key.startswith(("excl_", "part_", "billing_", "origin_", "upload_", "json_"))
    assert used or (dynamic and prefixed), f"{key} is not referenced in assistant/web"
