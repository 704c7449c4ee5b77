"""A project's skip-reason rules as the classifier uses them, and its skips counted by the
category their reason has (the reasons page's category totals, the digest's)."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q

from parity.definitions import untracked_q
from parity.models import CurrentOutcome, Gap, GapState, Outcome, Project, SkipRule
from parity.models.reasons import ReasonKind
from parity.pure.skip_rules import NO_REASON, UNCATEGORIZED, SkipRules
from parity.pure.skip_rules import SkipRule as Rule

UNCATEGORIZED_LABEL = "uncategorized"  # the category of skips no rule catches, as pages name it


def skip_rules_current(*, project: Project) -> SkipRules:
    """The project's rules in order. One query."""
    return SkipRules(
        [
            Rule(
                category=r.category,
                disposition=r.disposition,
                message=r.message,
                file=r.file,
                klass=r.klass,
                name=r.name,
                note=r.note,
            )
            for r in SkipRule.objects.filter(project=project).order_by("position", "pk")
        ]
    )


@dataclass(frozen=True)
class CategoryCount:
    category: str  # "" for the skips no rule catches
    disposition: str
    tests: int  # skipped tests in the backends' current runs
    gaps: int  # open skipped gaps against the reference
    untracked: int  # of those, neither tracked nor intended

    @property
    def label(self) -> str:
        return self.category or UNCATEGORIZED_LABEL


def skip_categories_current(
    *, project: Project, backends: list[str] | None = None
) -> list[CategoryCount]:
    """Current skips (of ``backends``, when given) per category of their reason, with the
    skipped gaps they cause, the most gaps first. Skips that gave no reason (no reason row)
    count as "no reason given". Two queries, one GROUP BY each over the current outcomes and
    the open gaps."""
    outcomes = CurrentOutcome.objects.filter(project=project, outcome=Outcome.SKIPPED).filter(
        Q(reason__kind=ReasonKind.SKIP) | Q(reason__isnull=True)
    )
    gaps = Gap.objects.filter(project=project, is_open=True, state=GapState.SKIPPED)
    if backends:
        outcomes = outcomes.filter(backend__name__in=backends)
        gaps = gaps.filter(backend__name__in=backends)
    # A skip with no reason row groups as (None, None): a reason's category is never NULL.
    keys = ("reason__category", "reason__disposition")
    found: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for category, disposition, n in outcomes.order_by().values_list(*keys).annotate(n=Count("pk")):
        found[_key(category, disposition)][0] += n
    untracked = Count("pk", filter=untracked_q())
    for category, disposition, n, m in (
        gaps.order_by().values_list(*keys).annotate(n=Count("pk"), m=untracked)
    ):
        counts = found[_key(category, disposition)]
        counts[1] += n
        counts[2] += m
    rows = [
        CategoryCount(category, disposition, *counts)
        for (category, disposition), counts in found.items()
    ]
    return sorted(rows, key=lambda r: (-r.gaps, -r.tests, r.label))


def _key(category: str | None, disposition: str | None) -> tuple[str, str]:
    if category is None:  # no reason row: the skip gave no reason
        return NO_REASON.category, NO_REASON.disposition
    return category or UNCATEGORIZED.category, disposition or UNCATEGORIZED.disposition
