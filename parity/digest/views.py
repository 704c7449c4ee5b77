"""The digest's two pages: a preview of a project's digest on the dashboard, and the
unsubscribe link of the emails."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_safe

from parity.digest.render import digest_context, digest_render
from parity.digest.services import subscription_unsubscribe
from parity.models import Project, Subscription
from parity.pure.weeks import BadWeek, Week
from parity.result_reads.week_uncovered import week_uncovered
from parity.selectors.digest import digest_content
from parity.web.access import project_page
from parity.web.csp import csp_policy, policy


# The email's HTML keeps inline styles (mail clients drop style sheets), so the page showing it
# allows style attributes, and only them: no inline <style> element, scripts as strict as anywhere.
@csp_policy(policy(style_src_attr="'unsafe-inline'"))
@require_safe
@project_page
def preview(request: HttpRequest, project: Project) -> HttpResponse:
    """This week's digest so far (``?week=2026-W14`` for another, ``?backend=tpu`` or
    ``?owner=@team`` to narrow it as a subscription's filters do), for those who may read the
    project."""
    refusal = ""
    try:
        week = Week.parse(request.GET["week"]) if "week" in request.GET else None
    except BadWeek as exc:  # the page still answers, with this week's digest and why
        week, refusal = None, f"{exc} This week's digest instead:"
    current = Week.of(timezone.now())
    week = week or current
    content = digest_content(
        project=project,
        week=week,
        backends=request.GET.getlist("backend"),
        owner=request.GET.get("owner", ""),
        uncovered=week_uncovered(project=project, week=week),
    )
    context = {
        **digest_context(content, unsubscribe_url=None),
        "project": project,
        "rendered": digest_render(content),
        "previous": week.previous,
        "next": week.next if week < current else None,
        "is_current": week == current,
        "tab": "digest",
        "refusal": refusal,
    }
    return render(request, "digest/preview.html", context, status=400 if refusal else 200)


# No CSRF token: mail clients' one-click unsubscribe (RFC 8058) POSTs here without one. The
# secret token in the URL is the authorization, and all a POST can do is stop that one
# subscription.
@csrf_exempt
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """GET asks to confirm (mail scanners fetch links: a GET must not unsubscribe); POST
    unsubscribes."""
    subscription = get_object_or_404(Subscription.objects.select_related("project"), token=token)
    if request.method == "POST":
        subscription_unsubscribe(subscription=subscription)
    return render(request, "digest/unsubscribe.html", {"subscription": subscription})
