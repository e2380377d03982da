"""classify_intent: guidance, job, mixed and other, per language, with and without a job."""

from __future__ import annotations

import pytest

from assistant.extract import classify_intent, extract_slots
from tools.job import JobSpec

NONE = JobSpec()
JOB = JobSpec(model="meta-llama/Llama-3.1-70B", method="qlora")

# (lang, message, state, intent)
CASES: list[tuple[str, str, JobSpec, str]] = [
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
def test_classify_intent(lang: str, text: str, state: JobSpec, intent: str) -> None:
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


# Guidance questions people ask in each language (question forms: how often, why, should I,
# can I, is it safe, Turkish -mAlI / -abilir mi / mı, ...), with no job in the state: each must
# read as guidance, so the first message of a conversation gets a knowledge-base answer rather
# than "which model?". Job descriptions and job-specific questions beside them.
QUESTIONS: dict[str, dict[str, list[str]]] = {
    "en": {
        "guidance": [
            "How often should I save a checkpoint when training on preemptible machines?",
            "Can I get away with PCIe cards for multi-GPU fine-tuning, or do I need NVLink?",
            "Why does the optimizer state eat so much GPU memory?",
            "Should I pick bf16 or fp16 for training?",
            "Is it safe to run a LoRA job on interruptible capacity?",
            "Do I need InfiniBand when training across several nodes?",
        ],
        "job": [
            "Fine-tune Mistral 7B with LoRA on 50k examples, cheapest option",
            "I need to pretrain a 1B model on 20B tokens within a week",
        ],
        "mixed": ["How often should I checkpoint my 70B QLoRA run on spot?"],
        "other": ["How are you?"],
    },
    "nl": {
        "guidance": [
            "Hoe vaak moet ik een checkpoint wegschrijven als ik op spot-instances train?",
            "Kan ik LoRA-training doen op een kaart met weinig geheugen?",
            "Waarom telt de bandbreedte tussen GPU's zo zwaar bij training?",
            "Moet ik voor fine-tunen bf16 of fp16 kiezen?",
            "Is het verstandig om een lange training op spot te draaien?",
            "Verlies ik mijn voortgang als een spot-server wordt onderbroken?",
        ],
        "job": [
            "Ik wil Qwen2.5 7B volledig fine-tunen op 100.000 voorbeelden, zo goedkoop mogelijk"
        ],
        "mixed": ["Hoe vaak moet ik checkpointen voor mijn 70B QLoRA-run op spot?"],
        "other": ["Hoe gaat het?"],
    },
    "fr": {
        "guidance": [
            "À quelle fréquence dois-je sauvegarder un checkpoint sur des instances spot ?",
            "Puis-je faire de l'affinage LoRA sur une carte graphique grand public ?",
            "Pourquoi la bande passante mémoire compte-t-elle pour l'entraînement ?",
            "Faut-il activer le gradient checkpointing quand la mémoire manque ?",
            "Est-ce risqué d'entraîner sur des instances interruptibles ?",
            "Comment ZeRO-3 réduit-il la mémoire occupée sur chaque GPU ?",
        ],
        "job": [
            "Je voudrais entraîner Mistral 7B en LoRA sur 300 millions de tokens, au plus bas prix"
        ],
        "mixed": ["À quelle fréquence sauvegarder mon entraînement de Llama 3.1 70B sur spot ?"],
        "other": ["Comment ça va ?"],
    },
    "tr": {
        "guidance": [
            "spot sunucularda ne sıklıkla checkpoint almalıyım?",
            "Spot instance kullanırken ilerlememi kaybeder miyim?",
            "Birden fazla GPU ile eğitimde NVLink şart mı?",
            "İnce ayar için bf16 mı fp16 mı kullanmalıyım?",
            "Kesintiye uğrayan bir sunucuda eğitime nasıl devam edebilirim?",
            "Gradient checkpointing belleği neden azaltır?",
            "LoRA eğitimini tüketici ekran kartında yapabilir miyim?",
        ],
        "job": ["Mistral 7B'yi 500 bin örnekle LoRA ile eğitmek istiyorum, en ucuz seçenek olsun"],
        "mixed": ["70B QLoRA eğitimimde ne sıklıkla checkpoint almalıyım?"],
        "other": ["Nasılsın?"],
    },
    "de": {
        "guidance": [
            "Wie oft sollte ich auf Spot-Instanzen einen Checkpoint schreiben?",
            "Kann ich LoRA auf einer Grafikkarte mit wenig Speicher trainieren?",
            "Brauche ich NVLink, wenn ich auf mehreren GPUs trainiere?",
            "Lohnt sich bf16 gegenüber fp16 beim Feintunen?",
            "Verliere ich meinen Fortschritt, wenn eine Spot-Instanz unterbrochen wird?",
            "In welchen Abständen sollte man beim Training Zwischenstände sichern?",
        ],
        "job": [
            "Ich möchte Llama 3.1 8B mit QLoRA auf 100 Mio. Tokens feintunen, möglichst günstig"
        ],
        "mixed": ["Wie oft sollte ich bei meinem 70B-QLoRA-Training auf Spot checkpointen?"],
        "other": ["Wie geht's?"],
    },
    "es": {
        "guidance": [
            "¿Cada cuánto debo guardar un checkpoint si entreno en instancias spot?",
            "¿Puedo hacer ajuste fino con LoRA en una tarjeta gráfica con poca memoria?",
            "¿Por qué importa tanto la interconexión entre GPUs al entrenar?",
            "¿Conviene usar bf16 o fp16 para el entrenamiento?",
            "¿Es arriesgado entrenar en servidores interrumpibles?",
            "¿Qué pasa con mi progreso si se interrumpe una instancia spot?",
        ],
        "job": [
            "Quiero entrenar Qwen2.5 7B con LoRA sobre 100.000 ejemplos, lo más barato posible"
        ],
        "mixed": ["¿Cada cuánto debo guardar checkpoints en mi entrenamiento de 70B con QLoRA?"],
        "other": ["¿Cómo estás?"],
    },
}  # fmt: skip
TABLE = [(lang, intent, text) for lang, by_intent in QUESTIONS.items()
         for intent, texts in by_intent.items() for text in texts]  # fmt: skip


@pytest.mark.parametrize(("lang", "intent", "text"), TABLE, ids=[c[2][:40] for c in TABLE])
def test_question_table(lang: str, intent: str, text: str) -> None:
    got = classify_intent(text, lang, NONE)
    assert got == intent, f"{text!r} ({lang}, no job yet): got {got}, want {intent}"


def test_question_table_covers_every_language() -> None:
    for lang, by_intent in QUESTIONS.items():
        assert len(by_intent["guidance"]) >= 5, f"{lang}: fewer than five guidance questions"
        assert {"job", "mixed"} <= set(by_intent), f"{lang}: jobs and mixed questions too"
    assert sorted(QUESTIONS) == sorted(["en", "nl", "fr", "tr", "de", "es"])


# Follow-ups that amend the job stay jobs, question mark or not.
FOLLOW_UPS = [("en", "only spot?"), ("tr", "sadece spot?"), ("de", "nur Spot?"),
              ("es", "¿y con LoRA?"), ("fr", "et avec LoRA ?"), ("nl", "en met LoRA?")]  # fmt: skip


@pytest.mark.parametrize(("lang", "text"), FOLLOW_UPS, ids=[c[1] for c in FOLLOW_UPS])
def test_amending_follow_ups_stay_jobs(lang: str, text: str) -> None:
    got = classify_intent(text, lang, JOB)
    assert got == "job", f"{text!r} ({lang}) with a job in the state: got {got}"


# A question that only names a technique asks about it, even with a job in the conversation;
# with a word of "under this setting" it asks about the job so changed.
TECHNIQUE_QUESTIONS = [
    ("en", "How much VRAM does QLoRA save?"), ("nl", "Hoeveel VRAM bespaart QLoRA?"),
    ("fr", "Combien de VRAM QLoRA économise-t-il ?"), ("tr", "QLoRA ne kadar VRAM kazandırır?"),
    ("de", "Wie viel VRAM spart QLoRA?"), ("es", "¿Cuánta VRAM ahorra QLoRA?"),
]  # fmt: skip
UNDER_A_SETTING = [
    ("en", "how long with 8-bit adam?"), ("nl", "hoe lang met QLoRA?"),
    ("fr", "combien de temps avec QLoRA ?"), ("tr", "QLoRA ile ne kadar sürer?"),
    ("de", "wie lange mit QLoRA?"), ("es", "¿cuánto tiempo con QLoRA?"),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "text"), TECHNIQUE_QUESTIONS)
def test_a_question_about_a_technique_is_guidance_with_a_job_in_the_state(
    lang: str, text: str
) -> None:
    assert classify_intent(text, lang, JOB) == "guidance"


@pytest.mark.parametrize(("lang", "text"), UNDER_A_SETTING)
def test_a_question_under_another_setting_is_about_the_job(lang: str, text: str) -> None:
    assert classify_intent(text, lang, JOB) == "job"


# Dutch and German ask yes/no questions with the verb first, often without a question mark.
VERB_FIRST = [
    ("nl", "heb ik voor meerdere nodes infiniband nodig"),
    ("nl", "en werkt het ook zonder nvlink"),
    ("nl", "ok, is het erg als de GPU's via pcie praten"),
    ("de", "brauche ich für mehrere Knoten eigentlich InfiniBand"),
    ("de", "und geht das auch ohne NVLink"),
]
VERB_SECOND = [  # statements: the verb after the subject or after a fronted word
    ("nl", "ik heb nvlink op mijn server"),
    ("nl", "thuis heb ik geen nvlink"),
    ("de", "ich habe kein NVLink auf dem Server"),
]


@pytest.mark.parametrize(("lang", "text"), VERB_FIRST)
def test_a_verb_first_question_about_the_domain_is_guidance(lang: str, text: str) -> None:
    assert classify_intent(text, lang, JOB) == "guidance", text


@pytest.mark.parametrize(("lang", "text"), VERB_SECOND)
def test_a_statement_with_the_verb_second_asks_nothing(lang: str, text: str) -> None:
    assert classify_intent(text, lang, JOB) != "guidance", text
