"""Declarations runners send with an upload (``parity.pure.declarations``), kept as
not-applicable triages whose ``source`` says where they came from.

Each upload sends the labels of the classes its shard collected, so a sync adds the
declarations it has not seen and withdraws those of classes now labelled otherwise; a class no
shard of this upload collected keeps its declaration. A maintainer's override
(``declaration_override``) survives every sync: the row is kept, not re-created."""

import logging

from django.db import transaction

from parity.models import Project, Triage, TriageKind
from parity.models.projects import project_lock
from parity.pure.declarations import SOURCE, not_applicable, withdrawn
from parity.services.triage import TriageRequest, triages_create

logger = logging.getLogger(__name__)


def hw_classification_sync(*, project: Project, classes: dict[str, str]) -> tuple[int, int]:
    """Add and withdraw the project's ``hw_classification`` declarations by ``classes``
    (``{"<file>::<Class>": label}``); (added, withdrawn). Takes the project lock only when
    something changes, and then re-applies triages once."""
    rules = project.normalization()
    wanted = {d.match: d for d in not_applicable(classes, rules)}
    gone = withdrawn(classes, rules) - set(wanted)
    kept = Triage.objects.filter(project=project, source=SOURCE)
    known = set(kept.values_list("match", flat=True))
    if not (set(wanted) - known or gone & known):
        return 0, 0
    with transaction.atomic():
        project = project_lock(project_id=project.pk)
        known = set(kept.values_list("match", flat=True))
        added = [
            TriageRequest(kind=TriageKind.NOT_APPLICABLE, match=d.match, note=d.note, source=SOURCE)
            for match, d in wanted.items()
            if match not in known
        ]
        leaving = kept.filter(match__in=gone)
        removed = leaving.count()
        leaving.delete()
        triages_create(project=project, requests=added)  # re-applies triages once
    logger.info(
        "project %s: %d hw_classification declarations added, %d withdrawn",
        project.pk, len(added), removed,
    )  # fmt: skip
    return len(added), removed
