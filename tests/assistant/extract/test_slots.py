"""extract_slots: realistic messages in six languages with the exact slots each one sets."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.extract import extract_slots, read_slots
from tools.catalog.providers import known_providers
from tools.job import JobUpdate, Money

LLAMA_8B = "meta-llama/Llama-3.1-8B"
LLAMA_70B = "meta-llama/Llama-3.1-70B"
MISTRAL_7B = "mistralai/Mistral-7B-v0.1"
MIXTRAL = "mistralai/Mixtral-8x7B-v0.1"
QWEN_14B = "Qwen/Qwen2.5-14B"
QWEN_7B = "Qwen/Qwen2.5-7B"
H100 = ["H100-SXM", "H100-PCIe", "H100-NVL"]
A100 = ["A100-40GB-SXM", "A100-80GB-SXM", "A100-40GB-PCIe", "A100-80GB-PCIe"]


def usd(amount: float) -> Money:
    return Money(amount=amount, currency="USD")


def eur(amount: float) -> Money:
    return Money(amount=amount, currency="EUR")


def try_(amount: float) -> Money:
    return Money(amount=amount, currency="TRY")


def all_but(*excluded: str) -> list[str]:
    return [p for p in known_providers() if p not in excluded]


# (id, lang, message, expected slots)
CASES: list[tuple[str, str, str, dict[str, Any]]] = [
    # ------------------------------------------------------------------ English
    ("en-qlora-job", "en",
     "I want to fine-tune Llama 3.1 70B with QLoRA on 200M tokens for 3 epochs, under $3/h, "
     "within 2 days.",
     dict(model=LLAMA_70B, method="qlora", tokens=2e8, epochs=3,
          max_price_per_hour=usd(3), deadline_hours=48)),
    ("en-scratch", "en",
     "Train a 7B model from scratch on 1.5B tokens, budget $500, fastest please",
     dict(model="7B", method="pretrain", tokens=1.5e9, budget=usd(500), objective="time")),
    ("en-config", "en",
     "llama3-8b LoRA rank 64, seq len 4096, batch size 8, bf16, paged AdamW 8-bit",
     dict(model=LLAMA_8B, lora_rank=64, seq_len=4096, micro_batch_size=8,
          precision="bf16-mixed", optimizer="paged-adamw-8bit")),
    ("en-cluster", "en",
     "Mixtral 8x7B on 8x H100, spot is fine, on RunPod or Lambda in Europe",
     dict(model=MIXTRAL, num_gpus=8, gpus=H100, spot="allowed", providers=["runpod", "lambda"],
          regions=["eu"])),
    ("en-vram-amend", "en", "what if I only have 24 GB?", dict(max_vram_gib=24)),
    ("en-samples", "en", "200,000 samples of 1,024 tokens each, 2 epochs",
     dict(samples=200_000, seq_len=1024, epochs=2)),
    ("en-exclusions", "en", "no spot, not on AWS, cheapest per hour",
     dict(spot="never", providers=all_but("aws"), objective="price")),
    ("en-full-no-ckpt", "en",
     "Qwen2.5 14B, full fine-tuning without gradient checkpointing, fp16, 4k context",
     dict(model=QWEN_14B, method="full", gradient_checkpointing="none",
          precision="fp16-mixed", seq_len=4096)),
    ("en-small-model", "en", "a 350M parameter model, 50k examples, 48h deadline, max 2 GPUs",
     dict(model="350M", samples=50_000, deadline_hours=48, num_gpus=2)),
    ("en-region-name", "en", "on 4 A100s in us-east-1, 1 billion tokens",
     dict(num_gpus=4, gpus=A100, regions=["us-east-1"], tokens=1e9)),
    # ------------------------------------------------------------------ Dutch
    ("nl-qlora-job", "nl",
     "Ik wil Llama 3.1 8B fine-tunen met QLoRA op 200 miljoen tokens, max €2 per uur, "
     "binnen 12 uur.",
     dict(model=LLAMA_8B, method="qlora", tokens=2e8, max_price_per_hour=eur(2),
          deadline_hours=12)),
    ("nl-full", "nl",
     "Een model van 70 miljard parameters met volledige fijn-afstemming, 3 epochs, geen spot",
     dict(model="70B", method="full", epochs=3, spot="never")),
    ("nl-budget", "nl", "1,5 miljard tokens, budget van €750, zo snel mogelijk, alleen op RunPod",
     dict(tokens=1.5e9, budget=eur(750), objective="time", providers=["runpod"])),
    ("nl-config", "nl", "200.000 voorbeelden, sequentielengte 2048, batchgrootte 4, LoRA-rang 32",
     dict(samples=200_000, seq_len=2048, micro_batch_size=4, lora_rank=32)),
    ("nl-spot-only", "nl", "alleen spot, in Europa, de goedkoopste",
     dict(spot="required", regions=["eu"], objective="cost")),
    ("nl-vram-amend", "nl", "wat als ik maar 24 GB heb?", dict(max_vram_gib=24)),
    ("nl-gpus", "nl", "Mistral 7B op 2 RTX 4090's, geen gradient checkpointing",
     dict(model=MISTRAL_7B, num_gpus=2, gpus=["RTX4090"], gradient_checkpointing="none")),
    ("nl-scratch", "nl", "Van nul af trainen: 1B model, 20 miljard tokens, binnen 3 dagen",
     dict(method="pretrain", model="1B", tokens=2e10, deadline_hours=72)),
    # ------------------------------------------------------------------ French
    ("fr-qlora-job", "fr",
     "Je veux affiner Llama 3.1 8B en QLoRA sur 200 millions de tokens, moins de 2 € de "
     "l'heure, en 2 jours.",
     dict(model=LLAMA_8B, method="qlora", tokens=2e8, max_price_per_hour=eur(2),
          deadline_hours=48)),
    ("fr-full", "fr",
     "un modèle de 7 milliards de paramètres, affinage complet, 200 000 exemples, 3 époques, "
     "sans spot",
     dict(model="7B", method="full", samples=200_000, epochs=3, spot="never")),
    ("fr-budget", "fr", "Budget total de 1 500 €, le plus rapide possible, uniquement spot",
     dict(budget=eur(1500), objective="time", spot="required")),
    ("fr-cluster", "fr", "Mixtral 8x7B sur 8 GPU H100, en Europe, sur Lambda ou Nebius",
     dict(model=MIXTRAL, num_gpus=8, gpus=H100, regions=["eu"], providers=["lambda", "nebius"])),
    ("fr-config", "fr", "longueur de séquence 4096, taille de batch 2, rang 16, bf16",
     dict(seq_len=4096, micro_batch_size=2, lora_rank=16, precision="bf16-mixed")),
    ("fr-vram-amend", "fr", "et si je n'ai que 24 Go ?", dict(max_vram_gib=24)),
    ("fr-pretrain", "fr",
     "pré-entraînement d'un modèle de 1,3 milliard de paramètres sur 26 milliards de tokens",
     dict(method="pretrain", model="1.3B", tokens=2.6e10)),
    ("fr-cheapest", "fr",
     "Qwen2.5 7B, affinage complet sans gradient checkpointing, le moins cher",
     dict(model=QWEN_7B, method="full", gradient_checkpointing="none", objective="cost")),
    # ------------------------------------------------------------------ Turkish
    ("tr-qlora-job", "tr",
     "Llama 3.1 8B'yi QLoRA ile 200 milyon token üzerinde ince ayar yapmak istiyorum, saatte "
     "50 TL, 48 saat içinde",
     dict(model=LLAMA_8B, method="qlora", tokens=2e8, max_price_per_hour=try_(50),
          deadline_hours=48)),
    ("tr-full", "tr", "7 milyar parametreli bir model, tam ince ayar, 3 tur, spot yok",
     dict(model="7B", method="full", epochs=3, spot="never")),
    ("tr-budget", "tr", "toplam bütçe 10.000 TL, en hızlı, sadece spot",
     dict(budget=try_(10_000), objective="time", spot="required")),
    ("tr-config", "tr", "Mistral 7B, 200.000 örnek, dizi uzunluğu 4096, batch boyutu 8, rank 32",
     dict(model=MISTRAL_7B, samples=200_000, seq_len=4096, micro_batch_size=8,
          lora_rank=32)),
    ("tr-vram-amend", "tr", "24 GB'ım olsa ne olur?", dict(max_vram_gib=24)),
    ("tr-gpus", "tr", "4 adet A100 ile Avrupa'da, RunPod veya Lambda",
     dict(num_gpus=4, gpus=A100, regions=["eu"], providers=["runpod", "lambda"])),
    ("tr-scratch", "tr", "Sıfırdan 1B model eğitimi, 20 milyar token, 3 gün içinde",
     dict(method="pretrain", model="1B", tokens=2e10, deadline_hours=72)),
    ("tr-uppercase", "tr", "İKİ TUR, EN UCUZ, AWS HARİÇ",
     dict(epochs=2, objective="cost", providers=all_but("aws"))),
    # ------------------------------------------------------------------ German
    ("de-qlora-job", "de",
     "Ich möchte Llama 3.1 70B mit QLoRA auf 2 Mrd. Tokens feintunen, unter 3 €/Stunde, "
     "innerhalb von 2 Tagen",
     dict(model=LLAMA_70B, method="qlora", tokens=2e9, max_price_per_hour=eur(3),
          deadline_hours=48)),
    ("de-full", "de",
     "Ein Modell mit 13 Milliarden Parametern, vollständiges Fine-Tuning, 3 Epochen, kein Spot",
     dict(model="13B", method="full", epochs=3, spot="never")),
    ("de-budget", "de", "Budget 800 €, so schnell wie möglich, nur Spot, in Europa",
     dict(budget=eur(800), objective="time", spot="required", regions=["eu"])),
    ("de-config", "de", "Qwen2.5 14B, Sequenzlänge 8192, Batchgröße 2, LoRA-Rang 16, bf16",
     dict(model=QWEN_14B, seq_len=8192, micro_batch_size=2, lora_rank=16,
          precision="bf16-mixed")),
    ("de-vram-amend", "de", "Was wäre, wenn ich nur 24 GB habe?", dict(max_vram_gib=24)),
    ("de-cluster", "de", "8x H100 bei Lambda oder CoreWeave, am günstigsten",
     dict(num_gpus=8, gpus=H100, providers=["lambda", "coreweave"], objective="cost")),
    ("de-pretrain", "de", "Vortraining eines 1B-Modells auf 20 Milliarden Tokens in 3 Tagen",
     dict(method="pretrain", model="1B", tokens=2e10, deadline_hours=72)),
    ("de-optimizer", "de", "50.000 Beispiele, ohne Gradient Checkpointing, AdamW 8-bit",
     dict(samples=50_000, gradient_checkpointing="none", optimizer="adamw-8bit")),
    # ------------------------------------------------------------------ Spanish
    ("es-qlora-job", "es",
     "Quiero ajustar Llama 3.1 8B con QLoRA sobre 200 millones de tokens, menos de 3 $/h, "
     "en 2 días",
     dict(model=LLAMA_8B, method="qlora", tokens=2e8, max_price_per_hour=usd(3),
          deadline_hours=48)),
    ("es-full", "es",
     "Un modelo de 7 mil millones de parámetros, ajuste fino completo, 3 épocas, sin spot",
     dict(model="7B", method="full", epochs=3, spot="never")),
    ("es-budget", "es", "Presupuesto de 400 $, lo más rápido posible, solo spot, en Europa",
     dict(budget=usd(400), objective="time", spot="required", regions=["eu"])),
    ("es-cluster", "es", "Mixtral 8x7B en 4 A100, solo en RunPod",
     dict(model=MIXTRAL, num_gpus=4, gpus=A100, providers=["runpod"])),
    ("es-config", "es", "longitud de secuencia 2048, tamaño de lote 4, rango 8, fp16",
     dict(seq_len=2048, micro_batch_size=4, lora_rank=8, precision="fp16-mixed")),
    ("es-vram-amend", "es", "¿Y si solo tengo 24 GB?", dict(max_vram_gib=24)),
    ("es-pretrain", "es",
     "Preentrenamiento desde cero de un modelo de 1B con 20 mil millones de tokens en una semana",
     dict(method="pretrain", model="1B", tokens=2e10, deadline_hours=168)),
    ("es-exclusion", "es", "100.000 ejemplos, 2 épocas, el más barato, no en AWS",
     dict(samples=100_000, epochs=2, objective="cost", providers=all_but("aws"))),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "text", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_extract_slots(lang: str, text: str, expected: dict[str, Any]) -> None:
    got = extract_slots(text, lang)
    assert got == JobUpdate(**expected), f"{text!r}: got {got.given()}, want {expected}"


def test_every_language_has_cases() -> None:
    langs = {c[1] for c in CASES}
    assert langs == {"en", "nl", "fr", "tr", "de", "es"}, f"languages covered: {sorted(langs)}"
    for lang in langs:
        count = sum(1 for c in CASES if c[1] == lang)
        assert count >= 8, f"{lang}: only {count} extraction cases"


# Every number format the brief lists, each read into the slot it belongs to.
NUMBER_FORMATS: list[tuple[str, str, str, object]] = [
    ("en", "200M tokens", "tokens", 2e8),
    ("en", "200 million tokens", "tokens", 2e8),
    ("nl", "200 miljoen tokens", "tokens", 2e8),
    ("tr", "200 milyon token", "tokens", 2e8),
    ("de", "2 Mrd. Tokens", "tokens", 2e9),
    ("en", "1.5B tokens", "tokens", 1.5e9),
    ("nl", "1,5 miljard tokens", "tokens", 1.5e9),
    ("es", "1,5 mil millones de tokens", "tokens", 1.5e9),
    ("nl", "200.000 samples", "samples", 200_000),
    ("en", "200,000 samples", "samples", 200_000),
    ("fr", "200 000 exemples", "samples", 200_000),
    ("tr", "200 bin örnek", "samples", 200_000),
    ("en", "50k examples", "samples", 50_000),
    ("en", "3 epochs", "epochs", 3.0),
    ("en", "1 epoch", "epochs", 1.0),
    ("en", "0.5 epoch", "epochs", 0.5),
    ("fr", "3 époques", "epochs", 3.0),
    ("fr", "3 epoques", "epochs", 3.0),
    ("de", "3 Epochen", "epochs", 3.0),
    ("es", "3 épocas", "epochs", 3.0),
    ("tr", "3 tur", "epochs", 3.0),
    ("nl", "drie epochs", "epochs", 3.0),
    ("de", "zwei Epochen", "epochs", 2.0),
    ("en", "70B", "model", "70B"),
    ("nl", "70 miljard parameters", "model", "70B"),
    ("tr", "7 milyar parametre", "model", "7B"),
    ("de", "13 Milliarden Parameter", "model", "13B"),
    ("fr", "un modèle de 7 milliards de paramètres", "model", "7B"),
    ("es", "7 mil millones de parámetros", "model", "7B"),
    ("en", "1.5b params", "model", "1.5B"),
    ("en", "a 350M model", "model", "350M"),
    ("en", "in 2 days", "deadline_hours", 48.0),
    ("nl", "binnen 12 uur", "deadline_hours", 12.0),
    ("tr", "48 saat içinde", "deadline_hours", 48.0),
    ("fr", "en une semaine", "deadline_hours", 168.0),
    ("de", "innerhalb von 36 Stunden", "deadline_hours", 36.0),
    ("es", "en 3 días", "deadline_hours", 72.0),
    ("en", "8k context", "seq_len", 8192),
    ("en", "sequences of 512 tokens", "seq_len", 512),
    ("en", "2048 tokens", "seq_len", 2048),
]


@pytest.mark.parametrize(("lang", "text", "slot", "value"), NUMBER_FORMATS,
                         ids=[f"{c[0]}-{c[1]}" for c in NUMBER_FORMATS])  # fmt: skip
def test_number_formats(lang: str, text: str, slot: str, value: object) -> None:
    got = extract_slots(text, lang).given()
    assert got == {slot: value}, f"{text!r} ({lang}): got {got}, want {slot}={value!r}"


# Money as the brief lists it: kept in the currency named, per hour or in total, never converted.
MONEY: list[tuple[str, str, str, Money]] = [
    ("en", "under $3/h", "max_price_per_hour", usd(3)),
    ("en", "at most 2.50 USD per hour", "max_price_per_hour", usd(2.5)),
    ("en", "$4 an hour", "max_price_per_hour", usd(4)),
    ("nl", "max €2 per uur", "max_price_per_hour", eur(2)),
    ("nl", "maximaal 2,50 euro per uur", "max_price_per_hour", eur(2.5)),
    ("tr", "saatte 50 TL", "max_price_per_hour", try_(50)),
    ("tr", "saatlik en fazla 80 TL", "max_price_per_hour", try_(80)),
    ("tr", "50TL/saat", "max_price_per_hour", try_(50)),
    ("fr", "moins de 2 € de l'heure", "max_price_per_hour", eur(2)),
    ("fr", "2 €/h maximum", "max_price_per_hour", eur(2)),
    ("de", "unter 3 €/Stunde", "max_price_per_hour", eur(3)),
    ("de", "höchstens 3 Euro pro Stunde", "max_price_per_hour", eur(3)),
    ("es", "menos de 3 $/h", "max_price_per_hour", usd(3)),
    ("es", "3 dólares por hora", "max_price_per_hour", usd(3)),
    ("en", "budget $500", "budget", usd(500)),
    ("en", "I can spend $1.5k in total", "budget", usd(1500)),
    ("tr", "toplam bütçe 10.000 TL", "budget", try_(10_000)),
    ("nl", "budget van 750 euro", "budget", eur(750)),
    ("fr", "budget de 1 500 €", "budget", eur(1500)),
    ("de", "Budget: 800 EUR", "budget", eur(800)),
    ("es", "presupuesto de 400 $", "budget", usd(400)),
    ("en", "between $1 and $3 per hour", "max_price_per_hour", usd(3)),
    ("fr", "entre 1 € et 2 € de l'heure", "max_price_per_hour", eur(2)),
]


@pytest.mark.parametrize(("lang", "text", "slot", "money"), MONEY,
                         ids=[f"{c[0]}-{c[1]}" for c in MONEY])  # fmt: skip
def test_money_kept_in_its_currency(lang: str, text: str, slot: str, money: Money) -> None:
    got = extract_slots(text, lang).given()
    assert got == {slot: money}, f"{text!r}: got {got}, want {slot}={money}"


# Numbers that look like a model size but are not one.
NOT_A_MODEL: list[tuple[str, str, dict[str, Any]]] = [
    ("8x H100", "en", dict(num_gpus=8, gpus=H100)),
    ("8 x A100", "en", dict(num_gpus=8, gpus=A100)),
    ("24 GB", "en", dict(max_vram_gib=24)),
    ("24GB VRAM", "en", dict(max_vram_gib=24)),
    ("$3/h", "en", dict(max_price_per_hour=usd(3))),
    ("64 GB RAM", "en", {}),
    ("a 10 GB dataset", "en", {}),
    ("8 GPUs", "en", dict(num_gpus=8)),
    ("2 adet A100", "tr", dict(num_gpus=2, gpus=A100)),
    ("Mixtral 8x7B", "en", dict(model=MIXTRAL)),
    ("A100 80GB", "en", dict(gpus=["A100-80GB-SXM", "A100-80GB-PCIe"])),
    ("4090 tokens", "en", dict(seq_len=4090)),
    ("in 2 hours", "en", dict(deadline_hours=2)),
    ("LoRA vs QLoRA", "en", dict(method="qlora")),
    ("5M parameters", "en", {}),
]


@pytest.mark.parametrize(("text", "lang", "expected"), NOT_A_MODEL,
                         ids=[c[0] for c in NOT_A_MODEL])  # fmt: skip
def test_not_confused_with_model_size(text: str, lang: str, expected: dict[str, Any]) -> None:
    got = extract_slots(text, lang).given()
    assert got == expected, f"{text!r}: got {got}, want {expected}"


MODEL_NAMES: list[tuple[str, str]] = [
    ("Llama 3.1 70B", LLAMA_70B),
    ("llama3-8b", LLAMA_8B),
    ("Meta-Llama-3.1-8B-Instruct", LLAMA_8B),
    ("meta-llama/Llama-3.1-70B-Instruct", LLAMA_70B),
    ("Mistral 7B", MISTRAL_7B),
    ("Qwen2.5 14B", QWEN_14B),
    ("qwen 2.5 7b", QWEN_7B),
    ("Mixtral 8x7B", MIXTRAL),
    ("Llama 2 13B", "meta-llama/Llama-2-13b-hf"),
    ("Llama 70B", "meta-llama/Llama-3.3-70B-Instruct"),  # no exact name: the newest Llama 70B
    ("Qwen 14B", "Qwen/Qwen3-14B"),  # no exact name: the newest Qwen 14B (Qwen3 since issue 11)
    ("qwen3 8b", "Qwen/Qwen3-8B"),
    ("Phi-4", "microsoft/phi-4"),
    ("mistral nemo", "mistralai/Mistral-Nemo-Base-2407"),
    ("SmolLM2 1.7B", "HuggingFaceTB/SmolLM2-1.7B"),
    ("OLMo 2 7B", "allenai/OLMo-2-1124-7B"),
    ("Gemma 2 9B", "google/gemma-2-9b"),
    ("GPT-2 XL", "openai-community/gpt2-xl"),
    ("LLAMA 3.1 405B", "meta-llama/Llama-3.1-405B"),
]


@pytest.mark.parametrize(("text", "model_id"), MODEL_NAMES, ids=[c[0] for c in MODEL_NAMES])
def test_registry_model_names(text: str, model_id: str) -> None:
    got = extract_slots(f"fine-tune {text} please", "en").model
    assert got == model_id, f"{text!r}: got {got}, want {model_id}"


GPU_MENTIONS: list[tuple[str, str, dict[str, Any]]] = [
    ("a single 4090", "en", dict(num_gpus=1, gpus=["RTX4090"])),
    ("2x 3090", "en", dict(num_gpus=2, gpus=["RTX3090"])),
    ("twee 4090s", "nl", dict(num_gpus=2, gpus=["RTX4090"])),
    ("80GB A100", "en", dict(gpus=["A100-80GB-SXM", "A100-80GB-PCIe"])),
    ("an A100 with 80 GB", "en", dict(gpus=["A100-80GB-SXM", "A100-80GB-PCIe"])),
    ("A100 40GB PCIe", "en", dict(gpus=["A100-40GB-PCIe"])),
    ("8xH100", "en", dict(num_gpus=8, gpus=H100)),
    ("on H200s or B200s", "en", dict(gpus=["H200", "B200"])),
    ("sur une seule carte", "fr", dict(num_gpus=1)),
    ("auf einer einzigen GPU", "de", dict(num_gpus=1)),
    # GPUs named as the topic of a question are no preference (see test_extract_cues.py).
    ("Is an H100 worth it vs an A100?", "en", {}),
    ("a 10 hour deadline", "en", dict(deadline_hours=10)),  # "a 10" is not the A10
]


@pytest.mark.parametrize(("text", "lang", "expected"), GPU_MENTIONS,
                         ids=[c[0] for c in GPU_MENTIONS])  # fmt: skip
def test_gpu_mentions(text: str, lang: str, expected: dict[str, Any]) -> None:
    got = extract_slots(text, lang).given()
    assert got == expected, f"{text!r}: got {got}, want {expected}"


def test_turkish_suffix_after_model_name() -> None:
    got = extract_slots("Qwen2.5 14B'yi eğitmek istiyorum", "tr").model
    assert got == QWEN_14B, f"apostrophe suffix: got {got}"


def test_hourly_cap_and_budget_together() -> None:
    got = extract_slots("saatte 50 TL, toplam bütçe 10.000 TL", "tr").given()
    assert got == {"max_price_per_hour": try_(50), "budget": try_(10_000)}, f"got {got}"


def test_last_mention_wins() -> None:
    got = extract_slots("not Llama 3.1 8B but Llama 3.1 70B, LoRA then QLoRA", "en")
    assert (got.model, got.method) == (LLAMA_70B, "qlora"), f"got {got.given()}"


def test_negated_method_is_skipped() -> None:
    got = extract_slots("full fine-tuning, not QLoRA", "en")
    assert got.method == "full", f"got {got.method}"


def test_every_resolved_spec_resolves() -> None:
    from tools.architectures.registry import resolve_model

    for _, _, text, expected in CASES:
        spec = expected.get("model")
        if spec is not None:
            assert resolve_model(spec).total_params() > 0, f"{text!r}: {spec} must resolve"


@pytest.mark.parametrize(
    ("text", "value"),
    [("1.5", 1.5), ("1,5", 1.5), ("200.000", 200_000), ("200,000", 200_000), ("1 500", 1500),
     ("0.125", 0.125), ("1.234,5", 1234.5), ("1,234.5", 1234.5), ("1.000.000", 1e6),
     ("2,50", 2.5), ("1'000", 1000), ("42", 42), ("3.1416", 3.1416), ("1234.567", 1234.567),
     ("0,125", 0.125)],
)  # fmt: skip
def test_parse_number(text: str, value: float) -> None:
    from assistant.extract.numbers import parse_number

    assert parse_number(text) == value, f"{text!r} -> {parse_number(text)}"


@pytest.mark.parametrize(
    ("text", "lang", "field", "written"),
    [
        ("QLoRA on Llama 3.1 8B, -100M tokens", "en", "tokens", "-100m tokens"),
        ("lora llama 8b on 1e30 tokens", "en", "tokens", "1e30 tokens"),
        ("0 tokens", "en", "tokens", "0 tokens"),
        ("1e20 samples", "en", "samples", "1e20 samples"),
        ("batch 0", "en", "micro_batch_size", "batch 0"),
        ("batch 2.5", "en", "micro_batch_size", "batch 2.5"),
        ("rank -8", "en", "lora_rank", "rank -8"),
        ("-3 epochs", "en", "epochs", "-3 epochs"),
        ("0 GPUs", "en", "num_gpus", "0 gpus"),
        ("deadline -3 hours", "en", "deadline_hours", "-3 hours"),
        ("budget $2 trillion for lora llama 8b", "en", "budget", "$2 trillion"),
        ("QLoRA on Llama 3.1 8B with 1e309 tokens", "en", "tokens", "1e309 tokens"),
        ("lora llama 8b NaN tokens", "en", "tokens", "nan tokens"),
        ("lora llama 8b 10^400 tokens", "en", "tokens", "10^400 tokens"),
        ("lora sur llama 8b avec 1e400 jetons", "fr", "tokens", "1e400 jetons"),
        ("lora llama 8b inf samples", "en", "samples", "inf samples"),
        (
            "lora llama 8b 123456789012345678901 tokens",
            "en",
            "tokens",
            "123456789012345678901 tokens",
        ),
        ("under 5e12 € per hour", "en", "max_price_per_hour", "5e12 € per hour"),
    ],
)
def test_values_the_job_cannot_take_are_refused_not_lost(
    text: str, lang: str, field: str, written: str
) -> None:
    reading = read_slots(text, lang)
    assert [(r.field, r.written) for r in reading.rejected] == [(field, written)]
    assert getattr(reading.update, field) is None
    assert reading.rejected[0].reason, "what is valid, from the job model"


@pytest.mark.parametrize(
    ("text", "lang", "tokens"),
    [
        ("lora llama 8b 10^12 tokens", "en", 1e12),
        ("lora llama 8b 2x10^8 tokens, seq 4096", "en", 2e8),
        ("lora llama 8b 10**9 tokens", "en", 1e9),
        ("llama 8b lora, 5·10^8 token", "tr", 5e8),
    ],
)
def test_a_power_of_ten_is_a_data_amount_not_a_sequence_length(
    text: str, lang: str, tokens: float
) -> None:
    """'10^12 tokens' read as 12-token sequences; '10^400 tokens' as 400 (issue 25)."""
    reading = read_slots(text, lang)
    assert reading.update.tokens == pytest.approx(tokens, rel=1e-12)
    assert reading.update.seq_len in (None, 4096) and reading.rejected == ()


def test_one_refused_value_keeps_the_others() -> None:
    reading = read_slots("lora llama 8b 1e99 tokens seq 4096, batch 2.5", "en")
    assert reading.update.seq_len == 4096 and reading.update.method == "lora"
    assert [r.field for r in reading.rejected] == ["tokens", "micro_batch_size"]
    assert extract_slots("lora llama 8b 1e99 tokens seq 4096, batch 2.5", "en") == reading.update


PREFERENCES = [
    ("rather LoRA than QLoRA", "en", "lora"),
    ("LoRA rather than QLoRA", "en", "lora"),
    ("plutôt lora que qlora finalement", "fr", "lora"),
    ("plutot du LoRA que du QLoRA", "fr", "lora"),
    ("lieber LoRA als QLoRA", "de", "lora"),
    ("liever lora dan qlora", "nl", "lora"),
    ("mejor lora que qlora", "es", "lora"),
    ("rather a full fine-tune than LoRA", "en", "full"),
]


@pytest.mark.parametrize(("text", "lang", "method"), PREFERENCES, ids=[c[0] for c in PREFERENCES])
def test_the_second_term_of_a_preference_is_set_aside(text: str, lang: str, method: str) -> None:
    """'rather X than Y' names Y last, yet X is what the user wants (last mention loses)."""
    assert extract_slots(text, lang).method == method


def test_a_preference_word_alone_sets_aside_nothing() -> None:
    assert extract_slots("je préfère qlora", "fr").method == "qlora"
    assert extract_slots("better use QLoRA", "en").method == "qlora"
    assert extract_slots("lieber AWS als GCP", "de").providers == ["aws"]


MISSPELT = [
    ("lora on lamma 3.1 8b", LLAMA_8B),
    ("lamma3.1-8b-instruct", LLAMA_8B),
    ("mistrall 7b", MISTRAL_7B),
    ("mistrl 7b", MISTRAL_7B),  # closer to Mistral than to Mixtral
    ("gemmma 2 9b", "google/gemma-2-9b"),
    ("mixtrl 8x7b", MIXTRAL),
]


@pytest.mark.parametrize(("text", "model_id"), MISSPELT, ids=[c[0] for c in MISSPELT])
def test_a_misspelt_family_word_with_a_size_is_read(text: str, model_id: str) -> None:
    assert extract_slots(text, "en").model == model_id


def test_a_word_near_no_family_or_without_a_size_is_no_model() -> None:
    assert extract_slots("the lamma is nice", "en").model is None  # no size or version
    assert extract_slots("queen 7b", "en").model == "7B"  # too far from 'qwen': the size only
    assert extract_slots("falcon 7b", "en").model == "7B"


SPLIT_FULL = [
    ("kan ik llama 3.2 3b helemaal zelf finetunen?", "nl", "full"),
    ("ein komplettes Training von Qwen2.5 7B", "de", "full"),
    ("ich will Mistral 7B vollständig neu trainieren", "de", "full"),
    ("Llama 3.1 8B voll finetunen, 100M Tokens", "de", "full"),  # issue 25: sized as LoRA
    ("Llama 8B komplett nachtrainieren", "de", "full"),
    ("train the whole thing completely", "en", "full"),
    ("quiero entrenar el modelo completo", "es", "full"),
    ("modeli tamamen eğitmek istiyorum", "tr", "full"),
    ("volledig finetunen of toch lora?", "nl", "lora"),  # the last mention still wins
    ("lora, not a complete fine-tune", "en", "lora"),
]


@pytest.mark.parametrize(("text", "lang", "method"), SPLIT_FULL, ids=[c[0] for c in SPLIT_FULL])
def test_a_word_of_completeness_near_a_training_word_is_full(
    text: str, lang: str, method: str
) -> None:
    assert extract_slots(text, lang).method == method


def test_training_on_the_whole_dataset_is_no_method() -> None:
    assert extract_slots("train on the whole dataset for 2 epochs", "en").method is None
    assert extract_slots("qlora op llama 8b trainen", "nl").method == "qlora"


@pytest.mark.parametrize(
    ("text", "spot"),
    [("and w/ spot?", "allowed"), ("w/spot is fine", "allowed"), ("lora w/o spot", "never")],
)
def test_chat_shorthand_with_and_without(text: str, spot: str) -> None:
    assert extract_slots(text, "en").spot == spot


def test_a_slash_inside_a_name_is_no_shorthand() -> None:
    assert extract_slots("meta-llama/Llama-3.1-8B", "en").model == "meta-llama/Llama-3.1-8B"
