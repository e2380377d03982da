"""The interface string table: six languages for every key, examples, Accept-Language."""

from __future__ import annotations

import pytest

from assistant.web.ui_strings import (
    example_prompts,
    i18n_tables,
    language_from_header,
    ui_keys,
    ui_text,
)
from tools.languages import LANGUAGES


def test_every_key_has_a_text_in_all_six_languages() -> None:
    tables = i18n_tables()
    assert list(tables) == list(LANGUAGES)
    for lang, table in tables.items():
        assert list(table) == ui_keys(), f"{lang} has every key, in order"
        assert all(text.strip() for text in table.values()), f"{lang}: no empty text"


def test_texts_differ_by_language_where_they_should() -> None:
    assert [ui_text(lang, "send") for lang in LANGUAGES] == [
        "Send", "Versturen", "Envoyer", "Gönder", "Senden", "Enviar",
    ]  # fmt: skip
    assert ui_text("it", "send") == "Send", "an unknown language falls back to English"


def test_two_examples_per_language() -> None:
    prompts = example_prompts()
    assert [lang for lang, _ in prompts] == [lang for lang in LANGUAGES for _ in (1, 2)]
    assert "QLoRA" in prompts[0][1] and "milyon" in prompts[6][1], "en job, tr job"


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        ("tr-TR,tr;q=0.9,en-US;q=0.8,en;q=0.7", "tr"),
        ("it-IT,it;q=0.9,de;q=0.5,fr;q=0.6", "fr"),
        ("en;q=0.2, nl", "nl"),
        ("es;q=0", "en"),
        ("de;q=abc, es", "es"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_accept_language_picks_our_most_wanted_language(header: str | None, lang: str) -> None:
    assert language_from_header(header) == lang
