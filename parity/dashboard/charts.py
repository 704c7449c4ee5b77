"""JSON endpoints behind the pages' charts: small, computed from roll-ups over a bounded
window, with an ETag that changes only when the engine recomputes (a repeat fetch is a 304)."""

import datetime
import hashlib

from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.views.decorators.cache import cache_control
from django.views.decorators.http import condition, require_GET

from parity.dashboard.forms import ReasonsQuery, cleaned
from parity.models import Project
from parity.selectors import dashboard

TREND_DAYS = 30


def _etag(request: HttpRequest, slug: str | None = None) -> str:
    project = Project.objects.filter(slug=slug).first() if slug else None
    version = dashboard.data_version(project=project)
    # The day is part of it: windows end today.
    key = f"{slug}|{version}|{timezone.now().date()}|{request.GET.urlencode()}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


@require_GET
@cache_control(max_age=60)
@condition(etag_func=_etag)
def overview_data(request: HttpRequest) -> JsonResponse:
    """Per project and backend, the parity score of each current run of the last 30 days."""
    since = timezone.now() - datetime.timedelta(days=TREND_DAYS)
    return JsonResponse({"days": TREND_DAYS, "projects": dashboard.score_trends(since=since)})


@require_GET
@cache_control(max_age=60)
@condition(etag_func=_etag)
def skip_reasons_data(request: HttpRequest, slug: str) -> JsonResponse:
    """Skipped tests per day for the top reasons and "other", as stacked-area series."""
    project = get_object_or_404(Project, slug=slug)
    query = cleaned(ReasonsQuery(request.GET, project=project))
    chart = dashboard.skip_reason_chart(
        project=project, backend=query["backend"] or None, days=query["days"]
    )
    return JsonResponse(
        {
            "backend": query["backend"] or None,
            "days": [day.isoformat() for day in chart.days],
            "series": [
                {"name": s.name, "reason": s.reason, "counts": s.counts} for s in chart.series
            ],
        }
    )
