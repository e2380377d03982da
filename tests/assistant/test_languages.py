"""Which language a turn is answered in and a page shown in: the one set of rules."""

from __future__ import annotations

import pytest

from assistant.languages import (
    choose_language,
    language_from_header,
    resolve_lang,
    writer_language,
)
from tools.errors import InvalidInputError


@pytest.mark.parametrize(
    ("given_lang", "expected"), [("de", "de"), ("DE", "de"), ("de-DE", "de"), ("tr_TR", "tr")]
)
def test_resolve_lang(given_lang: str, expected: str) -> None:
    assert resolve_lang(given_lang) == expected, given_lang


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


@pytest.mark.parametrize(
    ("message", "override", "previous", "expected"),
    [
        ("Ich möchte Llama 3.1 8B mit QLoRA feinabstimmen", None, None, "de"),
        ("Ich möchte Llama 3.1 8B mit QLoRA feinabstimmen", None, "en", "de"),
        ("only spot", None, "nl", "nl"),
        ("70B", None, None, "en"),
        ("anything", "es", "nl", "es"),
        ("anything", "DE-de", None, "de"),
    ],
)
def test_choose_language(
    message: str, override: str | None, previous: str | None, expected: str
) -> None:
    assert choose_language(message, override, previous) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("hallo zusammen", "de"),
        ("moin moin!", "de"),  # the detector reads "moin" as French
        ("servus", "de"),
        ("goedemorgen allemaal", "nl"),
        ("hoi!", "nl"),  # read as Italian by the detector
        ("bonsoir !", "fr"),
        ("coucou, ça va ?", "fr"),
        ("selamlar!", "tr"),  # a suffix on the greeting
        ("merhaba", "tr"),
        ("buenos días a todos", "es"),
        ("hola, ¿qué tal?", "es"),
        ("hey!", "en"),
        ("ciao!", "en"),  # Italian is not one of ours: English
        ("hallo", "nl"),  # Dutch and German alike: the first of them in LANGUAGES order
    ],
)
def test_a_greeting_alone_as_a_first_message_is_read_by_its_everyday_words(
    message: str, expected: str
) -> None:
    assert choose_language(message, None, None) == expected, message


@pytest.mark.parametrize(
    ("message", "previous"), [("hallo", "en"), ("merci !", "de"), ("gracias", "tr")]
)
def test_a_greeting_later_in_a_conversation_keeps_its_language(message: str, previous: str) -> None:
    assert choose_language(message, None, previous) == previous, message


@pytest.mark.parametrize(
    "message", ["RTX 3090 var o yeter", "ok, 3090 var, yeter?"]
)  # the detector: English at 0.87-0.88
def test_the_conversations_own_words_outweigh_an_unsure_detection(message: str) -> None:
    assert choose_language(message, None, "tr") == "tr", message


def test_unsupported_language_override_is_an_error() -> None:
    from tools.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match=r"lang: got 'it'; valid: one of en, nl"):
        choose_language("ciao", "it", None)


def test_unknown_language_says_what_is_valid() -> None:
    with pytest.raises(InvalidInputError, match=r"lang: got 'pt'; valid: one of en, nl, fr"):
        resolve_lang("pt")


def test_a_person_writing_a_language_not_answered_in_keeps_the_answers_language() -> None:
    writes = writer_language("vorrei fare qlora su qwen2.5 14b con la mia scheda", None)
    assert writes == "it"
    # A short Italian follow-up reads Spanish to the detector, unsure: the answer stays English.
    assert choose_language("e la A100 invece?", None, "en", None) == "es"
    assert choose_language("e la A100 invece?", None, "en", writes) == "en"
    assert writer_language("e la A100 invece?", writes) == "it"  # not sure enough to change
    # A sure switch to one of the six still switches.
    sure = "Ich möchte Llama 3.1 8B mit LoRA feinabstimmen, wie viel kostet das ungefähr?"
    assert choose_language(sure, None, "en", writes) == "de"
    assert writer_language(sure, writes) == "de"
    assert writer_language("ok", None) is None  # too short to tell


@pytest.mark.parametrize(
    ("message", "lang"),
    [
        ("gemma 9b qlora, 4k ctx, 3 gunde bitsin, saatlik 2 dolar", "tr"),
        ("llama 8b lora, ctx 8k, stündlich 2 euro", "de"),
        ("mistral 7b lora ctx 2k, maximaal per uur 1 euro", "nl"),
        ("qwen 7b, ctx 4k, tarifa por hora 2 euros", "es"),
    ],
)
def test_english_jargon_does_not_outvote_the_language_of_a_first_message(
    message: str, lang: str
) -> None:
    """'ctx' is English jargon in every language: a tie of one English word with one word of
    another language goes to the other."""
    assert choose_language(message, None, None) == lang
