"""Text from a user or a file shows as itself: escaped for Markdown (chat, panel) and for HTML
(toasts)."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from assistant.answers.literal import as_html_text, as_text
from assistant.answers.parts import Text
from assistant.web.panel import PanelData, PanelNote, _notes_markdown
from assistant.web.safe_text import safe_markdown

MARKUP = "**bold** [link](http://x.example) ![img](http://evil.example/a.png) <b>x</b> `c`"


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize(
    "value", [MARKUP, "my_model_v2", "Qwen2.5-VL 7B", "FLUX.1 [dev]", "a\\b", "x|y~z"]
)
def test_escaped_text_renders_as_exactly_itself(value: str) -> None:
    html = rendered(as_text(value))
    assert "<strong>" not in html and "<a " not in html and "<img" not in html
    assert "<code>" not in html and "<b>" not in html
    assert html == f"<p>{as_html_text(value)}</p>\n", "the characters, nothing more"


def test_a_model_name_from_a_file_is_text_in_answers_and_panel_notes() -> None:
    """The upload's name showed bold, as a live link and as images fetched from outside in the
    chat and the panel notes (issue 26, defect 2)."""
    assert rendered(f"**Memory** {Text('en').model(MARKUP)}").count("<strong>") == 1
    note = PanelData(notes=[PanelNote(key="error_input", values={"error": MARKUP})])
    html = rendered(_notes_markdown(note, "en"))
    assert "<img" not in html and "<a " not in html and "<strong>" not in html
    assert "http://evil.example/a.png" in html, "shown, not fetched"


def test_html_text_forms_no_tag() -> None:
    assert as_html_text('<img src=x onerror="alert(1)"> & co') == (
        '&lt;img src=x onerror="alert(1)"&gt; &amp; co'
    )


@pytest.mark.parametrize("value", ["http://203.0.113.9/x", "www.example.org", "me@example.org"])
def test_a_bare_address_in_a_name_cannot_link_itself(value: str) -> None:
    """GitHub-flavoured Markdown (the chat's) links bare addresses found in the source; an
    escaped ':', '@' or 'www.' is not one (the browser test sees the chat), and CommonMark
    still shows the characters."""
    escaped = as_text(value)
    assert "http://" not in escaped and "@" not in escaped.replace("\\@", "")
    assert "www." not in escaped
    assert rendered(escaped) == f"<p>{value}</p>\n"


@pytest.mark.parametrize("value", ["<b>b</b>", "x\\<y", "<<"])
def test_the_chat_shows_an_escaped_angle_bracket_as_itself(value: str) -> None:
    """The chat writes every '<' as its entity; one already escaped for Markdown loses its
    backslash there (kept, it escaped the entity's '&' and '&lt;' showed)."""
    html = rendered(safe_markdown(as_text(value)))
    assert html == f"<p>{as_html_text(value).replace('>', '&gt;')}</p>\n"
