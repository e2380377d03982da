"""Image-model jobs read from messages in six languages."""

from __future__ import annotations

import pytest

from assistant.extract.slots import extract_slots

SDXL = "stabilityai/stable-diffusion-xl-base-1.0"
FLUX = "black-forest-labs/FLUX.1-dev"
LLAVA = "llava-hf/llava-1.5-7b-hf"


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("Stable Diffusion XL finetunen met dreambooth, welke GPU huur ik?", "nl",
         {"model": SDXL, "dreambooth": True}),
        ("Est-ce que je peux affiner LLaVA 1.5 7B sur une seule RTX 4090 ?", "fr",
         {"model": LLAVA}),
        ("FLUX.1-dev mit LoRA feintunen, 1024px, 30 Bilder", "de",
         {"model": FLUX, "method": "lora", "resolution": 1024, "images": 30}),
        ("SDXL DreamBooth LoRA at 1024px with 30 images, 800 steps, train the text encoder", "en",
         {"model": SDXL, "method": "lora", "resolution": 1024, "images": 30, "steps": 800,
          "dreambooth": True, "train_text_encoder": True}),
        ("SDXL con dreambooth, 20 imágenes de 1024x1024", "es",
         {"model": SDXL, "dreambooth": True, "images": 20, "resolution": 1024}),
        ("SDXL dreambooth, 25 görsel, 512 piksel", "tr",
         {"model": SDXL, "dreambooth": True, "images": 25, "resolution": 512}),
        # issue 25, pattern 4: resolution and image counts as people write them
        ("fine-tune SDXL with LoRA on 30 pics at 1024 res", "en",
         {"model": SDXL, "images": 30, "resolution": 1024}),
        ("SDXL LoRA mit 15 Selfies, 512er Auflösung", "de",
         {"model": SDXL, "images": 15, "resolution": 512}),
        ("SDXL, 1024'lük çözünürlükte 200 fotoğraf", "tr",
         {"model": SDXL, "images": 200, "resolution": 1024}),
        ("SDXL en résolution de 768 avec 40 photos", "fr",
         {"model": SDXL, "images": 40, "resolution": 768}),
        ("SDXL, resolución 512, 12 selfis", "es", {"model": SDXL, "images": 12, "resolution": 512}),
        ("SDXL met 50 plaatjes op resolutie 1024", "nl",
         {"model": SDXL, "images": 50, "resolution": 1024}),
    ],
)  # fmt: skip
def test_image_jobs_in_six_languages(text: str, lang: str, expected: dict[str, object]) -> None:
    assert_reads(text, lang, expected)


def assert_reads(
    text: str, lang: str, expected: dict[str, object], image_job: bool = False
) -> None:
    """The fields `expected` names are read from `text` with exactly these values."""
    given = extract_slots(text, lang, image_job=image_job).given()
    assert {k: given.get(k) for k in expected} == expected


def test_no_resolution_from_other_words() -> None:
    assert extract_slots("1024 resources on 2048 tokens resolution", "en").given() == {
        "seq_len": 2048
    }


def test_negations_and_the_masking() -> None:
    off = extract_slots("SDXL LoRA, text encoder frozen, without EMA", "en").given()
    assert off["train_text_encoder"] is False and off["ema"] is False
    on = extract_slots("SDXL, cache latents, prior preservation", "en").given()
    assert on["cache_latents"] is True and on["prior_preservation"] is True
    llava = extract_slots("LLaVA 1.5 7B with 2048 tokens", "en").given()
    assert llava["model"] == LLAVA and llava["seq_len"] == 2048  # "7B" is not a bare size
    plain = extract_slots("llama 3.1 8b lora with 2048 tokens on 2 GPUs", "en").given()
    assert not {"resolution", "images", "steps", "dreambooth"} & set(plain)


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("lower the resolution to 768 please", "en", {"resolution": 768}),
        ("bump steps to 2000", "en", {"steps": 2000}),
        ("zet de resolutie op 896 en de stappen naar 1800", "nl",
         {"resolution": 896, "steps": 1800}),
        ("baisse la résolution à 768", "fr", {"resolution": 768}),
        ("çözünürlüğü 768 yap, adım sayısını 1500'e çıkar", "tr",
         {"resolution": 768, "steps": 1500}),
        ("Auflösung auf 768 runter, Schritte auf 1500", "de", {"resolution": 768, "steps": 1500}),
        ("sube los pasos a 2500", "es", {"steps": 2500}),
        ("lora on sdxl with 40 product shots", "en", {"images": 40}),
    ],
)  # fmt: skip
def test_a_change_written_noun_first(text: str, lang: str, expected: dict[str, object]) -> None:
    """Issue 25, patterns 3-4: "steps to 2000", "Auflösung auf 768" set nothing before."""
    assert_reads(text, lang, expected)


def test_french_pas_before_a_number_is_a_negation_not_steps() -> None:
    assert "steps" not in extract_slots("je ne veux pas 2000 images", "fr").given()


@pytest.mark.parametrize(
    ("text", "lang", "image_job", "expected"),
    [
        # issue 25: a bare side is the resolution of a diffusion job, named here or before
        ("quick sdxl lora at 1024, 18 photos of our mascot", "en", False,
         {"model": SDXL, "resolution": 1024, "images": 18}),
        ("una lora de flux dev a 768 con 22 fotos", "es", False,
         {"model": FLUX, "resolution": 768, "images": 22}),
        ("d'accord, on repasse en 512", "fr", True, {"resolution": 512}),
        ("dann lieber auf 896", "de", True, {"resolution": 896}),
        ("640'ta dene", "tr", True, {"resolution": 640}),
        ("en op 1152?", "nl", True, {"resolution": 1152}),
        ("1536?", "en", True, {"resolution": 1536}),
    ],
)  # fmt: skip
def test_a_bare_side_in_a_diffusion_job(
    text: str, lang: str, image_job: bool, expected: dict[str, object]
) -> None:
    assert_reads(text, lang, expected, image_job)


def test_a_bare_number_is_no_side_outside_a_diffusion_job() -> None:
    assert "resolution" not in extract_slots("llama 3.1 8b lora at 1024", "en").given()
    assert "resolution" not in extract_slots("llava 1.5 7b lora at 1024", "en").given()
    assert "resolution" not in extract_slots("at 1000", "en", image_job=True).given()  # not x64
    steps = extract_slots("sdxl lora at 1024 for 1280 steps", "en").given()
    assert steps["resolution"] == 1024 and steps["steps"] == 1280


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("what if the vision encoder trains as well", "en", True),
        ("on garde la vision tower gelée", "fr", False),
        ("mit dem Vision-Encoder zusammen trainieren", "de", True),
        ("sin tocar la torre de visión, congelada", "es", False),
        ("görü kulesini de eğitelim", "tr", True),
        ("de vision tower blijft bevroren", "nl", False),
    ],
)  # fmt: skip
def test_vision_tower_training(text: str, lang: str, expected: bool) -> None:
    assert extract_slots(text, lang).given()["train_vision_tower"] is expected


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("flux lora met 45 productfoto's", "nl", {"images": 45}),
        ("40 Produktbilder, sdxl lora", "de", {"images": 40}),
        ("qwen2-vl 7b lora with 3 images per sample", "en", {"images_per_sample": 3}),
        ("en met 2 afbeeldingen per voorbeeld?", "nl", {"images_per_sample": 2}),
        ("örnek başına 4 görsel olsun", "tr", {"images_per_sample": 4}),
        ("adımları 1500'e çıkar", "tr", {"steps": 1500}),
        ("sd 1.5 ile full dreambooth, 20 fotoğraf", "tr",
         {"method": "full", "dreambooth": True, "images": 20}),
    ],
)  # fmt: skip
def test_compound_nouns_counts_per_sample_and_full_dreambooth(
    text: str, lang: str, expected: dict[str, object]
) -> None:
    assert_reads(text, lang, expected)
