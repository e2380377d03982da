"""Conversation understanding without a language model: slots and intent from one message.

`extract_slots(text, lang)` reads what a message says about a training job (model, method,
data size, money, deadline, spot, providers, region, GPUs, ...) in English, Dutch, French,
Turkish, German or Spanish; `apply_update(state, update)` amends the conversation's `JobState`;
`classify_intent(text, lang, state)` tells a job description from a guidance question.
Words live in per-language lexicons (assistant/extract/lexicon/<lang>.yaml); patterns are
compiled once, on first use.
"""

from __future__ import annotations

from assistant.agent.state import apply_update
from assistant.extract.intent import Intent, classify_intent
from assistant.extract.slots import extract_slots

__all__ = ["Intent", "apply_update", "classify_intent", "extract_slots"]
