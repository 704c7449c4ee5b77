"""A project's compare views, written by its maintainers from the compare page's settings form
(docs/compare-views.md). Every write validates the whole row (``full_clean``): the model's
bounds, a name unique in the project, two different variants of the project. A save computes the
view's kept judgement at once (``compare_rows``), so its page never shows one of older
settings."""

import logging
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from parity.models import Backend, CompareView, Project
from parity.services.compare_rows import compare_view_refresh

logger = logging.getLogger(__name__)


class CompareRejected(ValueError):
    """Settings the rules refuse; ``errors`` maps a field (or ``None``) to its messages."""

    def __init__(self, errors: dict[str | None, list[str]]):
        self.errors = errors
        super().__init__("; ".join(m for messages in errors.values() for m in messages))


@dataclass(frozen=True)
class CompareRequest:
    name: str
    sample: Backend
    basis: Backend
    days: int = 14
    confidence: float = 95.0
    tolerance: float = 5.0
    min_failures: int = 3


def _validated(view: CompareView, request: CompareRequest) -> None:
    if request.sample.pk == request.basis.pk:
        raise CompareRejected({"basis": ["The basis must be another variant than the sample."]})
    if view.project_id not in (request.sample.project_id, None) or (
        request.basis.project_id != request.sample.project_id
    ):
        raise CompareRejected({None: ["Both variants must be the project's."]})
    view.name = request.name.strip()
    view.sample, view.basis = request.sample, request.basis
    view.days, view.confidence = request.days, request.confidence
    view.tolerance, view.min_failures = request.tolerance, request.min_failures
    try:
        view.full_clean()
    except ValidationError as exc:
        raise CompareRejected(
            {(None if f == "__all__" else f): m for f, m in exc.message_dict.items()}
        ) from None


def compare_view_check(
    *, project: Project, request: CompareRequest, view: CompareView | None = None
) -> None:
    """Raise ``CompareRejected`` if the settings could not be saved (a preview's check: nothing is
    written)."""
    probe = CompareView(project=project)
    if view is not None:  # the saved row itself: its name is not taken by another
        probe.pk = view.pk
        probe._state.adding = False
    _validated(probe, request)


def compare_view_create(*, project: Project, request: CompareRequest) -> CompareView:
    view = CompareView(project=project)
    _validated(view, request)
    view.save()
    compare_view_refresh(view=view)
    logger.info("compare view %s of project %s created", view.name, project.slug)
    return view


def compare_view_update(*, view: CompareView, request: CompareRequest) -> CompareView:
    _validated(view, request)
    view.save()
    compare_view_refresh(view=view)
    logger.info("compare view %s (%s) changed", view.name, view.pk)
    return view


def compare_view_delete(*, view: CompareView) -> None:
    pk = view.pk
    view.delete()
    logger.info("compare view %s deleted", pk)
