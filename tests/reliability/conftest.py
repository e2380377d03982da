"""Fixtures of the fault tests: the small entry folder of the knowledge tests, hash embeddings."""

from __future__ import annotations

from tests.knowledge.conftest import mini_docs  # noqa: F401  (a fixture, re-exported)
