"""The interface string table: six languages for every key, examples, Accept-Language."""

from __future__ import annotations

from assistant.web.ui_strings import (
    example_prompts,
    i18n_tables,
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
