"""classify_intent: guidance, job, mixed and other, per language, with and without a job."""

from __future__ import annotations

import pytest

from assistant.extract import classify_intent, extract_slots
from assistant.state import JobState

NONE = JobState()
JOB = JobState(model="meta-llama/Llama-3.1-70B", method="qlora")

# (lang, message, state, intent)
CASES: list[tuple[str, str, JobState, str]] = [
    ("en", "Are spot instances safe for training?", NONE, "guidance"),
    ("en", "What is the difference between LoRA and QLoRA?", NONE, "guidance"),
    ("en", "How much VRAM do I need to fine-tune?", NONE, "guidance"),
    ("en", "Is spot safe for my 70B QLoRA run?", NONE, "mixed"),
    ("en", "Which GPU should I rent to fine-tune Llama 3.1 8B on 200M tokens?", NONE, "job"),
    ("en", "I want to fine-tune a model", NONE, "job"),
    ("en", "and with full fine-tuning?", JOB, "job"),
    ("en", "what if I only have 24 GB?", JOB, "job"),
    ("en", "How much will it cost?", JOB, "job"),
    ("en", "Is spot safe for my run?", JOB, "mixed"),
    ("en", "Hello!", NONE, "other"),
    ("en", "thanks", JOB, "other"),
    ("nl", "Hoeveel VRAM heb ik nodig om te fine-tunen?", NONE, "guidance"),
    ("nl", "Waarom is NVLink belangrijk?", NONE, "guidance"),
    ("nl", "Is spot veilig voor mijn 70B QLoRA-run?", NONE, "mixed"),
    ("nl", "Ik wil Mistral 7B fine-tunen op 200 miljoen tokens", NONE, "job"),
    ("nl", "alleen spot", JOB, "job"),
    ("nl", "Dank je wel!", NONE, "other"),
    ("fr", "Pourquoi utiliser ZeRO-3 ?", NONE, "guidance"),
    ("fr", "Qu'est-ce que QLoRA ?", NONE, "guidance"),
    ("fr", "Est-ce sûr d'utiliser du spot pour mon modèle de 7 milliards de paramètres ?", NONE,
     "mixed"),
    ("fr", "Je veux affiner Llama 3.1 8B en QLoRA", NONE, "job"),
    ("fr", "et avec un affinage complet ?", JOB, "job"),
    ("fr", "Bonjour", NONE, "other"),
    ("tr", "NVLink neden önemli?", NONE, "guidance"),
    ("tr", "Spot instance'lar eğitim için güvenli mi?", NONE, "guidance"),
    ("tr", "70B QLoRA eğitimim için spot güvenli mi?", NONE, "mixed"),
    ("tr", "Llama 3 8B için hangi GPU'yu kiralamalıyım?", NONE, "job"),
    ("tr", "sadece spot", JOB, "job"),
    ("tr", "Merhaba", NONE, "other"),
    ("de", "Was ist Gradient Checkpointing?", NONE, "guidance"),
    ("de", "Wie viel VRAM brauche ich zum Feintunen?", NONE, "guidance"),
    ("de", "Ist Spot sicher für mein 70B QLoRA-Training?", NONE, "mixed"),
    ("de", "Ich möchte Qwen2.5 14B mit LoRA feintunen", NONE, "job"),
    ("de", "Wie viel kostet das?", JOB, "job"),
    ("de", "Danke!", NONE, "other"),
    ("es", "¿Qué es QLoRA?", NONE, "guidance"),
    ("es", "¿Por qué importa el ancho de banda de memoria?", NONE, "guidance"),
    ("es", "¿Es seguro usar spot para mi modelo de 70B con QLoRA?", NONE, "mixed"),
    ("es", "Quiero ajustar Llama 3.1 8B con QLoRA", NONE, "job"),
    ("es", "¿y con QLoRA en Europa?", JOB, "job"),
    ("es", "Hola", NONE, "other"),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "text", "state", "intent"), CASES,
                         ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CASES)])  # fmt: skip
def test_classify_intent(lang: str, text: str, state: JobState, intent: str) -> None:
    got = classify_intent(text, lang, state)
    assert got == intent, f"{text!r} (job in state: {state.model is not None}): got {got}"


def test_precomputed_update_gives_the_same_answer() -> None:
    text = "Is spot safe for my 70B QLoRA run?"
    update = extract_slots(text, "en")
    assert classify_intent(text, "en", NONE, update) == classify_intent(text, "en", NONE)


def test_every_language_has_all_intents() -> None:
    for lang in ("en", "nl", "fr", "tr", "de", "es"):
        intents = {c[3] for c in CASES if c[0] == lang}
        assert intents == {"guidance", "job", "mixed", "other"}, f"{lang}: {sorted(intents)}"
