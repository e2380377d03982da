"""Answers in the user's language, composed from tool results with the message catalogs.

`compose` writes every kind of answer, `job` the sections of a job answer, `parts` the shared
pieces (citations, text in a language), and `i18n` the message catalogs (`messages/*.yaml`) and
locale formatting of numbers, money and sizes.
"""

from assistant.answers.compose import (
    compose_apology,
    compose_clarification,
    compose_fallback_notice,
    compose_grounding_notice,
    compose_guidance_answer,
    compose_job_answer,
    compose_too_long,
    compose_tool_error,
)
from assistant.answers.parts import Answer, Citation, Text

__all__ = [
    "Answer",
    "Citation",
    "Text",
    "compose_apology",
    "compose_clarification",
    "compose_fallback_notice",
    "compose_grounding_notice",
    "compose_guidance_answer",
    "compose_job_answer",
    "compose_too_long",
    "compose_tool_error",
]
