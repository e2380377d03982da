"""The redaction helper: every credential shape is replaced, ordinary text is left alone, and the
logging filter and record factory keep secrets out of messages, arguments and tracebacks."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from tools.redaction import (
    RedactingFilter,
    env_secrets,
    install_log_redaction,
    redact,
    redact_url,
    url_secrets,
)

FAKE_OPENAI = "sk-proj-AbCdEfGhIjKlMnOpQrSt1234"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://user:hunter2@127.0.0.1:8000/api", "http://***@127.0.0.1:8000/api"),
        ("https://ghp_abcdefghijklmnopqrstuvwx@github.com/x", "https://***@github.com/x"),
        ("http://u:p@ss@host:1/", "http://***@host:1/"),
        ("GET /v1?api_key=abc123&lang=en", "GET /v1?api_key=***&lang=en"),
        ("https://h/x?X-Amz-Signature=deadbeef#top", "https://h/x?X-Amz-Signature=***#top"),
        ("Authorization: Bearer abc.def.ghi", "Authorization: Bearer ***"),
        ("{'Authorization': 'Basic dXNlcjpwYXNz'}", "{'Authorization': 'Basic ***'}"),
        ("sent bearer 0123456789abcdef", "sent bearer ***"),
        (f"Incorrect API key provided: {FAKE_OPENAI}.", "Incorrect API key provided: ***."),
        ("key sk-ant-api03-abcdefghijklmnop", "key ***"),
        ("token hf_abcdefghijklmnopqrstuvwx here", "token *** here"),
        ("aws AKIAABCDEFGHIJKLMNOP", "aws ***"),
        ("AIza" + "A" * 35, "***"),
        ("slack xoxb-1234567890-abcdef", "slack ***"),
        ("jwt eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeKKF2Q", "jwt ***"),
        ("api_key=supersecret and password: 'p4ss!'", "api_key=*** and password: '***'"),
        ('{"auth_token": "abcd1234"}', '{"auth_token": "***"}'),
    ],
)
def test_every_credential_shape_is_replaced(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "QLoRA on Llama 3.1 70B, 200M tokens, max_tokens=512, under $3/h",
        "a basic tutorial; the bearer of news; task-oriented sk-learn",
        "http://127.0.0.1:8000/api/v2/heartbeat?lang=en",
        "tokens: got -5; valid: a positive number",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_known_secrets_are_removed_whatever_their_shape() -> None:
    secret = "correct horse/battery"
    text = f"echo: {secret} and encoded correct%20horse%2Fbattery"
    assert redact(text, [secret]) == "echo: *** and encoded ***"
    assert redact("the word abc stays", ["abc"]) == "the word abc stays", "too short to redact"


def test_url_secrets_and_redact_url() -> None:
    url = "https://admin:p%40ss@chroma.example:8443/?token=t0k3n&x=1"
    assert set(url_secrets(url)) == {"p%40ss", "p@ss", "t0k3n"}
    assert redact_url(url) == "https://***@chroma.example:8443/?token=***&x=1"
    assert url_secrets("http://host:[bad") == [], "an unparsable URL yields nothing"
    assert url_secrets(None) == []


def test_env_secrets_reads_provider_keys_only() -> None:
    env = {"OPENAI_API_KEY": "sk-a", "HOME": "/root", "HF_TOKEN": "hf_b", "ANTHROPIC_API_KEY": ""}
    assert env_secrets(env) == ["sk-a", "hf_b"]


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A logger writing to a string buffer, removed afterwards."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("tests.redaction")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


def test_filter_redacts_message_arguments_and_traceback(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured
    logger.handlers[0].addFilter(RedactingFilter(["my-own-secret"]))
    logger.info("connecting to %s with %s", "http://u:pw@h:1", "my-own-secret")
    try:
        raise RuntimeError(f"401 echo: {FAKE_OPENAI}")
    except RuntimeError:
        logger.exception("call failed for %s", "my-own-secret")
    out = stream.getvalue()
    assert "connecting to http://***@h:1 with ***" in out
    assert "call failed for ***" in out and "RuntimeError: 401 echo: ***" in out, "traceback"
    assert "my-own-secret" not in out and FAKE_OPENAI not in out and "pw@" not in out


def test_installed_factory_covers_every_logger_until_removed(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured
    uninstall = install_log_redaction(["s3cr3t-value"])
    try:
        logger.warning("value %s", "s3cr3t-value")
    finally:
        uninstall()
    logger.warning("after %s", "s3cr3t-value")
    assert stream.getvalue().splitlines() == ["value ***", "after s3cr3t-value"]
