"""The grounding check: every figure an answer shows must trace to a source.

`figures` reads the numbers an answer shows in any of the six locales' formats, and `check`
traces each one to tool results, retrieved passages or the user's own messages.
"""

from assistant.grounding.check import (
    GroundingReport,
    GroundingSources,
    SourceIndex,
    check_grounding,
)
from assistant.grounding.figures import ShownNumber, shown_figures

__all__ = [
    "GroundingReport",
    "GroundingSources",
    "ShownNumber",
    "SourceIndex",
    "check_grounding",
    "shown_figures",
]
