"""Slots of image-model jobs in a message: the model, resolution, images, steps, DreamBooth,
text-encoder and vision-tower training, prior preservation, cached latents and EMA, in six
languages.

`read_vision` runs first among the slot readers (assistant/extract/slots.py) and masks what it
read, so "LLaVA 1.5 7B" is not read as a bare 7B model and "1024px" not as a batch or a count.
Model names are matched as the language-model registry matches them: word n-grams of the folded
text, normalised like `tools.architectures.registry.normalize_name`, against the built-in
diffusion pipelines and VLMs (tools/data/multimodal.yaml), longest first.
"""

from __future__ import annotations

import re
from typing import Any

from tools.architectures.multimodal import find_multimodal

__all__ = ["is_diffusion", "read_bare_side", "read_vision"]

_TOKEN = re.compile(r"[^\s,;:!?()\"'<>|¦]+")
_MAX_WORDS = 5
# A side in pixels: "1024px", "1024 res", "512er Auflösung", "1024'lük çözünürlük", "768x768",
# "resolution 1024", "résolution de 768", a change to it: "resolution down to 768", "Auflösung
# auf 768", "çözünürlüğü 768 yap" (folded text: no accents).
_RES_WORD = r"(?:res|resolution|resolutie|auflosung|resolucion|cozunurluk\w*|cozunurlug\w*)"
# Between a quantity's noun and its new value: "to", "down to", "auf", "naar", "à", "a", "en".
_TO = r"(?:\s+(?:down|up|back))?\s*(?:[:=]|of|de|van|von|at|a|to|naar|op|auf|sur|en|sobre)?\s*"
_RESOLUTION = re.compile(
    r"\b(\d{3,4})(?:er|'?l[iu]k)?\s*(?:px|pixels?|piksel|" + _RES_WORD + r")\b"
    r"|\b(\d{3,4})\s*[x×]\s*\2\b"
    r"|\b" + _RES_WORD + _TO + r"(\d{3,4})(?:\s*px)?\b"
)
# A count of training images: "30 pics", "15 selfies", "200 fotoğraf", "40 Bilder".
_IMAGES = re.compile(
    r"\b(\d{1,7})\s+(?:\w+\s+)?(?:images?|photos?|pictures?|pics?|pix|selfies?|selfis"
    r"|snapshots?|shots?|portraits?|afbeeldingen|plaatjes|portretten|\w*foto'?s|fotografias"
    r"|\w*bilder[n]?|imagenes|gorsel\w*|resim\w*|fotograf\w*)\b"
)
# Images in each training sample of a VLM: "3 images per sample", "3 afbeeldingen per sample",
# "2 Bilder pro Beispiel", "örnek başına 2 görsel" (read before the plain image count).
_PER_SAMPLE = (
    r"(?:per|each|a|par|pro|je|por|cada|başına|basina)\s+(?:training\s+)?(?:samples?|examples?"
    r"|voorbeelds?|exemples?|echantillons?|beispiele?|ejemplos?|muestras?|ornek\w*)"
)
_IMAGES_PER_SAMPLE = re.compile(
    r"\b(\d{1,2})\s+(?:images?|afbeeldingen|bilder[n]?|imagenes|gorsel\w*|resim\w*)\s+"
    + _PER_SAMPLE
    + r"\b"
    r"|\b(?:ornek|sample)\w*\s+(?:basina|per)\s+(\d{1,2})\s+(?:gorsel\w*|resim\w*|images?)\b"
)
# "1200 steps", and a change to them: "steps to 2000", "Schritte auf 1500", "adım sayısını 1500'e"
# (French "pas" only after its number: before one it is a negation).
_STEPS = re.compile(
    r"\b(\d{1,7})\s*(?:steps?|stappen|etapes|pas|schritte[n]?|pasos|adim)\b"
    r"|\b(?:steps?|stappen|etapes|schritte[n]?|pasos|adim\w*(?:\s+sayisi\w*)?)"
    + _TO
    + r"(\d{2,7})\b"
)
_DREAMBOOTH = re.compile(r"\bdream\s?booth\b")
_FULL_BEFORE = re.compile(r"\bfull[\s-]+$")  # "full DreamBooth": a full fine-tune of the denoiser
_PRIOR = re.compile(r"\bprior[\s-]?preservation\b|\bclass images\b|\bregularization images\b")
_CACHE_LATENTS = re.compile(
    r"\b(?:cach\w*|pre-?encod\w*)\s+(?:the\s+)?latents?\b|\blatents?\s+cach\w*"
)
_EMA = re.compile(r"\bema\b")
_TEXT_ENCODER = re.compile(
    r"\b(?:text[\s-]?encoders?|tekst[\s-]?encoders?|encodeurs? de texte|codificador(?:es)? de"
    r" texto|metin kodlayici\w*)\b"
)
# A VLM's vision encoder: "unfreeze the vision tower", "samt Vision Tower", "l'encodeur visuel",
# "görü kulesi" (trained unless a negation or "frozen" says otherwise, as the text encoder).
_VISION_TOWER = re.compile(
    r"\b(?:vision[\s-]?(?:tower|encoder|backbone)s?|visual encoders?|image encoders?"
    r"|beeld[\s-]?encoder|visie[\s-]?encoder|encodeurs? (?:visuels?|d'images?)|tour de vision"
    r"|bild[\s-]?encoder|codificador(?:es)? (?:visual|de imagen)(?:es)?|torre de vision"
    r"|gorsel kodlayici\w*|goru kulesi\w*)\b"
)
# A bare side in a diffusion job, after a preposition or alone: "sdxl at 1024", "a 512",
# "passe en 1024", "auf 768", "1024'te", "1024?". Read last (assistant/extract/slots.py), so a
# number another reader took ("1024 tokens", "1200 steps") is gone; a multiple of 64 px only.
_BARE_SIDE = re.compile(
    r"(?:\b(?:at|in|a|en|op|auf|bei|mit|with|de|con|avec|sur|to|naar|zu)\s+|^\W*)"
    r"(\d{3,4})(?:'?(?:te|de|da|ta|e|a|ye))?(?![\w.,]?\d)(?!\s*(?:x|\u00d7|px|k\b))"
)
_SIDES = range(256, 2049, 64)
_FROZEN_AFTER = re.compile(
    r"\s*(?:is\s+|stays\s+|blijft\s+|bleibt\s+|reste\s+)?(?:frozen|off|bevroren|gele\w*|eingefroren"
    r"|congelad\w*|donduruldu\w*|dondurulmus)\b"
)
_NEGATION = re.compile(
    r"\b(?:no|not|without|frozen|freeze|zonder|niet|geen|sans|pas|gele|ohne|nicht|kein\w*"
    r"|eingefroren|sin|congelad\w*|olmadan|dondur\w*)\b"
)


def _find_models(text: str) -> list[tuple[int, int, str]]:
    """(start, end, model id) of each multimodal model named, longest n-gram first."""
    words = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]
    found: list[tuple[int, int, str]] = []
    i = 0
    while i < len(words):
        for n in range(min(_MAX_WORDS, len(words) - i), 0, -1):
            phrase = " ".join(w for _, _, w in words[i : i + n])
            model = find_multimodal(phrase)
            if model is not None and not phrase.isdigit():
                found.append((words[i][0], words[i + n - 1][1], model.id))
                i += n
                break
        else:
            i += 1
    return found


def _negated(text: str, start: int) -> bool:
    """A negation among the few words before `start`, in the same clause."""
    before = re.split(r"[,.;]", text[max(0, start - 25) : start])[-1]
    return _NEGATION.search(before) is not None


def read_vision(doc: Any, slots: dict[str, Any]) -> None:
    """Set the image-model slots `doc.text` (folded) states, masking what was read."""
    text = doc.text
    for start, end, model_id in _find_models(text):
        slots["model"] = model_id
        doc.mask(start, end)
    for pattern, slot, kind in ((_RESOLUTION, "resolution", int),
                                (_IMAGES_PER_SAMPLE, "images_per_sample", int),
                                (_IMAGES, "images", int), (_STEPS, "steps", int)):  # fmt: skip
        for match in pattern.finditer(doc.text):
            value = next(g for g in match.groups() if g)
            slots[slot] = kind(value)
            doc.note(slot, match)
            doc.mask(match.start(), match.end())
    for pattern, slot in ((_DREAMBOOTH, "dreambooth"), (_PRIOR, "prior_preservation"),
                          (_CACHE_LATENTS, "cache_latents"), (_EMA, "ema"),
                          (_TEXT_ENCODER, "train_text_encoder"),
                          (_VISION_TOWER, "train_vision_tower")):  # fmt: skip
        for match in pattern.finditer(doc.text):
            off = _negated(doc.text, match.start()) or _FROZEN_AFTER.match(doc.text, match.end())
            slots[slot] = not off
            if pattern is _DREAMBOOTH and _FULL_BEFORE.search(doc.text, 0, match.start()):
                slots["method"] = "full"
            doc.mask(match.start(), match.end())


def is_diffusion(model: object) -> bool:
    """Whether `model` (a job's model: an id or a name; an uploaded architecture is none) is
    one of the built-in diffusion pipelines."""
    found = find_multimodal(model) if isinstance(model, str) and model else None
    if found is None:
        return False
    from tools.architectures.diffusion import DiffusionModel  # loaded with the model found

    return isinstance(found, DiffusionModel)


def read_bare_side(doc: Any, slots: dict[str, Any]) -> None:
    """A bare side in pixels (`_BARE_SIDE`) in a message about a diffusion job."""
    if "resolution" in slots:
        return
    for match in _BARE_SIDE.finditer(doc.text):
        if int(match.group(1)) in _SIDES:
            slots["resolution"] = int(match.group(1))
            doc.note("resolution", match)
            doc.mask(match.start(1), match.end(1))
