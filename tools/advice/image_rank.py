"""Resolving an image-model job (diffusion pipeline or VLM) into its ranking request.

`resolve_image` is `tools.advice.resolve_job` for a job that names an image model: the image
job with every default it used (`tools.advice.images.image_fields`), the run's size
(`image_workload`), the limits and objective as for language jobs; a value the image
estimator rejects is an error when strict, else dropped with a notice and its default used.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from tools.advice.assumed import (
    Assumed,
    JobNotice,
    invalid_notice,
    resolution,
    spec_field,
    value_of,
    value_or_default,
)
from tools.advice.images import image_fields, image_workload
from tools.advice.resolved import ResolvedJob, constraints_for
from tools.errors import InvalidInputError
from tools.job import JobSpec
from tools.ranking.images import ImageJob, ImageRankRequest

if TYPE_CHECKING:
    from tools.architectures.multimodal import MultimodalModel

__all__ = ["resolve_image"]


def resolve_image(
    spec: JobSpec,
    spec_used: JobSpec,
    image: MultimodalModel,
    notices: list[JobNotice],
    usd: dict[str, float],
    strict: bool,
) -> ResolvedJob:
    """An image-model job's ranking request: the image job with its defaults, its run size and
    the limits; lenient resolution drops a value the image estimator rejects, with a notice."""
    while True:  # every retry clears one more field the spec gave
        assumed: list[Assumed] = []
        values = partial(value_of, spec_used, assumed)
        try:
            fields = image_fields(spec_used, image, values, resolution(spec_used, image, assumed))
            job = ImageJob(model=image, values=fields[0], language=fields[1])
            job.estimate("single", 1)  # the image estimator's own checks
            break
        except InvalidInputError as exc:
            name = spec_field(exc.field)
            if strict or name is None or name == "model" or getattr(spec_used, name) is None:
                raise
            notices.append(invalid_notice(name, getattr(spec_used, name), exc))
            spec_used = spec_used.model_copy(update={name: None})
    images, per_epoch, work = image_workload(spec_used, job, values)
    request = ImageRankRequest(
        job=job,
        images=images,
        images_per_epoch=per_epoch,
        work=work,
        constraints=constraints_for(spec_used, assumed, usd),
        objective=value_or_default(spec_used, "objective", assumed, job.method),
    )
    return ResolvedJob(spec=spec, assumed=assumed, notices=notices, request=request)
