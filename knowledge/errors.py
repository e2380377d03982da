"""The knowledge layer's errors: a broken index, and a vector store that cannot be used now.

`IndexCorruptError` means the files on disk are wrong (rebuild them); `StoreUnavailableError` means
the index is fine but Chroma cannot answer at the moment (searches go on with BM25 alone). Neither
message ever holds a credential: URLs in them are redacted by `tools.redaction.redact_url`.
"""

from __future__ import annotations

from tools.errors import AdvisorError

__all__ = [
    "ChromaServerError",
    "ChromaTimeoutError",
    "ChromaUnreachableError",
    "IndexCorruptError",
    "StoreUnavailableError",
]


class IndexCorruptError(AdvisorError):
    """The index on disk is unreadable, half-written or inconsistent; the message says where."""


class StoreUnavailableError(AdvisorError):
    """The vector store cannot be used right now (down, slow, not a Chroma server, read-only
    and not copyable); the message names the store and the cause. Searches fall back to BM25."""


class ChromaUnreachableError(StoreUnavailableError):
    """Nothing accepts connections at the Chroma server's address."""


class ChromaTimeoutError(StoreUnavailableError):
    """The Chroma server (or embedded store) took longer than its timeout to answer."""


class ChromaServerError(StoreUnavailableError):
    """Something answered at the Chroma address, but not as a working Chroma server."""
