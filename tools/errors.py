"""Domain errors: every message says what was wrong and what is valid."""

from __future__ import annotations

import contextlib
import errno
import os
import reprlib
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

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


# Why a write failed, for the errors that are about the folder rather than a bug.
_WRITE_ERRNOS = {
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
}


class NotWritableError(AdvisorError, OSError):
    """A folder the project must write to cannot be written (read-only, no permission, full).

    One line: the folder, the cause, and what needed to write there. Also an OSError, so code
    that already handles failed writes keeps handling it."""

    def __init__(self, folder: Path, cause: str, needs: str) -> None:
        self.folder = folder
        self.cause = cause
        self.needs = needs
        super().__init__(f"cannot write to {folder} ({cause}): {needs} needs to write there")


def write_failure(exc: OSError) -> str | None:
    """The cause of an OSError when it is about the place written to (read-only file system,
    permission, full disk, quota), else None (a bug or another failure)."""
    return _WRITE_ERRNOS.get(exc.errno or 0)


@contextmanager
def needs_write_access(folder: Path, needs: str) -> Iterator[None]:
    """Turn a write that fails for lack of access or space in `folder` into one
    `NotWritableError` naming `folder` and `needs` (what was being written, e.g. "saving the
    session"); every other error passes unchanged."""
    try:
        yield
    except NotWritableError:
        raise
    except OSError as exc:
        cause = write_failure(exc)
        if cause is None:
            raise
        raise NotWritableError(folder, cause, needs) from exc


def write_probe(folder: Path) -> str | None:
    """Why no file can be created in `folder` now ("read-only file system", "no space left on
    device", ...), or None when one can; a folder that does not exist yet is judged by its
    nearest existing parent (where it would be created). Tried, not guessed from permission
    bits: root ignores them, and a read-only mount or a full disk only shows when writing."""
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    try:
        fd, name = tempfile.mkstemp(prefix=".write-probe-", dir=folder)
    except OSError as exc:
        return write_failure(exc) or (exc.strerror or type(exc).__name__).lower()
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)
    return None


def require_writable(folder: Path, needs: str) -> None:
    """Create `folder` (and its parents) if needed and check a file can be written in it; else
    `NotWritableError` naming the folder, the cause and `needs`."""
    with needs_write_access(folder, needs):
        folder.mkdir(parents=True, exist_ok=True)
    cause = write_probe(folder)
    if cause is not None:
        raise NotWritableError(folder, cause, needs)
