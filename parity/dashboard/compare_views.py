"""Compare views (docs/compare-views.md): the project's list with a new view's form, one view's
report (regressed tests first, each with its sentence; ``?state=`` filters), its CSV, and its
settings, whose form previews which tests would change state before it saves, and whether the
overview's headline reads from it. Readers see the reports; maintainers write the settings. The
reports are the kept rows (``parity.selectors.compare_kept``, written after a recompute of either
variant and on each save); only a preview reads the runs' results
(``parity.result_reads.compare_preview``)."""

import csv
import io

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from parity import result_reads, selectors
from parity.dashboard.views import _render_project as render_project
from parity.models import CompareView, Project
from parity.pure.compare import RED, CompareState
from parity.services.compare_rows import compare_headline_set
from parity.services.compare_views import (
    CompareRejected,
    CompareRequest,
    compare_view_check,
    compare_view_create,
    compare_view_delete,
    compare_view_update,
)
from parity.web.access import may_triage, project_download, project_maintainer_page, project_page

ROWS_SHOWN = 500  # of a report's filtered tests; the CSV and the API (paged) hold them all
PREVIEW_SHOWN = 200  # of a preview's changed tests


class BackendChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj) -> str:
        return obj.name


class CompareForm(forms.Form):
    name = forms.SlugField(max_length=80, help_text="In the page's URL, e.g. gfx90a-vs-cuda.")
    sample = BackendChoice(queryset=None, to_field_name="name", help_text="The variant judged.")
    basis = BackendChoice(queryset=None, to_field_name="name", help_text="Judged against this one.")
    days = forms.IntegerField(
        min_value=1, max_value=365, initial=14, help_text="The window, in days."
    )
    confidence = forms.FloatField(min_value=50, max_value=99.99, initial=95.0, help_text="Percent.")
    tolerance = forms.FloatField(
        min_value=0,
        max_value=100,
        initial=5.0,
        help_text="Pass-rate points the sample may fall below.",
    )
    min_failures = forms.IntegerField(
        min_value=0,
        max_value=10000,
        initial=3,
        help_text="The sample's failures a regression needs.",
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        backends = selectors.compare_backends(project=project)
        self.fields["sample"].queryset = backends
        self.fields["basis"].queryset = backends

    def compare_request(self) -> CompareRequest:
        return CompareRequest(**self.cleaned_data)

    def rejected(self, exc: CompareRejected) -> None:
        for field, problems in exc.errors.items():
            self.add_error(field if field in self.fields else None, problems)


def _view(project: Project, name: str) -> CompareView:
    view = selectors.compare_view_of(project=project, name=name)
    if view is None:
        raise Http404(f"No compare view {name} in {project.slug}.")
    return view


def _proposed(project: Project, request: CompareRequest) -> CompareView:
    return CompareView(
        project=project,
        name=request.name,
        sample=request.sample,
        basis=request.basis,
        days=request.days,
        confidence=request.confidence,
        tolerance=request.tolerance,
        min_failures=request.min_failures,
    )


def _preview(project: Project, view: CompareView | None, form: CompareForm) -> dict:
    """The form checked and, if the service would take it, its preview: nothing is written."""
    try:
        compare_view_check(project=project, request=form.compare_request(), view=view)
    except CompareRejected as exc:
        form.rejected(exc)
        return {}
    proposed = _proposed(project, form.compare_request())
    changes = result_reads.compare_preview(view=view, proposed=proposed)
    return {"preview": changes[:PREVIEW_SHOWN], "preview_total": len(changes), "proposed": proposed}


@require_http_methods(["GET", "HEAD", "POST"])
@project_page
def compare_views(request: HttpRequest, project: Project) -> HttpResponse:
    """The list; a maintainer's POST previews (``action=preview``) or creates a view."""
    maintainer = may_triage(request, project)
    form = CompareForm(request.POST if request.method == "POST" else None, project=project)
    context = {}
    if request.method == "POST":
        if not maintainer:
            raise PermissionDenied("Only the project's maintainers add compare views.")
        if form.is_valid() and request.POST.get("action") == "preview":
            context = _preview(project, None, form)
        elif form.is_valid():
            try:
                view = compare_view_create(project=project, request=form.compare_request())
            except CompareRejected as exc:
                form.rejected(exc)
            else:
                messages.success(request, f"Compare view {view.name} saved.")
                return redirect(reverse("project-compare", args=[project.slug, view.name]))
    return render_project(
        request,
        project,
        "parity/compare_views.html",
        tab="compare",
        views=selectors.compare_views_of(project=project),
        form=form if maintainer else None,
        **context,
    )


def _state(request: HttpRequest) -> CompareState | None:
    try:
        return CompareState(request.GET.get("state", ""))
    except ValueError:
        return None


@require_safe
@project_page
def compare_detail(request: HttpRequest, project: Project, name: str) -> HttpResponse:
    view = _view(project, name)
    state = _state(request)
    report = selectors.compare_kept(view=view, state=state, limit=ROWS_SHOWN)
    return render_project(
        request,
        project,
        "parity/compare.html",
        tab="compare",
        report=report,
        rows=report.rows,
        rows_shown=ROWS_SHOWN,
        # Each row's link: reversed once, not once per row of 500.
        test_url=reverse("project-test", args=[project.slug, 0]).removesuffix("0/"),
        refresh_minutes=settings.PARITY_COMPARE_REFRESH_SECONDS // 60,
        headline=project.headline_compare_view_id == view.pk,
        state=state,
        states=[(s, report.counts[s]) for s in CompareState],
        red=RED,
        alpha=f"{1 - report.rules.confidence / 100:.4g}",
        maintainer=may_triage(request, project),
    )


@require_http_methods(["GET", "HEAD", "POST"])
@project_maintainer_page
def compare_settings(request: HttpRequest, project: Project, name: str) -> HttpResponse:
    """The view's settings; ``action=preview`` shows the tests that would change state, and
    only ``action=save`` writes."""
    view = _view(project, name)
    initial = {
        "name": view.name,
        "sample": view.sample.name,
        "basis": view.basis.name,
        "days": view.days,
        "confidence": view.confidence,
        "tolerance": view.tolerance,
        "min_failures": view.min_failures,
    }
    data = request.POST if request.method == "POST" else None
    if data is not None and data.get("action") == "headline":
        chosen = data.get("headline") == "1"
        if chosen or project.headline_compare_view_id == view.pk:
            compare_headline_set(project=project, view=view if chosen else None)
        said = "now reads" if chosen else "no longer reads"
        messages.success(request, f"The overview's headline {said} from {view.name}.")
        return redirect(reverse("project-compare-settings", args=[project.slug, view.name]))
    form = CompareForm(data, initial=initial, project=project)
    context = {}
    if data is not None and form.is_valid():
        if data.get("action") == "save":
            try:
                compare_view_update(view=view, request=form.compare_request())
            except CompareRejected as exc:
                form.rejected(exc)
            else:
                messages.success(request, f"Compare view {view.name} saved.")
                return redirect(reverse("project-compare", args=[project.slug, view.name]))
        else:
            context = _preview(project, view, form)
    return render_project(
        request,
        project,
        "parity/compare_settings.html",
        tab="compare",
        view=view,
        form=form,
        headline=project.headline_compare_view_id == view.pk,
        **context,
    )


@require_POST
@project_maintainer_page
def compare_delete(request: HttpRequest, project: Project, name: str) -> HttpResponse:
    view = _view(project, name)
    compare_view_delete(view=view)
    messages.success(request, f"Compare view {name} removed.")
    return redirect(reverse("project-compare-views", args=[project.slug]))


CSV_COLUMNS = (
    "test",
    "state",
    "sample",
    "sample_passed",
    "sample_failed",
    "sample_pass_rate",
    "basis",
    "basis_passed",
    "basis_failed",
    "basis_pass_rate",
    "p_value",
    "sentence",
)


@require_safe
@project_download
@cache_control(private=True)
def compare_csv(request: HttpRequest, project: Project, name: str) -> HttpResponse:
    """Every test of the report (``?state=`` filters), worst first."""
    view = _view(project, name)
    report = selectors.compare_kept(view=view, state=_state(request))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for row in report.rows:
        writer.writerow(
            (
                _cell(row.test),
                row.state.value,
                view.sample.name,
                row.sample.passed,
                row.sample.failed,
                _rate(row.sample.rate),
                view.basis.name,
                row.basis.passed,
                row.basis.failed,
                _rate(row.basis.rate),
                "" if row.judgement.p is None else f"{row.judgement.p:.6g}",
                _cell(row.sentence),
            )
        )
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="{project.slug}-compare-{view.name}.csv"'
    )
    return response


def _rate(rate: float | None) -> str:
    return "" if rate is None else f"{rate:.1f}"


def _cell(text: str) -> str:
    """A cell a spreadsheet would run as a formula is written as text."""
    return "'" + text if text.startswith(("=", "+", "-", "@", "\t", "\r")) else text
