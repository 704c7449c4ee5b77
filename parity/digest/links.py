"""Absolute URLs for emails: the dashboard's pages, the preview and the unsubscribe link.

Mail has no request to build URLs from, so they start with ``SITE_URL``.
"""

from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse

from parity.pure.weeks import Week


def absolute(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


@dataclass(frozen=True)
class DashboardLinks:
    project: str  # the heatmap
    new_gaps: str  # the gaps page since the week's Monday: new gaps, then fixed ones
    fixed_gaps: str  # the same page, at its fixed gaps
    reasons: str
    closed_tracking: str  # every open gap tracked only by closed issues
    passes_now: str  # the exemptions page at those that pass now
    owned: str = ""  # every open gap of the subscription's code owner ("my gaps")


def dashboard_links(
    *, slug: str, week: Week, backends: list[str], owner: str = ""
) -> DashboardLinks:
    # One backend filters the gaps page; with several, the page shows every backend.
    query = {"since": week.monday.isoformat()}
    if len(backends) == 1:
        query["backend"] = backends[0]
    if owner:
        query["owner"] = owner
    gaps_path = reverse("project-gaps", kwargs={"slug": slug})
    gaps = absolute(f"{gaps_path}?{urlencode(query)}")
    closed = {"open": "1", "tracked": "closed", **{k: v for k, v in query.items() if k != "since"}}
    exemptions_path = reverse("project-exemptions", kwargs={"slug": slug})
    passing = {"probe": "passes", **{k: v for k, v in query.items() if k not in ("since", "owner")}}
    owned = {"open": "1", **{k: v for k, v in query.items() if k != "since"}}
    return DashboardLinks(
        project=absolute(reverse("project", kwargs={"slug": slug})),
        new_gaps=gaps,
        fixed_gaps=f"{gaps}#fixed-gaps",
        reasons=absolute(reverse("project-reasons", kwargs={"slug": slug})),
        closed_tracking=absolute(f"{gaps_path}?{urlencode(closed)}"),
        passes_now=absolute(f"{exemptions_path}?{urlencode(passing)}"),
        owned=absolute(f"{gaps_path}?{urlencode(owned)}") if owner else "",
    )


def testcase_url(*, slug: str, test_id: int) -> str:
    return absolute(reverse("project-test", kwargs={"slug": slug, "pk": test_id}))


def transition_url(*, slug: str, pk: int) -> str:
    return absolute(reverse("project-transition", kwargs={"slug": slug, "pk": pk}))


def unsubscribe_url(*, token: str) -> str:
    return absolute(reverse("digest-unsubscribe", kwargs={"token": token}))


def target_url(*, slug: str, backend: str) -> str:
    """The trend page of ``backend``, where its targets and their forecasts are."""
    path = reverse("project-trend", kwargs={"slug": slug})
    return absolute(f"{path}?{urlencode({'backend': backend})}")


def compare_url(*, slug: str, name: str) -> str:
    """A compare view's report, red tests first."""
    return absolute(reverse("project-compare", kwargs={"slug": slug, "name": name}))


def suites_url(*, slug: str) -> str:
    return absolute(reverse("project-suites", kwargs={"slug": slug}))


def suite_gaps_url(*, slug: str, suite: str, backend: str) -> str:
    """The gaps page listing the missing tests of a suite never run on ``backend``."""
    path = reverse("project-gaps", kwargs={"slug": slug})
    query = {"open": "1", "suite": suite, "backend": backend, "state": "missing"}
    return absolute(f"{path}?{urlencode(query)}")
