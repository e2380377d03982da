"""The shape of the answer to each intent in each of the six languages, through the real offline
assistant (built-in catalog, a one-topic knowledge base): one conversation per language walks
through all eight intents, and every turn must be routed as labelled, answered in the
conversation's language and hold the content its intent calls for
(`benchmarks.chat_heldout.shapes`: judged by structure, not wording). The messages are written
here, apart from the router's bank, the dev corpus and the held-out set."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.agent.conversation import Assistant, Session
from assistant.settings import Settings
from benchmarks.chat_heldout.shapes import missing_kinds
from tests.fakes.app import TinyKnowledge
from tools.catalog import builtin_catalog

# (message, intent, expected kinds[, details]) in conversation order, per language.
Turn = tuple[str, str, list[str], dict[str, Any]]
NONE: dict[str, Any] = {}
CONVERSATIONS: dict[str, list[Turn]] = {
    "en": [
        ("QLoRA on Llama 3.1 8B with 100M tokens, at most $3 an hour", "job", ["ranking"], NONE),
        ("and what if the sequence length is 4096?", "amend", ["changes", "ranking"], NONE),
        ("why not the H100?", "why_not", ["why_not"], {"target": "H100"}),
        ("A100 or H100 for this job?", "compare", ["compare"], {"gpus": ["A100", "H100"]}),
        (
            "is my RTX 4090 enough for it?",
            "fit_check",
            ["fit"],
            {"hardware": {"gpus": 1, "gib": [24]}},
        ),
        ("what is a spot instance, really?", "guidance", ["citation"], NONE),
        ("write me a short poem about GPUs", "out_of_scope", ["scope"], NONE),
        ("great, thanks a lot!", "small_talk", ["hello"], NONE),
    ],
    "nl": [
        (
            "QLoRA op Llama 3.1 8B met 100 miljoen tokens, hoogstens 3 dollar per uur",
            "job",
            ["ranking"],
            NONE,
        ),
        ("en als de sequentielengte 4096 is?", "amend", ["changes", "ranking"], NONE),
        ("waarom niet de H100?", "why_not", ["why_not"], {"target": "H100"}),
        ("A100 of H100 voor deze job?", "compare", ["compare"], {"gpus": ["A100", "H100"]}),
        (
            "is mijn RTX 4090 genoeg hiervoor?",
            "fit_check",
            ["fit"],
            {"hardware": {"gpus": 1, "gib": [24]}},
        ),
        ("wat is een spot-instance eigenlijk?", "guidance", ["citation"], NONE),
        ("schrijf een kort gedicht over GPU's", "out_of_scope", ["scope"], NONE),
        ("top, bedankt!", "small_talk", ["hello"], NONE),
    ],
    "fr": [
        (
            "QLoRA sur Llama 3.1 8B avec 100 millions de tokens, 3 dollars de l'heure au plus",
            "job",
            ["ranking"],
            NONE,
        ),
        ("et avec une longueur de séquence de 4096 ?", "amend", ["changes", "ranking"], NONE),
        ("pourquoi pas la H100 ?", "why_not", ["why_not"], {"target": "H100"}),
        ("A100 ou H100 pour ce job ?", "compare", ["compare"], {"gpus": ["A100", "H100"]}),
        (
            "est-ce que ma RTX 4090 suffit ?",
            "fit_check",
            ["fit"],
            {"hardware": {"gpus": 1, "gib": [24]}},
        ),
        ("c'est quoi une instance spot au juste ?", "guidance", ["citation"], NONE),
        ("écris-moi un petit poème sur les GPU", "out_of_scope", ["scope"], NONE),
        ("super, merci beaucoup !", "small_talk", ["hello"], NONE),
    ],
    "tr": [
        (
            "Llama 3.1 8B üzerinde QLoRA, 100 milyon token, saatte en fazla 3 dolar",
            "job",
            ["ranking"],
            NONE,
        ),
        ("peki dizi uzunluğu 4096 olursa?", "amend", ["changes", "ranking"], NONE),
        ("neden H100 değil?", "why_not", ["why_not"], {"target": "H100"}),
        ("bu iş için A100 mü H100 mü?", "compare", ["compare"], {"gpus": ["A100", "H100"]}),
        (
            "RTX 4090'ım bunun için yeterli mi?",
            "fit_check",
            ["fit"],
            {"hardware": {"gpus": 1, "gib": [24]}},
        ),
        ("spot instance tam olarak nedir?", "guidance", ["citation"], NONE),
        ("bana GPU'lar hakkında kısa bir şiir yaz", "out_of_scope", ["scope"], NONE),
        ("harika, çok teşekkürler!", "small_talk", ["hello"], NONE),
    ],
    "de": [
        (
            "QLoRA auf Llama 3.1 8B mit 100 Millionen Tokens, höchstens 3 Dollar pro Stunde",
            "job",
            ["ranking"],
            NONE,
        ),
        ("und wenn die Sequenzlänge 4096 ist?", "amend", ["changes", "ranking"], NONE),
        ("warum nicht die H100?", "why_not", ["why_not"], {"target": "H100"}),
        ("A100 oder H100 für diesen Job?", "compare", ["compare"], {"gpus": ["A100", "H100"]}),
        (
            "reicht meine RTX 4090 dafür?",
            "fit_check",
            ["fit"],
            {"hardware": {"gpus": 1, "gib": [24]}},
        ),
        ("was ist eigentlich eine Spot-Instanz?", "guidance", ["citation"], NONE),
        ("schreib mir ein kurzes Gedicht über GPUs", "out_of_scope", ["scope"], NONE),
        ("super, vielen Dank!", "small_talk", ["hello"], NONE),
    ],
    "es": [
        (
            "QLoRA sobre Llama 3.1 8B con 100 millones de tokens, como mucho 3 dólares por hora",
            "job",
            ["ranking"],
            NONE,
        ),
        ("¿y si la longitud de secuencia es 4096?", "amend", ["changes", "ranking"], NONE),
        ("¿por qué no la H100?", "why_not", ["why_not"], {"target": "H100"}),
        ("¿A100 o H100 para este trabajo?", "compare", ["compare"], {"gpus": ["A100", "H100"]}),
        (
            "¿me alcanza mi RTX 4090 para esto?",
            "fit_check",
            ["fit"],
            {"hardware": {"gpus": 1, "gib": [24]}},
        ),
        ("¿qué es exactamente una instancia spot?", "guidance", ["citation"], NONE),
        ("escríbeme un poema corto sobre GPUs", "out_of_scope", ["scope"], NONE),
        ("¡perfecto, muchas gracias!", "small_talk", ["hello"], NONE),
    ],
}


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    settings = Settings(data_dir=tmp_path_factory.mktemp("data"), llm=None)
    return Assistant(settings, knowledge=TinyKnowledge(), catalog=builtin_catalog())


@pytest.mark.parametrize("lang", sorted(CONVERSATIONS))
def test_every_intent_is_answered_in_its_shape(lang: str, assistant: Assistant) -> None:
    session = Session()
    misses = []
    for text, intent, expect, details in CONVERSATIONS[lang]:
        result = assistant.respond(text, session).result
        missing = missing_kinds({"expect": expect, **details}, result)
        if result.intent != intent or missing or result.language != lang:
            misses.append(f"{text!r}: {result.intent} (want {intent}), {result.language}, "
                          f"missing {missing}: {result.answer[:160]!r}")  # fmt: skip
    assert not misses, "\n".join(misses)


GREETINGS = {"nl": "hallo daar!", "fr": "salut !", "tr": "selam!", "de": "hallo zusammen!",
             "es": "¡hola!"}  # fmt: skip


@pytest.mark.parametrize("lang", sorted(GREETINGS))
def test_a_greeting_as_the_first_message(lang: str, assistant: Assistant) -> None:
    result = assistant.respond(GREETINGS[lang], Session()).result
    assert (result.intent, result.language) == ("small_talk", lang)
