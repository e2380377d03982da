"""Conversation understanding without a language model: slots and intent from one message.

`extract_slots(text, lang)` reads what a message says about a training job (model, method,
data size, money, deadline, spot, providers, regions, GPUs, ...) in English, Dutch, French,
Turkish, German or Spanish as a `tools.job.JobUpdate`, which `tools.job.apply_update` folds into
the conversation's `JobSpec`; `classify_intent(text, lang, state)` tells a job description from
a guidance question.
Words live in per-language lexicons (assistant/extract/lexicon/<lang>.yaml); patterns are
compiled once, on first use.
"""

from __future__ import annotations

from assistant.extract.intent import Intent, classify_intent
from assistant.extract.slots import extract_slots

__all__ = ["Intent", "classify_intent", "extract_slots"]
