"""The gaps page: gaps opened since a day that are still open, and those fixed since then,
each a page at a time, from ``gaps_list`` (the engine's ``Gap`` rows)."""

import datetime
from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

from parity.models import Gap, Project
from parity.selectors.dashboard.issues import IssueLink, issue_links
from parity.selectors.gaps import gaps_list, issue_urls


@dataclass(frozen=True)
class GapRow:
    gap: Gap
    issues: list[IssueLink]


@dataclass(frozen=True)
class GapsPage:
    new: Page  # of GapRow
    fixed: Page  # of GapRow


def gaps_page(
    *,
    project: Project,
    since: datetime.datetime,
    filters: dict,
    open_any_age: bool = False,
    page: int = 1,
    fixed_page: int = 1,
    per_page: int = 50,
) -> GapsPage:
    """Gaps opened since ``since`` and still open (every open gap with ``open_any_age``), and
    gaps fixed since ``since``. ``filters``: ``gaps_list``'s ``backend``, ``state``,
    ``tracked``, ``intended``."""
    new = gaps_list(project=project, since=None if open_any_age else since, **filters)
    fixed = gaps_list(project=project, closed_since=since, **filters)
    return GapsPage(
        new=_page(new.order_by("-opened_at", "backend__name", "test__key"), page, per_page),
        fixed=_page(
            fixed.order_by("-closed_at", "backend__name", "test__key"), fixed_page, per_page
        ),
    )


def _page(gaps: QuerySet[Gap], number: int, per_page: int) -> Page:
    page = Paginator(gaps, per_page).get_page(number)
    page.object_list = [
        GapRow(gap=gap, issues=issue_links(issue_urls(reason=gap.reason, triage=gap.triage)))
        for gap in page.object_list
    ]
    return page
