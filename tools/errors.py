"""Domain errors: every message says what was wrong and what is valid."""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Mapping

from pydantic import ValidationError

MAX_QUOTED_CHARS = 120  # a value quoted in a message is cut to this many characters

# A bounded repr for containers: a YAML "billion laughs" row shares one list a billion times over,
# and the builtin repr would expand every copy (hundreds of MB) before it could be cut.
_BOUNDED = reprlib.Repr()
_BOUNDED.maxlevel = 3
for _name in ("maxtuple", "maxlist", "maxarray", "maxdict", "maxset", "maxfrozenset", "maxdeque"):
    setattr(_BOUNDED, _name, 8)
_BOUNDED.maxstring = _BOUNDED.maxlong = _BOUNDED.maxother = MAX_QUOTED_CHARS


def shorten(value: object, limit: int = MAX_QUOTED_CHARS) -> str:
    """`repr(value)`, cut to `limit` characters with an ellipsis (a pasted file, a 5,000-digit
    number or a self-repeating structure never fills an error message)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**100:
        text = "a huge number"
    elif isinstance(value, str | bytes):
        text = repr(value[: limit + 1])
    elif isinstance(value, list | tuple | dict | set | frozenset):
        text = _BOUNDED.repr(value)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class AdvisorError(Exception):
    """Base class of every user-facing domain error (bad input, unknown names, failed imports)."""


class InvalidInputError(AdvisorError, ValueError):
    """A field got a value outside what is valid."""

    def __init__(self, field: str, value: object, valid: str) -> None:
        self.field = field
        self.value = value
        self.valid = valid
        super().__init__(f"{field}: got {shorten(value)}; valid: {valid}")


class UnknownNameError(AdvisorError, LookupError):
    """A name (model, GPU, instance, provider) that is not known; lists the closest known names."""

    def __init__(self, kind: str, name: str, suggestions: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.suggestions = list(suggestions)
        hint = ", ".join(self.suggestions) if self.suggestions else "none close"
        super().__init__(f"unknown {kind} {name!r}; closest known: {hint}")


def invalid_input(exc: ValidationError, valid: Mapping[str, str] | None = None) -> AdvisorError:
    """The first error of a failed pydantic validation, as a domain error: an error a validator
    raised itself (an InvalidInputError or UnknownNameError) as it is, else an InvalidInputError
    naming the field path, the value given and what is valid (`valid[field]`, else pydantic's
    own message)."""
    err = exc.errors()[0]
    original = (err.get("ctx") or {}).get("error")
    if isinstance(original, AdvisorError):
        return original
    field = ".".join(str(part) for part in err["loc"]) or exc.title
    message = str(err["msg"]).removeprefix("Value error, ")
    return InvalidInputError(field, err.get("input"), (valid or {}).get(field, message))
