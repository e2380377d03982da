"""Which of eight intents a message has: nearest examples of the bank, weighed with its cues.

Each intent's similarity is the mean cosine of the message's `K` nearest bank examples of that
intent (all languages: the embedder is multilingual). The cues (`assistant.extract.routing.cues`)
then add to or rule out intents, each for a reason a person would give:

- an intent that needs something the message and the conversation lack is ruled out: an
  amendment needs a job in the conversation, a comparison two GPUs, a "why not" a GPU or a
  provider to ask about, a fit check a GPU or a memory size to check against;
- "why ... not" asks why_not; comparison words with two GPUs, or two GPUs offered as
  alternatives ("A100 or H100", "between an L4 and an A10G"), ask compare; "enough"/"fit" or
  one's own hardware with a GPU or a size ask fit_check; serving and inference words without a
  training word are out of scope; a greeting with nothing else is small talk, and a message
  with no greeting and nothing about training or GPUs leans out of scope;
- "how much ... cost" / "how long ... take" (`asks_cost`, `asks_time`) with a job in the
  conversation asks about that job (guidance, answered from the ranking's first choice);
- a message that sets job fields amends the conversation's job, or describes a new one;
- how much of the message the knowledge base holds (`support`, the share of its words one
  entry has: `KnowledgeBase.support`, thresholds calibrated in benchmarks/retrieval/scope.py):
  a question it covers well leans to guidance, a message naming nothing of a job that it
  hardly covers leans out of scope ("which coin should I mine?", "how do I write a Helm
  chart?");
- a short message that opens like a follow-up ("and on an A100 40GB?", "¿y con una L4?") and
  names no other model asks the previous message's question again about what it names, when
  that question was a fit check, a comparison or a "why not".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from assistant.extract.routing.bank import bank, embed_query
from assistant.extract.routing.cues import Cues, read_cues
from tools.job import JobSpec, JobUpdate

__all__ = ["INTENTS", "Intent", "Routed", "route_intent"]

Intent = Literal[
    "job", "fit_check", "compare", "why_not", "amend", "guidance", "out_of_scope", "small_talk"
]
INTENTS: tuple[Intent, ...] = get_args(Intent)
K = 3
# How much a cue moves an intent's similarity; nearest-neighbour similarities of different
# intents are typically a few hundredths apart, so a cue of 0.15 decides, one of 0.04 tips.
DECIDES = 0.15
TIPS = 0.06
NUDGES = 0.03
_SHORT = 6  # words: a greeting with more than this says something else too
_ELLIPTIC = 9  # words: a follow-up longer than this says what it asks
# Questions an elliptic follow-up repeats about what it names.
_REPEATABLE: tuple[Intent, ...] = ("fit_check", "compare", "why_not")
# Knowledge-base support (0-1) below which a message is hardly covered, and from which a
# question is covered well: chosen on the dev questions of benchmarks/retrieval/scope.py (below
# 0.35: 54 of 90 out-of-scope messages, 13 of 309 knowledge questions; 0.60 and up: most
# knowledge questions, three out-of-scope requests, none of them questions). A lean, not a
# verdict: the bank's similarities and the other cues still count.
UNSUPPORTED_AT = 0.35
_SUPPORT_WORDS = 4  # words: "ty!" or "goeiemiddag!" hold too little to measure coverage on
SUPPORTED_AT = 0.60


@dataclass(frozen=True)
class Routed:
    """The intent of a message, with the similarities and cues it was chosen from."""

    intent: Intent
    similarity: dict[str, float]
    score: dict[str, float]
    cues: Cues
    reasons: list[str] = field(default_factory=list)

    @property
    def confidence(self) -> float:
        """The winning score's lead over the runner-up (0 when tied)."""
        ordered = sorted((s for s in self.score.values() if math.isfinite(s)), reverse=True)
        return ordered[0] - ordered[1] if len(ordered) > 1 else 1.0


def similarities(text: str) -> dict[str, float]:
    """Intent -> mean cosine of the message's K nearest bank examples of that intent."""
    b = bank()
    sims = b.vectors @ embed_query(text.strip()[:1000] or ".")
    by_intent: dict[str, float] = {}
    intents = np.array(b.intents)
    for intent in INTENTS:
        own = np.sort(sims[intents == intent])[::-1][:K]
        by_intent[intent] = float(own.mean()) if own.size else -1.0
    return by_intent


def route_intent(
    text: str,
    lang: str,
    state: JobSpec,
    update: JobUpdate,
    previous: str | None = None,
    support: Callable[[str, str], float | None] | None = None,
) -> Routed:
    """The intent of `text` (in `lang`) given the conversation's job `state`, what the message
    sets (`update`, from `extract_slots`), the intent of the previous message (`previous`) and
    how well the knowledge base covers it (`support(text, lang)`, 0-1 or None: asked only where
    it can count, so a job turn does not open the knowledge base)."""
    cues = read_cues(text, lang, state, update, previous)
    sims = similarities(text)
    score = dict(sims)
    reasons: list[str] = []

    def add(intent: Intent, amount: float, why: str) -> None:
        score[intent] += amount
        reasons.append(f"{intent} {amount:+.2f}: {why}")

    for intent, why in _ruled_out(cues):
        score[intent] = -math.inf
        reasons.append(f"{intent} ruled out: {why}")
    covered = support(text, lang) if support is not None and _measurable(cues) else None
    for intent, amount, why in _weights(cues) + _support_weights(cues, covered):
        if math.isfinite(score[intent]):
            add(intent, amount, why)
    best = max(INTENTS, key=lambda i: score[i])
    return Routed(intent=best, similarity=sims, score=score, cues=cues, reasons=reasons)


def _ruled_out(c: Cues) -> list[tuple[Intent, str]]:
    out: list[tuple[Intent, str]] = []
    if not c.has_job:
        out.append(("amend", "no job in the conversation yet"))
    if len(c.gpu_families) < 2:
        out.append(("compare", "fewer than two GPUs named"))
    if not (c.gpu_families or c.providers):
        out.append(("why_not", "no GPU or provider named"))
    if not (c.gpu_families or c.vram):
        out.append(("fit_check", "no GPU or memory size to check against"))
    return out


def _weights(c: Cues) -> list[tuple[Intent, float, str]]:
    weights: list[tuple[Intent, float, str]] = []
    if c.why_not:
        weights.append(("why_not", DECIDES, "asks why (not)"))
    if _compares(c):
        weights.append(("compare", DECIDES if c.question else TIPS, "compares named GPUs"))
    if c.fit_words:
        weights.append(("fit_check", TIPS, "asks whether it fits or is enough"))
    if c.own_words and (c.gpu_families or c.vram):
        weights.append(("fit_check", TIPS, "names hardware one has"))
    if c.can_words and len(c.gpu_families) == 1 and not (c.rent_words or c.compare_words):
        weights.append(("fit_check", TIPS, "asks whether it can be done on the GPU it names"))
    if c.serve_words and not c.train_words:
        weights.append(("out_of_scope", DECIDES, "serving or inference, no training"))
    if c.train_words:
        weights.append(("job", NUDGES, "a training word"))
    if c.greeting and not c.sets_job and c.words <= _SHORT:
        weights.append(("small_talk", TIPS, "a greeting or thanks alone"))
    if _about_nothing_covered(c):
        weights.append(("out_of_scope", NUDGES, "no greeting, nothing about training or GPUs"))
    # guidance: what it names is a topic; a fit question's GPUs are the hardware to check
    if c.has_job and c.sets_job and c.kind != "guidance" and not (c.fit_words and c.hardware_only):
        # A question whose settings are all techniques ("does EMA add much memory?", "is bf16
        # better than fp16 here?") may ask about them rather than ask for them: it only tips.
        topical = c.question and c.topics_only
        weights.append(("amend", NUDGES if topical else TIPS, "changes the conversation's job"))
        # A new job names its model; a change keeps the conversation's. Not a change: a
        # question that also sets fields (asked about the job), a question whose settings are
        # its topic ("does gradient checkpointing slow training down?"), GPUs named (hardware).
        asks = c.kind == "mixed" or (c.question and c.topics_only)
        if not (asks or c.new_model or c.gpu_families or c.vram):
            weights.append(("amend", NUDGES, "keeps the conversation's model"))
    elif c.sets_job and not (c.question or c.fit_words or _compares(c) or _topical(c)):
        weights.append(("job", TIPS, "describes a job"))
    repeated = next((i for i in _REPEATABLE if i == c.previous), None)
    if repeated is not None and c.follows and c.words <= _ELLIPTIC and not c.new_model:
        weights.append((repeated, DECIDES, "an elliptic follow-up to the previous question"))
    if c.kind in ("guidance", "mixed") and not (c.why_not or c.fit_words):
        weights.append(("guidance", TIPS, "asks about a concept"))
    if c.has_job and (c.asks_time or c.asks_cost):
        weights.append(("guidance", TIPS, "asks about the conversation's job"))
    elif c.question and (c.asks_time or c.asks_cost) and not (c.sets_job or c.gpu_families):
        weights.append(("guidance", TIPS, "asks what something costs or takes, names no job"))
    if c.billing_words and c.question and not (c.sets_job or c.fit_words or c.why_not):
        weights.append(("guidance", TIPS, "asks how a cloud bills its GPUs"))
    return weights


def _topical(c: Cues) -> bool:
    """A concept question whose settings are all techniques: "what's prior preservation and
    do I need it" describes no job."""
    return c.kind == "guidance" and c.topics_only


def _measurable(c: Cues) -> bool:
    """Coverage can lean this message: not a change of the job, not too short to measure."""
    return not c.sets_job and c.words >= _SUPPORT_WORDS


def _support_weights(c: Cues, support: float | None) -> list[tuple[Intent, float, str]]:
    if support is None:
        return []
    named = c.gpu_families or c.providers or c.greeting or c.serve_words
    if support < UNSUPPORTED_AT and not named:
        return [("out_of_scope", TIPS, f"the knowledge base hardly covers it ({support:.2f})")]
    if support >= SUPPORTED_AT and c.question and not (c.serve_words or c.why_not):
        return [("guidance", TIPS, f"the knowledge base covers it ({support:.2f})")]
    return []


def intent_names() -> list[str]:
    """The eight intents, in their fixed order."""
    return list(INTENTS)


def _about_nothing_covered(c: Cues) -> bool:
    """Small talk greets, thanks or asks who the advisor is; a message with none of that and
    nothing of a job (no field, GPU, provider, training or serving word, no question about
    a concept) leans out of scope: "who wins the league?", "what's the weather tomorrow?"."""
    named = c.gpu_families or c.providers or c.train_words or c.serve_words or c.sets_job
    about_job = c.has_job and (c.asks_cost or c.asks_time)  # "ballpark total for that?"
    return not (c.greeting or named or c.billing_words or about_job) and c.kind == "other"


def _compares(c: Cues) -> bool:
    return c.compare_words and len(c.gpu_families) >= 2
