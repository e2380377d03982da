"""Domain errors: every message says what was wrong and what is valid."""

from __future__ import annotations

from collections.abc import Iterable


class AdvisorError(Exception):
    """Base class of every user-facing domain error (bad input, unknown names, failed imports)."""


class InvalidInputError(AdvisorError, ValueError):
    """A field got a value outside what is valid."""

    def __init__(self, field: str, value: object, valid: str) -> None:
        self.field = field
        self.value = value
        self.valid = valid
        super().__init__(f"{field}: got {value!r}; valid: {valid}")


class UnknownNameError(AdvisorError, LookupError):
    """A name (model, GPU, instance, provider) that is not known; lists the closest known names."""

    def __init__(self, kind: str, name: str, suggestions: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.suggestions = list(suggestions)
        hint = ", ".join(self.suggestions) if self.suggestions else "none close"
        super().__init__(f"unknown {kind} {name!r}; closest known: {hint}")
