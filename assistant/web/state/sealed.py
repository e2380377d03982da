"""The record the browser keeps, sealed on the server with a key that never leaves it.

Gradio's `BrowserState` encrypts in the browser, so the key it is given is sent to every client
in `/config`: it cannot keep a record private or unforged. The app therefore seals the record
here (Fernet: AES-128-CBC with an HMAC-SHA256 tag, from `cryptography`) with the key file in the
data folder, and the browser stores only the opaque token. A token that is forged, altered,
made with another key, oversized or not a token at all opens as nothing: a new conversation.
The secret Gradio gets is a one-way derivative of the key, so nothing sent reveals the key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

__all__ = ["MAX_TOKEN_CHARS", "BrowserSeal"]

MAX_TOKEN_CHARS = 8_000_000  # a sealed record larger than this is not opened
_GRADIO_LABEL = b"gpu-advisor gradio browser-state"


class BrowserSeal:
    """Seals and opens the browser's record with `secret` (the data folder's key file)."""

    def __init__(self, secret: str) -> None:
        digest = hashlib.sha256(secret.encode("utf-8")).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(digest))
        self._secret = secret

    @property
    def gradio_secret(self) -> str:
        """What `gr.BrowserState(secret=...)` gets (and sends to clients): an HMAC of a label
        under the key, stable across restarts, from which the key cannot be recovered."""
        return hmac.new(self._secret.encode("utf-8"), _GRADIO_LABEL, hashlib.sha256).hexdigest()

    def seal(self, record: dict[str, Any]) -> str:
        """`record` (JSON data) as an opaque, tamper-evident token."""
        data = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return self._fernet.encrypt(data).decode("ascii")

    def open(self, token: object) -> dict[str, Any] | None:
        """The record `token` seals, or None when it is not one of ours, intact."""
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
            return None
        try:
            record = json.loads(self._fernet.decrypt(token.encode("ascii")))
        except (InvalidToken, UnicodeError, ValueError):
            return None
        return record if isinstance(record, dict) else None
