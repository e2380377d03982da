"""The structural cues of a message the intent router weighs: what it names and how it asks.

Phrases come from `cues.yaml` (every language merged, folded like the lexicon); names come from
the extractor's own readers (GPUs, providers) and the message's `JobUpdate`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from assistant.extract.intent import QuestionKind, classify_intent, names_only_topics
from assistant.extract.names import find_gpus
from assistant.extract.patterns import patterns
from assistant.extract.text import compile_phrases, fold
from tools.job import JobSpec, JobUpdate
from tools.job.fields import IMAGE_FIELDS

__all__ = ["Cues", "read_cues"]

_CATEGORIES = ("why", "against", "not", "compare", "alternative", "between", "pair", "fit", "own",
               "can", "rent", "serve", "train", "greet", "ask_time", "ask_cost", "how_much",
               "cost_word", "how_long", "time_word", "follow", "absent", "ask_total",
               "billing")  # fmt: skip
_WHY_REACH = 40  # characters after "why" where a negation makes it "why not"
_OPENING = " \t\n¿¡\"'(-."  # stripped before the opening words of a follow-up
_WORD = re.compile(r"[^\W\d_]+|\d+")
_GAP_WORDS = 4  # words between two GPU names joined as alternatives ("A100 80GB or an H100")
_FRAME_WORDS = 3  # words from "between" to the first name (or, Turkish, from the second to it)
_ASK_REACH = 6  # words from "how much" / "how long" to the verb of paying or taking time
# Fields that describe the job itself (an amendment changes one of them).
_JOB_FIELDS = ("model", "method", "precision", "optimizer", "lora_rank", "micro_batch_size",
               "seq_len", "gradient_checkpointing", "num_gpus", "zero_stage", "tokens",
               "samples", "epochs", "max_price_per_hour", "budget", "deadline_hours", "spot",
               "providers", "regions", "gpus", "objective", "offload_optimizer",
               "images", "steps", *IMAGE_FIELDS)  # fmt: skip


_HARDWARE_FIELDS = frozenset({"gpus", "num_gpus", "max_vram_gib"})


def _sets_only(update: JobUpdate, fields: frozenset[str]) -> bool:
    given = update.given()
    return bool(given) and not update.clear and set(given) <= fields


@dataclass(frozen=True)
class Cues:
    """What the router knows about a message besides its embedding."""

    gpu_families: tuple[str, ...]  # distinct GPUs named (each a comma-joined id list)
    providers: tuple[str, ...]
    why_not: bool
    compare_words: bool  # comparison words, or two GPUs offered as alternatives
    fit_words: bool
    own_words: bool
    can_words: bool  # "can I ...?": whether the job can be done (on the hardware named)
    rent_words: bool  # renting or choosing what to rent: a ranking question
    serve_words: bool
    train_words: bool
    greeting: bool
    asks_time: bool
    asks_cost: bool
    billing_words: bool  # how a cloud bills (per second, per hour): about renting GPUs
    question: bool
    words: int
    has_job: bool  # the conversation already describes a job (a model is known)
    sets_job: bool  # the message sets a field of the job
    new_model: bool  # the message names a model other than the conversation's
    vram: bool  # the message states a memory size per GPU
    hardware_only: bool  # what it sets is only GPUs, their count or memory: hardware to check
    topics_only: bool  # what it sets could all be a question's topic (`names_only_topics`)
    kind: QuestionKind  # the question's kind by its wording (`classify_intent`)
    follows: bool = False  # opens like an elliptic follow-up: "and on an A100?", "¿y con una L4?"
    previous: str | None = None  # the intent of the conversation's previous message


@cache
def _phrases() -> dict[str, re.Pattern[str]]:
    import yaml

    text = resources.files("assistant.extract.routing").joinpath("cues.yaml").read_text("utf-8")
    data = yaml.safe_load(text)
    compiled = {}
    for category in _CATEGORIES:
        phrases = [str(p) for items in data[category].values() for p in items]
        compiled[category] = compile_phrases(phrases)
    return compiled


def _words_of(text: str, count: int, last: bool = False) -> str:
    """The first (or `last`) `count` words of `text`, space-joined with a space either side."""
    words = text.split()
    return " " + " ".join(words[-count:] if last else words[:count]) + " "


def _offers_alternatives(folded: str, found: dict[str, re.Pattern[str]]) -> bool:
    """Two different GPUs named as alternatives: joined by an "or" word ("A100 or H100",
    "A100 mü H100 mü", "L40S ou A100 80Go"), or framed as "between X and Y" ("entre une L40S
    et une A100", "A100 ile H100 arasında")."""
    named = find_gpus(folded, bare=True)
    for (a, _), (b, _) in itertools.pairwise(named):
        gap = folded[a.end : b.start]
        if a.value == b.value or len(gap.split()) > _GAP_WORDS:
            continue
        if found["alternative"].search(f" {gap} "):
            return True
        before = _words_of(folded[: a.start], _FRAME_WORDS, last=True)
        after = _words_of(folded[b.end :], _FRAME_WORDS)
        framed = found["between"].search(before) or found["between"].search(after)
        if framed and found["pair"].search(f" {gap} "):
            return True
    return False


def _asks_near(folded: str, ask: re.Pattern[str], verb: re.Pattern[str]) -> bool:
    """An asking phrase followed within a few words by its verb: "cuánto me va a costar",
    "hoe lang gaat dat duren", "combien ça va me coûter"."""
    return any(verb.search(_words_of(folded[m.end() :], _ASK_REACH)) for m in ask.finditer(folded))


def _why_not(folded: str, found: dict[str, re.Pattern[str]]) -> bool:
    if found["against"].search(folded):
        return True
    for why in found["why"].finditer(folded):
        if found["not"].search(folded, why.end(), why.end() + _WHY_REACH):
            return True
    return False


def read_cues(
    text: str, lang: str, state: JobSpec, update: JobUpdate, previous: str | None = None
) -> Cues:
    """The cues of `text` (in `lang`) in a conversation whose job is `state` and whose previous
    message had the intent `previous`."""
    folded = fold(text)
    found = _phrases()
    has = lambda name: bool(found[name].search(folded))  # noqa: E731
    families = tuple(dict.fromkeys(f.value for f, _ in find_gpus(folded, bare=True)))
    providers = tuple(dict.fromkeys(key for key, _ in patterns(lang).providers.finditer(folded)))
    model = update.model_label()
    return Cues(
        gpu_families=families,
        providers=providers,
        why_not=_why_not(folded, found) or has("absent"),
        compare_words=has("compare") or _offers_alternatives(folded, found),
        fit_words=has("fit"),
        own_words=has("own"),
        can_words=has("can"),
        rent_words=has("rent"),
        serve_words=has("serve"),
        train_words=has("train"),
        greeting=has("greet"),
        asks_time=has("ask_time") or _asks_near(folded, found["how_long"], found["time_word"]),
        asks_cost=has("ask_cost")
        or _asks_near(folded, found["how_much"], found["cost_word"])
        or ("?" in text and has("ask_total") and not re.search(r"\d", folded)),
        billing_words=has("billing"),
        question="?" in text or bool(re.search(r"\b(mi|mı|mu|mü)\b", folded)),
        words=len(_WORD.findall(folded)),
        has_job=state.model is not None,
        sets_job=any(getattr(update, name) is not None for name in _JOB_FIELDS)
        or bool(update.clear),
        new_model=model is not None and model != state.model_label(),
        vram=update.max_vram_gib is not None,
        hardware_only=_sets_only(update, _HARDWARE_FIELDS),
        topics_only=names_only_topics(update),
        kind=classify_intent(text, lang, state, update),
        follows=bool(found["follow"].match(folded.lstrip(_OPENING))),
        previous=previous,
    )
