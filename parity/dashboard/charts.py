"""JSON endpoints behind the pages' charts: small, computed from roll-ups over a bounded
window, with an ETag that changes only when the engine recomputes (a repeat fetch is a 304)."""

import datetime
import hashlib

from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import cache_control
from django.views.decorators.http import condition, require_safe

from parity import selectors
from parity.dashboard.forms import ReasonsQuery, cleaned
from parity.models import Project
from parity.web.access import principal_of, project_json, projects_readable

TREND_DAYS = 30


def _etag(request: HttpRequest, project: Project | None = None) -> str:
    version = selectors.data_version(project=project)
    # Who asks is part of it: the overview lists only the projects the request may read.
    scope = project.slug if project else ",".join(str(p.pk) for p in _readable(request))
    # The day is part of it: windows end today.
    key = f"{scope}|{version}|{timezone.now().date()}|{request.GET.urlencode()}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _readable(request: HttpRequest) -> list[Project]:
    return projects_readable(principal=principal_of(request))


# private: what a response holds depends on who asks (private projects), so no shared cache
# may keep it.
@require_safe
@cache_control(max_age=60, private=True)
@condition(etag_func=_etag)
def overview_data(request: HttpRequest) -> JsonResponse:
    """Per project the request may read and backend, the parity score of each current run of
    the last 30 days."""
    since = timezone.now() - datetime.timedelta(days=TREND_DAYS)
    trends = selectors.score_trends(since=since, projects=_readable(request))
    return JsonResponse({"days": TREND_DAYS, "projects": trends})


@require_safe
@project_json
@cache_control(max_age=60, private=True)
@condition(etag_func=_etag)
def skip_reasons_data(request: HttpRequest, project: Project) -> JsonResponse:
    """Skipped tests per day per category of reason (``?by=reason``: for the top reasons and
    "other"), as stacked-area series."""
    query = cleaned(ReasonsQuery(request.GET, project=project))
    by = query["by"] or "category"
    chart = selectors.skip_reason_chart(
        project=project,
        backend=query["backend"] or None,
        days=query["days"],
        by_category=by == "category",
    )
    series = [
        {
            "name": s.name,
            "reason": s.reason,
            "counts": s.counts,
            "disposition": s.disposition,
            "rest": s.rest,
        }
        for s in chart.series
    ]
    return JsonResponse(
        {
            "backend": query["backend"] or None,
            "by": by,
            "days": [day.isoformat() for day in chart.days],
            "series": series,
        }
    )
