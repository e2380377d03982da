"""Text from a user or a file, made to show as itself wherever Markdown is rendered.

A model's name read from an uploaded config.json, a value quoted back from a message or a file:
every character that Markdown (or the HTML it passes through) could read as markup gets a
backslash, CommonMark's escape for ASCII punctuation, so `**x**` shows as `**x**`, not bold,
`[a](http://b)` and a bare `http://b` as themselves, not live links, and `![i](http://c/d.png)`
fetches nothing. The chat
and the panel notes render Markdown (`as_text`); Gradio's toasts render HTML (`as_html_text`:
no tag can form, so no image is fetched). This is the one place such text is escaped for them
(assistant/web/safe_text.py then makes whole answers safe).
"""

from __future__ import annotations

import html
import re

__all__ = ["as_html_text", "as_text"]

# Inline markup (emphasis, code, links, images, HTML, tables, strikethrough) and the escape
# itself; '.', '-', '+', '#' and digits only mean something at the start of a line, which a
# quoted value never is. ':' and '@' too: the chat's renderer (GitHub-flavoured) turns a bare
# address or e-mail in the text into a live link, and an escaped one is not one.
_MARKUP = re.compile(r"([\\`*_\[\]()<>!|~{}&:@])")
_WEB_HOST = re.compile(r"(?i)\b(www)\.")  # 'www.example.org' links itself without a scheme


def as_text(value: str) -> str:
    """`value` escaped so that Markdown renders exactly its characters."""
    return _WEB_HOST.sub(r"\1\\.", _MARKUP.sub(r"\\\1", value))


def as_html_text(value: str) -> str:
    """`value` escaped so that HTML shows exactly its characters (toasts)."""
    return html.escape(value, quote=False)
