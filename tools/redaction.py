"""Keeping secrets out of everything the project prints, logs or shows.

`redact(text, secrets)` replaces, in any text:

- URL credentials: the user-info part of `scheme://user:password@host` (and a lone token
  `https://TOKEN@host`) becomes `***`, so `http://***@host:8000` still names the server;
- query-string secrets: the value of any parameter whose name contains key, token, secret,
  password, passwd, pwd, signature, sig, auth or credential (`?api_key=***&lang=en`);
- `Authorization:` header values and `Bearer` tokens;
- `name=value` / `"name": "value"` assignments of api keys, tokens, secrets and passwords;
- API keys of common shapes: OpenAI/Anthropic `sk-...`, GitHub `ghp_...`/`github_pat_...`, GitLab
  `glpat-...`, Hugging Face `hf_...`, AWS access key ids, Google `AIza...`, Slack `xox?-...`, JWTs;
- every exact value in `secrets` (the configured API key, password, ...), also percent-encoded,
  whatever its shape. Values shorter than `MIN_SECRET_CHARS` are ignored (they would blank
  ordinary words).

`RedactingFilter` applies it to log records (message, arguments, traceback and stack text);
`install_log_redaction` applies it to every record of the process, whichever handler gets it.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable
from urllib.parse import quote, unquote, urlsplit

__all__ = [
    "MIN_SECRET_CHARS",
    "PROVIDER_KEY_VARS",
    "REDACTED",
    "RedactingFilter",
    "env_secrets",
    "install_log_redaction",
    "redact",
    "redact_url",
    "url_secrets",
]

REDACTED = "***"
MIN_SECRET_CHARS = 4
# Environment variables LLM and hub clients read their keys from (never through Settings).
PROVIDER_KEY_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
)

_SECRET_WORD = r"(?:key|token|secret|password|passwd|pwd|signature|sig|auth|credential)"
_URL_USERINFO = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://)[^/\s?#]+@")
_QUERY_SECRET = re.compile(rf"(?i)([?&;][\w.\-]*{_SECRET_WORD}[\w.\-]*=)[^&#\s'\"<>]+")
_AUTH_HEADER = re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?)(?:(\w+)\s+)?[^\s\"',;]+")
_BEARER = re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{6,}")
_ASSIGNMENT = re.compile(
    r"(?i)(\b[\w\-]*(?:api[_\-]?key|access[_\-]?key|secret|password|passwd|token)"
    r"[\"']?\s*[:=]\s*[\"']?)(?![\"'])[^\s\"',;&}]{3,}"
)
_KEY_SHAPES = re.compile(
    r"\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{10,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\bglpat-[A-Za-z0-9_\-]{20,}|\bhf_[A-Za-z0-9]{20,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_\-]{35}"
    r"|\bxox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
)


def _known(secrets: Iterable[str | None]) -> list[str]:
    """The secrets worth replacing, each also percent-encoded, longest first."""
    values: set[str] = set()
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_CHARS:
            values |= {secret, quote(secret, safe=""), quote(secret)}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every credential the module docstring lists replaced by `***`."""
    for secret in _known(secrets):
        text = text.replace(secret, REDACTED)
    text = _URL_USERINFO.sub(rf"\g<1>{REDACTED}@", text)
    text = _QUERY_SECRET.sub(rf"\g<1>{REDACTED}", text)
    text = _AUTH_HEADER.sub(lambda m: f"{m[1]}{m[2] + ' ' if m[2] else ''}{REDACTED}", text)
    text = _BEARER.sub(rf"\g<1>{REDACTED}", text)
    text = _ASSIGNMENT.sub(rf"\g<1>{REDACTED}", text)
    return _KEY_SHAPES.sub(REDACTED, text)


def redact_url(url: str) -> str:
    """A URL fit to show: credentials and secret query values replaced (`redact` on one URL)."""
    return redact(url, url_secrets(url))


def url_secrets(url: str | None) -> list[str]:
    """The user name, password and secret query values written in `url` (as written and
    decoded), for `redact` to remove wherever they turn up without the URL around them."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.password, parts.username if parts.password is None else None]
    except ValueError:  # an unparsable port or bracket: nothing reliable to pull out
        return []
    for match in _QUERY_SECRET.finditer(url):
        found.append(url[match.end(1) : match.end()])
    return [v for raw in found if raw for v in {raw, unquote(raw)}]


def env_secrets(environ: dict[str, str] | None = None) -> list[str]:
    """The provider API keys set in the environment (`PROVIDER_KEY_VARS`), read when called."""
    env = os.environ if environ is None else environ
    return [env[name] for name in PROVIDER_KEY_VARS if env.get(name)]


class RedactingFilter(logging.Filter):
    """A logging filter that rewrites each record's message, traceback and stack text through
    `redact` (with `secrets`); it never drops a record. Attach it to a handler (a filter on a
    logger does not see records its children propagate)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        scrub(record, self.secrets)
        return True


def scrub(record: logging.LogRecord, secrets: Iterable[str] = ()) -> logging.LogRecord:
    """Redact a log record in place: its formatted message (arguments merged in), and its
    traceback and stack text (formatted now, so no handler formats the raw exception later)."""
    secrets = list(secrets)
    try:
        message = record.getMessage()
    except (TypeError, ValueError):  # arguments that do not fit the format: keep both apart
        message = f"{record.msg} {record.args}"
    record.msg, record.args = redact(message, secrets), None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text, secrets)
    if record.stack_info:
        record.stack_info = redact(record.stack_info, secrets)
    return record


def install_log_redaction(secrets: Iterable[str | None] = ()) -> Callable[[], None]:
    """Redact every log record this process creates from now on (all loggers, all handlers,
    also those added later); returns the function that removes it again."""
    previous = logging.getLogRecordFactory()
    known = [s for s in secrets if s]

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        return scrub(previous(*args, **kwargs), known)

    logging.setLogRecordFactory(factory)

    def uninstall() -> None:
        if logging.getLogRecordFactory() is factory:
            logging.setLogRecordFactory(previous)

    return uninstall
