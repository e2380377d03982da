"""A job resolved for the ranking: `ResolvedJob` (a `ResolvedEstimate` with the ranking's
request, language or image), the limits (`constraints_for`, money in USD as `money_limits`
converted it) and region hints checked against a catalog (`known_regions`).
"""

from __future__ import annotations

from tools.advice.assumed import Assumed, JobNotice, ResolvedEstimate, value_or_default
from tools.catalog import Catalog, is_area, matching_regions
from tools.job import JobSpec
from tools.ranking.images import ImageRankRequest
from tools.ranking.models import Constraints, RankRequest

__all__ = ["ResolvedJob", "constraints_for", "known_regions"]


class ResolvedJob(ResolvedEstimate):
    """A job spec resolved: the estimator's input, the ranking's request, what was assumed and
    what was not applied. `missing` names the one field still needed (the model) when there is
    none; then `estimate_input` and `request` are None."""

    request: RankRequest | ImageRankRequest | None = None

    @property
    def ready(self) -> bool:
        """True when the job can be estimated and ranked (an image-model job has no language
        estimator input: its request holds the image job)."""
        if isinstance(self.request, ImageRankRequest):
            return True
        return self.request is not None and self.estimate_input is not None


def constraints_for(spec: JobSpec, assumed: list[Assumed], usd: dict[str, float]) -> Constraints:
    """The limits (money in USD, as converted); a GPU count asked for (`num_gpus`) bounds the
    clusters to exactly that many unless min/max GPUs say otherwise."""
    return Constraints(
        max_price_per_hour=usd.get("max_price_per_hour"),
        budget=usd.get("budget"),
        deadline_hours=spec.deadline_hours,
        providers=spec.providers,
        regions=spec.regions,
        gpus=spec.gpus,
        max_vram_gib=spec.max_vram_gib,
        spot=value_or_default(spec, "spot", assumed, None),
        min_gpus=spec.min_gpus or spec.num_gpus,
        max_gpus=spec.max_gpus or spec.num_gpus,
        interconnect=spec.interconnect,
        max_nodes=value_or_default(spec, "max_nodes", assumed, None),
    )


def known_regions(spec: JobSpec, catalog: Catalog | None) -> tuple[JobSpec, list[JobNotice]]:
    """`spec` with the region hints no catalog region matches dropped, and a notice for each."""
    if not spec.regions or catalog is None:
        return spec, []
    names = {region for item in catalog for region in item.regions}
    kept, notices = [], []
    for hint in spec.regions:
        if matching_regions(hint, names) or (is_area(hint) and not names):
            kept.append(hint)
            continue
        notices.append(
            JobNotice(
                kind="region_not_found",
                field="regions",
                value=hint,
                message=f"no catalog region matches {hint!r}; region filter not applied",
            )
        )
    return spec.model_copy(update={"regions": kept or None}), notices
