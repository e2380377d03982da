"""The grounding check: every figure an answer shows must trace to a source.

`figures` reads the numbers an answer shows in any of the six locales' formats, and `check`
traces each one to tool results, retrieved passages or the user's own messages.
"""
