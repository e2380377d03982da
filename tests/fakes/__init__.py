"""Shared fakes and fixtures of the whole suite, in one place.

`jobs` pins the bare training setup mechanism tests start from, `embeddings` the deterministic
hash embeddings, `chat` the scripted chat model, `catalogs` synthetic instances with exact
figures, `artifacts` hand-built tool results for answer and grounding tests.
"""
