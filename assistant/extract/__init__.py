"""Conversation understanding without a language model: slots and intent from one message.

`extract_slots(text, lang)` reads what a message says about a training job (model, method,
data size, money, deadline, spot, providers, regions, GPUs, ...) in English, Dutch, French,
Turkish, German or Spanish as a `tools.job.JobUpdate`, which `tools.job.apply_update` folds
into the conversation's `JobSpec` (`read_slots` also returns the values stated that the job
cannot take, such as "-100M tokens"); `read_scaling(text, prior, update)` reads amounts
changed relative to the job so far ("double the tokens"); `route_intent(text, lang, state,
update)` routes the message to one of eight intents (`assistant.extract.routing`);
`classify_intent(text, lang, state)` tells a job description from a guidance question (one of
the router's cues).
Words live in per-language lexicons (assistant/extract/lexicon/<lang>.yaml); patterns are
compiled once, on first use.
"""

from __future__ import annotations

from assistant.extract.intent import TOPIC_FIELDS, QuestionKind, classify_intent
from assistant.extract.relative import names_own_model, read_scaling
from assistant.extract.routing import INTENTS, Intent, Routed, route_intent
from assistant.extract.slots import RejectedSlot, SlotReading, extract_slots, read_slots
from assistant.extract.vision_slots import is_diffusion

__all__ = [
    "INTENTS",
    "TOPIC_FIELDS",
    "Intent",
    "QuestionKind",
    "RejectedSlot",
    "Routed",
    "SlotReading",
    "classify_intent",
    "extract_slots",
    "is_diffusion",
    "names_own_model",
    "read_scaling",
    "read_slots",
    "route_intent",
]
