"""Retrieval benchmark of the knowledge base: labelled queries, metrics per system and language."""
