"""classify_intent: a job description, a guidance question, both, or neither."""

from __future__ import annotations

from typing import Literal

from assistant.state import JobState

Intent = Literal["job", "guidance", "mixed", "other"]


def classify_intent(text: str, lang: str, state: JobState) -> Intent:
    """What the message asks for, given the job known so far."""
    return "other"
