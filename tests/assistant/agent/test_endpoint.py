"""The LLM transport's checks, on scripted replies (a MockTransport of the OpenAI SDK's HTTP
library, `sdk_http`, as the network): a 2xx
reply must be JSON or an event stream that parses, within the total deadline; error statuses pass
through for the SDK to type. Real endpoints are in tests/reliability/test_llm_faults.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assistant.agent.endpoint import (
    EndpointReplyError,
    LLMTimeouts,
    ReplyCheckingTransport,
    chat_model_kwargs,
    sdk_http,
    sdk_http_name,
)

URL = "http://127.0.0.1:1/v1/chat/completions"


class Clock:
    """A clock that advances `step` seconds every time it is read."""

    def __init__(self, step: float = 0.0) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def client(
    reply: sdk_http.Response, total_s: float = 60.0, clock: Clock | None = None
) -> sdk_http.Client:
    transport = ReplyCheckingTransport(
        total_s, inner=sdk_http.MockTransport(lambda request: reply), clock=clock or Clock()
    )
    return sdk_http.Client(transport=transport)


def events(*lines: bytes) -> Iterator[bytes]:
    yield from lines


def test_json_and_event_streams_pass() -> None:
    ok = sdk_http.Response(200, json={"choices": []})
    assert client(ok).post(URL).json() == {"choices": []}
    stream = sdk_http.Response(
        200,
        headers={"content-type": "text/event-stream"},
        content=events(b'data: {"a": 1}\n\n', b"data: [DONE]\n\n"),
    )
    assert client(stream).post(URL).text == 'data: {"a": 1}\n\ndata: [DONE]\n\n'


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (
            sdk_http.Response(200, headers={"content-type": "text/html"}, content=b"<html>"),
            r"^HTTP 200 reply of type text/html, not JSON or an event stream$",
        ),
        (
            sdk_http.Response(200, headers={"content-type": "application/json"}, content=b"{oops"),
            r"^HTTP 200 reply says JSON but does not parse: b'\{oops'$",
        ),
        (
            sdk_http.Response(
                200, headers={"content-type": "text/event-stream"}, content=b": hi\n\n"
            ),
            r"^the reply's event stream ended without any event$",
        ),
        (
            sdk_http.Response(
                200, headers={"content-type": "text/event-stream"}, content=b"data: <html>\n\n"
            ),
            r"^an event of the reply is not JSON: b'<html>'$",
        ),
    ],
    ids=["html", "bad-json", "no-events", "bad-event"],
)
def test_a_reply_that_is_not_one_is_refused(reply: sdk_http.Response, match: str) -> None:
    with pytest.raises(EndpointReplyError, match=match):
        client(reply).post(URL).read()


def test_error_statuses_pass_through_for_the_sdk() -> None:
    reply = sdk_http.Response(401, headers={"content-type": "text/html"}, content=b"denied")
    response = client(reply).post(URL)
    assert (response.status_code, response.text) == (401, "denied")


def test_a_reply_past_the_total_deadline_is_a_timeout() -> None:
    slow = sdk_http.Response(
        200,
        headers={"content-type": "text/event-stream"},
        content=events(*[b": keep-alive\n"] * 100),
    )
    with pytest.raises(sdk_http.ReadTimeout, match=r"^the reply took longer than 3 s$"):
        client(slow, total_s=3, clock=Clock(step=1.0)).post(URL).read()


def test_the_transport_asks_for_an_uncompressed_reply() -> None:
    seen: list[str] = []

    def handler(request: sdk_http.Request) -> sdk_http.Response:
        seen.append(request.headers["accept-encoding"])
        return sdk_http.Response(200, json={})

    transport = ReplyCheckingTransport(60, inner=sdk_http.MockTransport(handler))
    sdk_http.Client(transport=transport).post(URL)
    assert seen == ["identity"]


def test_model_kwargs_per_provider() -> None:
    bounds = LLMTimeouts(connect_s=1, first_byte_s=2, total_s=3)
    openai = chat_model_kwargs("openai", bounds, 0)
    assert openai["timeout"] == sdk_http.Timeout(2, connect=1) and openai["streaming"] is True
    assert isinstance(openai["http_client"]._transport, ReplyCheckingTransport)
    assert chat_model_kwargs("anthropic", bounds, 0) == {
        "max_retries": 0,
        "streaming": True,
        "timeout": 2,
    }
    assert chat_model_kwargs("ollama", bounds, 1) == {"max_retries": 1, "timeout": 2}


def test_the_http_library_is_the_one_the_sdk_requires() -> None:
    assert sdk_http_name(["anyio<5,>=4.10.0", "httpx2<3,>=2.12.0", "jiter<1"]) == "httpx2"
    assert sdk_http_name(["anyio>=3.5.0", "httpx<1,>=0.23.0"]) == "httpx"
    assert sdk_http_name(["httpx<1", "httpx2>=2; extra == 'next'"]) == "httpx", "extras only"
    assert sdk_http_name(None) == "httpx", "no OpenAI SDK installed"


def test_the_sdk_accepts_the_bounded_client() -> None:
    openai = pytest.importorskip("openai")
    bounds = LLMTimeouts(connect_s=1, first_byte_s=2, total_s=3)
    kwargs = chat_model_kwargs("openai", bounds, 0)
    sdk = openai.OpenAI(
        api_key="unused",
        base_url="http://127.0.0.1:1/v1",
        timeout=kwargs["timeout"],
        http_client=kwargs["http_client"],
    )
    assert sdk.timeout == sdk_http.Timeout(2, connect=1)
    sdk.close()
