"""The job in the conversation breaks ties between twin entries.

Some topics come in twins that answer the same question for two kinds of job: pre-training from
scratch and fine-tuning (full, LoRA, QLoRA). "How much memory do I need?" reads the same for both,
so the words alone cannot choose, and the ranking often puts the wrong twin first. The job can:
a search given the job's method (`pretrain`, `full`, `lora`, `qlora`) puts the twin written for
that kind of job where the other twin stood, whenever the other one ranked above it. Nothing else
moves, and no score is tuned: the twins swap places.

What decides, strongest first:
1. the kind of job the query names itself ("... to fine-tune", "LoRA", "from scratch",
   "sıfırdan"), unless it names both;
2. the conversation's job;
3. a plain word for training ("train", "entraîner", "eğitim", "entrenar") without a fine-tuning
   word: the knowledge base's training twins are the ones written for training a model, and a
   question that says "train" without a job in the conversation means that.
Otherwise the ranking is left as it is. The cues are word stems, matched on the lowercased query
with accents removed (`fold`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

from tools.enums import Method

JobKind = Literal["pretrain", "finetune"]

# (topic written for pre-training, its twin written for fine-tuning)
TWINS: tuple[tuple[str, str], ...] = (
    ("faq/training-memory", "faq/finetune-memory"),
    ("faq/training-gpu-count", "faq/finetune-gpu-count"),
    ("faq/training-spot", "faq/finetune-spot"),
    ("training/what-training-demands", "finetune/what-it-demands"),
    ("reading/training-comparison", "reading/finetune-cost"),
)

# Word stems that name a kind of job, in the six languages (accents removed, lowercase).
_FINETUNE_CUES = (
    r"fine[\s-]?tun\w*|finetun\w*|q?lora\b|peft\b|adapter\w*|"
    r"fijn[\s-]?afstem\w*|bijtrain\w*|bij te trainen|"  # nl
    r"affin\w*|ajustement fin|reglage fin|"  # fr
    r"ince ayar\w*|"  # tr
    r"feinabstimm\w*|feintun\w*|nachtrain\w*|"  # de
    r"afina\w*|ajuste fino|reentren\w*"  # es
)
_PRETRAIN_CUES = (
    r"pre[\s-]?train\w*|from scratch|"
    r"vanaf nul|van nul af|voortrain\w*|"  # nl
    r"pre[\s-]?entrain\w*|de zero|a partir de zero|"  # fr
    r"sifirdan|on[\s-]?egitim\w*|"  # tr
    r"vortrain\w*|von grund auf|von null|"  # de
    r"pre[\s-]?entren\w*|desde cero|de cero"  # es
)
# Plain words for training (en, nl, fr, tr, de, es).
_TRAIN_WORDS = r"train\w*|entrain\w*|egit\w*|entren\w*"
_FINETUNE = re.compile(rf"\b(?:{_FINETUNE_CUES})")
_PRETRAIN = re.compile(rf"\b(?:{_PRETRAIN_CUES})")
_TRAIN = re.compile(rf"\b(?:{_TRAIN_WORDS})")


def fold(text: str) -> str:
    """Lowercase `text` with accents removed and Turkish dotless/dotted i read as i."""
    lowered = text.replace("İ", "i").replace("I", "i").lower().replace("ı", "i")
    decomposed = unicodedata.normalize("NFKD", lowered)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def job_kind(method: Method | None) -> JobKind | None:
    if method is None:
        return None
    return "pretrain" if method == "pretrain" else "finetune"


def query_kind(query: str) -> JobKind | None:
    """The kind of job the query names itself, or None (neither or both)."""
    folded = fold(query)
    finetune, pretrain = bool(_FINETUNE.search(folded)), bool(_PRETRAIN.search(folded))
    if finetune == pretrain:
        return None
    return "finetune" if finetune else "pretrain"


def train_word_kind(query: str) -> JobKind | None:
    """ "pretrain" when the query says "train" (any of the six languages) and names no
    fine-tuning, else None."""
    folded = fold(query)
    if _TRAIN.search(folded) and not _FINETUNE.search(folded):
        return "pretrain"
    return None


def prefer_twins(
    groups: Sequence[tuple[str, float]], query: str, method: Method | None
) -> list[tuple[str, float]]:
    """`groups` (topic, score), best first, with each twin pair in the order the job asks for:
    the kind the query names, else the conversation's job (`method`), else a plain word for
    training."""
    kind = query_kind(query) or job_kind(method) or train_word_kind(query)
    ordered = list(groups)
    if kind is None:
        return ordered
    position = {group: i for i, (group, _) in enumerate(ordered)}
    for pretrain, finetune in TWINS:
        wanted, other = (pretrain, finetune) if kind == "pretrain" else (finetune, pretrain)
        if wanted in position and other in position and position[other] < position[wanted]:
            i, j = position[other], position[wanted]
            (a, score_a), (b, score_b) = ordered[i], ordered[j]
            ordered[i], ordered[j] = (b, score_a), (a, score_b)
            position[wanted], position[other] = i, j
    return ordered
