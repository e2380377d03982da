"""Intent routing: which of eight intents a message has (job, fit_check, compare, why_not, amend,
guidance, out_of_scope, small_talk), from a labelled bank of examples in six languages embedded
with the project's multilingual embedder (`bank`), weighed with structural cues (`cues`) by
`router.route_intent`.
"""

from assistant.extract.routing.router import INTENTS, Intent, Routed, route_intent

__all__ = ["INTENTS", "Intent", "Routed", "route_intent"]
