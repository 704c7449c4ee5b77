"""Dashboard pages: parse the query string (``forms``), call the page's one selector
(``parity.selectors``, which reads the engine's roll-ups), render a template. How an answer
looks (colours, symbols, labels) is decided in ``presenters``. Chart data comes from the JSON
endpoints in ``charts``, triage goes through ``triage``."""

import dataclasses
import datetime
from urllib.parse import quote

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_safe

from parity import result_reads, selectors
from parity.dashboard import filing, presenters, target_views, triage_views
from parity.dashboard.charts import TREND_DAYS
from parity.dashboard.forms import (
    ExemptionForm,
    ExemptionsQuery,
    FileQuery,
    GapsQuery,
    HeatmapQuery,
    IssueDraftForm,
    IssueSubjectForm,
    OwnersUploadForm,
    PairQuery,
    QueueQuery,
    ReasonsQuery,
    RunsQuery,
    TestSearchQuery,
    TriageForm,
    cleaned,
    query_form,
)
from parity.models import Backend, Project, Run, TestCase
from parity.services import issue_filing
from parity.web import csp
from parity.web.access import (
    may_triage,
    principal_of,
    project_page,
    projects_readable,
    triage_refusal,
)

# Gaps listed per page of the gaps page's aligned view.
ALIGNED_GAPS_PER_PAGE = 100
# Per family, the tests failing on the most of its variants listed under the heatmap by family.
FAMILY_TESTS_SHOWN = 10
# A file page's tests per page (a file of 250 parametrized tests is common).
FILE_TESTS_PER_PAGE = 100
# ... and at most this many cells a page (tests x backends): twenty backends' cells of a hundred
# tests made a page the browser and the server both took long over.
FILE_CELLS_PER_PAGE = 1000
# The heatmap's rows per page: a project of a thousand files and twenty backends drew every
# cell on one page. The demo's 160 files fit on one, where the filter works as one types.
HEATMAP_ROWS_PER_PAGE = 200
# ... and at most this many cells (rows x backends): twenty backends' 200 rows were a page of
# megabytes; ten backends or fewer keep every row.
HEATMAP_CELLS_PER_PAGE = 2000
# Tests listed per direction on a pair's page; the CSV download lists them all.
PAIR_TESTS_SHOWN = 200
# ... and of its lists of files on one backend only (thousands when one backend leaves out half
# the files).
PAIR_FILES_SHOWN = 100
# The exemptions page's test files CI runs on a backend, a page at a time (the manifest API
# gives them all).
EXEMPTION_FILES_SHOWN = 200

# The overview's burn-down of untracked gaps covers this many days of snapshots.
BURNDOWN_DAYS = 90

# ``tracked`` choice of the gaps page -> ``gaps_list``'s filters (``selectors.GapsQuery``).
TRACKED_FILTERS = {
    "": {},
    "tracked": {"tracked": True},
    "untracked": {"tracked": False},
    "intended": {"intended": True},
    "closed": {"tracked_closed": True},
}


def overview(request: HttpRequest) -> HttpResponse:
    projects = projects_readable(principal=principal_of(request))
    headlines = selectors.triage_headlines(projects=projects)
    since = timezone.now() - datetime.timedelta(days=BURNDOWN_DAYS)
    burndowns = selectors.untracked_burndown(projects=projects, since=since)
    found = selectors.project_cards(projects=projects)
    compared = selectors.compare_headlines(projects=[card.project for card in found])
    cards = [
        dataclasses.replace(
            card,
            headlines=headlines.get(card.project.pk, []),
            burndown=burndowns.get(card.project.pk),
            compare=compared.get(card.project.pk),
        )
        for card in found
    ]
    trends_since = timezone.now() - datetime.timedelta(days=TREND_DAYS)
    context = {
        "cards": cards,
        "trends": selectors.score_trends(since=trends_since, projects=projects),
        "trend_days": TREND_DAYS,
        **_upload_help(request),
    }
    return render(request, "parity/overview.html", context)


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask every site for /favicon.ico, the admin's pages too (they link none)."""
    return redirect(static("parity/favicon.svg"), permanent=True)


@project_page
def project_heatmap(request: HttpRequest, project: Project) -> HttpResponse:
    slug = project.slug
    query, asked = _heatmap_query(request)
    aligned = None
    if query["aligned"]:  # each backend at the newest commit it and the reference ran
        aligned = result_reads.aligned_view(project=project, cells=True)
    heatmap = selectors.heatmap(
        project=project, query=asked, aligned=aligned, cell_type=presenters.HeatCell
    )
    # By family: each family's tests failing on the most of its variants, under the table.
    spread = [
        selectors.family_tests(project=project, family=b.backend, limit=FAMILY_TESTS_SHOWN)
        for b in heatmap.backends
        if heatmap.by == "family" and b.backend in heatmap.family_names
    ]
    return _render_project(
        request,
        project,
        "parity/heatmap.html",
        tab="heatmap",
        heatmap=presenters.heatmap_cells(heatmap),
        family_tests=spread,
        file_url=reverse("project-file", args=[slug]),  # reversed once, not once per cell
        exempt=query["exempt"] or "",  # each other row links its form (a form a row is heavy)
    )


def _heatmap_query(request: HttpRequest) -> tuple[dict, selectors.HeatmapQuery]:
    """The heatmap's query string: the form's values, and the rows they ask for, a page of
    them."""
    query = cleaned(HeatmapQuery(request.GET))
    return query, selectors.HeatmapQuery(
        folders=query["dir"],
        folder=query["folder"] or "",
        q=query["q"] or "",
        sort=query["sort"],
        owner=query["owner"] or "",
        by=query["by"] or "variant",  # as ``_by`` reads it
        page=request.GET.get("page") or 1,
        per_page=HEATMAP_ROWS_PER_PAGE,
        cells_per_page=HEATMAP_CELLS_PER_PAGE,
    )


@project_page
def file_detail(request: HttpRequest, project: Project) -> HttpResponse:
    form = FileQuery(request.GET)
    if not form.is_valid():
        return redirect("project", slug=project.slug)
    grid = selectors.file_grid(
        project=project,
        file=form.cleaned_data["path"],
        backend=form.cleaned_data["backend"],
        page=request.GET.get("page") or 1,
        per_page=FILE_TESTS_PER_PAGE,
        cells_per_page=FILE_CELLS_PER_PAGE,
    )
    if not grid.tests:
        raise Http404(f"No test file '{grid.file}' in the current runs of {project.slug}.")
    return _render_project(request, project, "parity/file.html", tab="heatmap", grid=grid)


@project_page
def test_detail(request: HttpRequest, project: Project, pk: int) -> HttpResponse:
    test = get_object_or_404(TestCase, project=project, pk=pk)
    page = result_reads.testcase_page(project=project, test=test)
    return _render_project(
        request,
        project,
        "parity/test.html",
        tab="heatmap",
        page=page,
        compare_lines=selectors.compare_states_of_test(project=project, test=test),
    )


@project_page
def test_search(request: HttpRequest, project: Project) -> HttpResponse:
    """The nav's search box: a test named exactly (its canonical ID, or as its runner names it)
    opens its page; otherwise the tests whose ID holds the text."""
    query = cleaned(TestSearchQuery(request.GET))
    found = selectors.testcase_find(project=project, q=query["q"] or "")
    if found.exact is not None:
        return redirect("project-test", slug=project.slug, pk=found.exact.pk)
    return _render_project(request, project, "parity/tests.html", tab="heatmap", found=found)


SCORE_TREND_DAYS = (30, 90, 365)  # the trend page's windows; the first past the default


@require_http_methods(["GET", "HEAD", "POST"])
@project_page
def score_trend(request: HttpRequest, project: Project) -> HttpResponse:
    """A backend's score over time (a family's: each variant's), dated, with its coverage drops
    and attribute changes marked, and its targets with their forecasts (docs/targets.md); every
    backend but the reference without ``?backend=``. A maintainer's POST sets a target
    (``target_views``)."""
    name = request.GET.get("backend") or None
    days = request.GET.get("days", "")
    days = int(days) if days.isdigit() and int(days) in SCORE_TREND_DAYS else 90
    backends = selectors.trend_backends(project=project, name=name)
    if name and not backends:
        raise Http404(f"No backend '{name}' in {project.slug}.")
    since = timezone.now() - datetime.timedelta(days=days)
    form = target_views.target_form(request, project, name)
    if isinstance(form, HttpResponse):
        return form
    series = selectors.score_history(project=project, backends=backends, since=since)
    targets = selectors.targets_progress(project=project, backends=[b.name for b in backends])
    edited = form if isinstance(form, target_views.TargetEditForm) else None
    if edited is not None:
        form = target_views.target_form(request, project, name, bound=False)
    edits = target_views.target_edits([t.target for t in targets], edited) if form else {}
    return _render_project(
        request,
        project,
        "parity/trend.html",
        tab="trend",
        backend=name,
        days=days,
        windows=SCORE_TREND_DAYS,
        series=series,
        targets=targets,
        chart=presenters.trend_chart(series, targets),
        definition=project.score_settings(),
        target_form=form,
        target_rows=[(t, edits.get(t.target.pk)) for t in targets],
    )


@project_page
def skip_reasons(request: HttpRequest, project: Project) -> HttpResponse:
    slug = project.slug
    form = query_form(ReasonsQuery, request.GET, project=project)
    query = cleaned(form)
    backends = [name for name, _ in form.fields["backend"].choices if name]
    sort = query["sort"] or ""
    if sort.removeprefix("-") not in selectors.REASON_SORTS:
        sort = ""  # the default order, which no one column makes
    backend = query["backend"] or None
    rows = selectors.skip_reason_rows(
        project=project, backends=backends, backend=backend, sort=sort
    )
    categories = selectors.skip_categories_current(
        project=project, backends=[backend] if backend else None
    )
    return _render_project(
        request,
        project,
        "parity/skip_reasons.html",
        tab="reasons",
        form=form,
        query=query,
        backends=backends,
        rows=rows,
        categories=categories,
        sort=sort,
        chart_url=f"{reverse('project-reasons-data', args=[slug])}?{request.GET.urlencode()}",
    )


def gaps_query(
    request: HttpRequest, project: Project
) -> tuple[GapsQuery, dict, selectors.GapsQuery]:
    """The gaps page's query string (its CSV's too): the form, its values, ``since`` as a
    datetime and the gaps the lists hold (without their dates: ``since`` sets them)."""
    form = query_form(GapsQuery, request.GET, project=project, today=timezone.now().date())
    query = cleaned(form)
    query["since"] = datetime.datetime.combine(query["since"], datetime.time(), tzinfo=datetime.UTC)
    filters = selectors.GapsQuery(
        backend=query["backend"] or None,
        state=query["state"] or None,
        file=query["file"] or None,
        reason=query["reason"],
        category=query["category"] or None,
        owner=query["owner"] or None,
        history=query["history"] or None,
        suite=query["suite"] or None,
        **TRACKED_FILTERS[query["tracked"] or ""],
    )
    return form, query, filters


@project_page
def gaps(request: HttpRequest, project: Project) -> HttpResponse:
    form, query, filters = gaps_query(request, project)
    if request.GET.get("aligned") == "1":
        return _gaps_aligned(request, project, form, filters)
    since = query["since"]
    filters, unrun = selectors.gaps_folded(project=project, query=filters)
    page = selectors.gaps_page(
        project=project,
        since=since,
        open_any_age=query["open"],
        filters=filters,
        page=query["page"],
        fixed_page=query["fixed_page"],
        sort=query["sort"] or "",
    )
    return _render_project(
        request,
        project,
        "parity/gaps.html",
        tab="gaps",
        form=form,
        query=query,
        since=since,
        # The form's default week, said as such rather than as a bare date.
        since_days=None if request.GET.get("since") else GapsQuery.DEFAULT_DAYS,
        page=page,
        unrun_suites=unrun,
    )


def _gaps_aligned(
    request: HttpRequest, project: Project, form, filters: selectors.GapsQuery
) -> HttpResponse:
    """The gaps page's aligned view: each backend's gaps at the newest commit it and the
    reference both ran (``?aligned=1``), a page of them; backend and state filter it."""
    view = result_reads.aligned_view(
        project=project,
        numbers=False,
        gaps=True,
        backend=filters.backend,
        state=filters.state,
    )
    pairs = sorted(
        ((view.names[pk], pair) for pk, pair in view.pairs.items()), key=lambda item: item[0]
    )
    paginator = Paginator(view.gaps, ALIGNED_GAPS_PER_PAGE)
    return _render_project(
        request,
        project,
        "parity/gaps_aligned.html",
        tab="gaps",
        form=form,
        pairs=pairs,
        page=paginator.get_page(request.GET.get("page")),
    )


@project_page
def triage_queue(request: HttpRequest, project: Project) -> HttpResponse:
    """Untracked gaps as decisions: grouped by (backend, file) and (backend, reason), largest
    first, each group exempted, filed as one issue, or opened as a list of its tests."""
    form = query_form(QueueQuery, request.GET, project=project)
    query = cleaned(form)
    queue = selectors.triage_queue(
        project=project,
        backend=query["backend"] or None,
        file_page=query["page"],
        reason_page=query["reason_page"],
        owner=query["owner"] or None,
    )
    return _render_project(
        request,
        project,
        "parity/queue.html",
        tab="queue",
        form=form,
        query=query,
        queue=queue,
        # The queue's owner, kept by its links to the gaps list.
        owner_query=f"&owner={quote(query['owner'])}" if query["owner"] else "",
    )


@project_page
def owners(request: HttpRequest, project: Project) -> HttpResponse:
    """The project's code owners: what was imported and how much it covers, each owner's files
    and open gaps, the rules; maintainers import a new CODEOWNERS or YAML here."""
    return _render_project(
        request,
        project,
        "parity/owners.html",
        tab="owners",
        summary=selectors.owners_summary(project=project),
        upload_form=OwnersUploadForm(),
    )


@project_page
def runs(request: HttpRequest, project: Project) -> HttpResponse:
    form = query_form(RunsQuery, request.GET, project=project)
    query = cleaned(form)
    page = selectors.runs_page(
        project=project,
        backend=query["backend"] or None,
        page=query["page"],
        sort=query["sort"] or "",
    )
    return _render_project(
        request, project, "parity/runs.html", tab="runs", form=form, query=query, page=page
    )


@project_page
def suites(request: HttpRequest, project: Project) -> HttpResponse:
    """The suites matrix: whether each suite runs on each backend at all (ran, failed to run,
    stale, never ran, excluded), the health of its last runs, and its newest run's page."""
    return _render_project(
        request,
        project,
        "parity/suites.html",
        tab="suites",
        matrix=selectors.suite_matrix(project=project),
    )


@project_page
def run_detail(request: HttpRequest, project: Project, pk: int) -> HttpResponse:
    """One run, current or not: its verdict (the gaps it opens and closes, its coverage), its
    uploads, and what it lacks against its backend's run before it."""
    # With the version transition it made, if any (its report is linked): no query of its own.
    runs = Run.objects.select_related("backend", "transition")
    run = get_object_or_404(runs, project=project, pk=pk)
    run.project = project
    detail = result_reads.run_detail(run=run)
    return _render_project(
        request,
        project,
        "parity/run.html",
        tab="runs",
        detail=detail,
        shown=result_reads.RUN_GAPS_SHOWN,
        transition=getattr(run, "transition", None),
    )


@project_page
def matrix(request: HttpRequest, project: Project) -> HttpResponse:
    """Every pair of backends: how far their test files and tests overlap, and how many tests
    pass on one and not the other; each cell opens the pair's lists."""
    return _render_project(
        request,
        project,
        "parity/matrix.html",
        tab="matrix",
        matrix=selectors.backend_matrix(project=project, by=_by(request)),
    )


@project_page
def matrix_pair(request: HttpRequest, project: Project) -> HttpResponse:
    """One pair: the files on one backend and not the other, and the tests passing on one
    and not the other (a page of ``PAIR_FILES_SHOWN`` and ``PAIR_TESTS_SHOWN`` of each; the
    CSVs have them all)."""
    form = PairQuery(request.GET, project=project)
    if not form.is_valid():
        return redirect("project-matrix", slug=project.slug)
    pages = [_page_number(request.GET.get(name)) for name in ("page_a", "page_b")]
    pair = selectors.backend_pair(
        project=project,
        a=form.cleaned_data["a"],
        b=form.cleaned_data["b"],
        limit=PAIR_TESTS_SHOWN,
        offsets=((pages[0] - 1) * PAIR_TESTS_SHOWN, (pages[1] - 1) * PAIR_TESTS_SHOWN),
    )
    lists = [
        presenters.ListPage(number=page, per_page=PAIR_TESTS_SHOWN, count=count, shown=len(tests))
        for page, count, tests in (
            (pages[0], pair.passes_only_a_count, pair.passes_only_a),
            (pages[1], pair.passes_only_b_count, pair.passes_only_b),
        )
    ]
    files = []
    for name, found in (("files_page_a", pair.files_only_a), ("files_page_b", pair.files_only_b)):
        number = _page_number(request.GET.get(name))
        start = (number - 1) * PAIR_FILES_SHOWN
        shown = found[start : start + PAIR_FILES_SHOWN]
        pager = presenters.ListPage(
            number=number, per_page=PAIR_FILES_SHOWN, count=len(found), shown=len(shown)
        )
        files.append((pager, shown))
    return _render_project(
        request,
        project,
        "parity/matrix_pair.html",
        tab="matrix",
        pair=pair,
        lists=lists,
        files=files,
    )


def _page_number(value: str | None) -> int:
    """``?page=``-like: a whole number from 1, anything else 1."""
    return int(value) if value and value.isdigit() and int(value) > 0 else 1


@require_http_methods(["GET", "POST"])
@project_page
def exemptions(request: HttpRequest, project: Project) -> HttpResponse:
    """Every exemption (triage) of the project, filtered; a backend's test files; and, for
    maintainers, a form for a new exemption (POSTed here, so its errors show beside its
    fields; its Preview button POSTs it too, to count what it would cover without saving) and
    a remove button per row."""
    form = query_form(ExemptionsQuery, request.GET, project=project)
    query = cleaned(form)
    backends = [name for name, _ in form.fields["files"].choices]
    new = preview = None
    refusal = triage_refusal(request, project)
    if refusal is None:
        # Its own ids: the filter form above has fields of the same names (kind, backend).
        new = ExemptionForm(
            request.POST if request.method == "POST" else None,
            backends=backends,
            auto_id="new_%s",
        )
        if request.method == "POST" and "preview" in request.POST:
            preview = triage_views.exemption_preview(project, new)
        elif request.method == "POST" and triage_views.exemption_save(request, project, new):
            return redirect(request.get_full_path())
    elif request.method == "POST":
        return triage_views.refused(refusal, request.get_full_path())
    files = query["files"] or _files_default(project, backends, query["backend"])
    page = selectors.exemptions_page(
        project=project,
        filters=form.list_filters(query),
        files_backend=files,
        page=query["page"],
    )
    file_rows = None
    if page.files:
        missing = request.GET.get("missing") == "1"
        rows = [row for row in page.files.rows if not (missing and row[2])]
        file_rows = Paginator(rows, EXEMPTION_FILES_SHOWN).get_page(request.GET.get("files_page"))
    return _render_project(
        request,
        project,
        "parity/exemptions.html",
        tab="exemptions",
        form=form,
        query=query,
        backends=backends,
        page=page,
        file_rows=file_rows,
        missing_only=file_rows is not None and missing,
        exemption_form=new,
        preview=preview,
        today=timezone.now().date(),
        exports=presenters.export_links(
            project.slug, backend=query["backend"] or "", kind=query["kind"] or ""
        ),
    )


@project_page
def not_applicable(request: HttpRequest, project: Project) -> HttpResponse:
    """The tests declared not applicable on backends, each declaration with its source and the
    tests it keeps out of the gaps; a maintainer overrides one there, or restores it."""
    return _render_project(
        request,
        project,
        "parity/not_applicable.html",
        tab="exemptions",
        rows=selectors.declarations(project=project),
        may_triage=triage_refusal(request, project) is None,
    )


@require_http_methods(["GET", "POST"])
@project_page
def file_issue(request: HttpRequest, project: Project) -> HttpResponse:
    """File an issue about gaps (``?gap=…``, repeated) or a skip reason (``?reason=&backend=``):
    a draft to edit, then created and linked in one step (with a write token), or the tracker's
    prefilled new-issue page. Maintainers only."""
    refusal = triage_refusal(request, project)
    if refusal is not None:
        return triage_views.refused(refusal, request.get_full_path())
    posted = request.method == "POST"
    form = IssueDraftForm(request.POST) if posted else IssueSubjectForm(request.GET)
    gaps_page = reverse("project-gaps", args=[project.slug])
    back = triage_views.back_url(request, form.data.get("next"), gaps_page)
    if not form.subject_valid():
        messages.error(request, "Nothing to file an issue about: choose gaps or a reason.")
        return redirect(back)
    subject = selectors.issue_subject(project=project, **form.subject_fields())
    if not subject.gaps:
        messages.error(request, "No open gap to file an issue about (fixed meanwhile?).")
        return redirect(back)
    draft = issue_filing.issue_draft(project=project, subject=subject)
    target = issue_filing.filing_for(project=project)
    to_tracker = posted and request.POST.get("to") == "tracker" and form.is_valid()
    if to_tracker and (answer := filing.tracker_page_redirect(project, form, subject)):
        return answer
    if posted and not target.can_create:
        messages.error(request, "Parity has no token to file issues there: open its page below.")
    elif posted and form.is_valid() and filing.issue_file_post(request, project, form, subject):
        return redirect(back)
    editor = form if posted else IssueDraftForm.drafted(form, draft=draft, back=back)
    new_issue_url = issue_filing.new_issue_url(project=project, subject=subject, draft=draft)
    response = _render_project(
        request,
        project,
        "parity/file_issue.html",
        tab="gaps",
        subject=subject,
        editor=editor,
        filing=target,
        new_issue_url=new_issue_url,
        back=back,
    )
    if new_issue_url:  # its tracker button posts here and is sent on to the tracker
        response.headers[csp.HEADER] = csp.policy_posting_to(new_issue_url)
    return response


def _by(request: HttpRequest) -> str:
    """``?by=``: a column per variant (the default) or per family."""
    query = cleaned(HeatmapQuery(request.GET))
    return query["by"] or "variant"


def _files_default(project: Project, backends: list[str], chosen: str | None) -> str | None:
    """Whose test files the exemptions page lists unless asked: a family never runs, so for
    one its first variant; else the backend filtered on, or the first compared with the
    reference (the reference runs every file) that runs. One query."""
    variants: dict[str, list[str]] = {}
    for name, family in Backend.objects.filter(project=project, family__isnull=False).values_list(
        "name", "family__name"
    ):
        variants.setdefault(family, []).append(name)
    if chosen:
        return min(variants[chosen]) if chosen in variants else chosen
    reference = project.reference_backend.name if project.reference_backend_id else None
    runs = [name for name in backends if name != reference and name not in variants]
    return runs[0] if runs else reference


def _render_project(
    request: HttpRequest, project: Project, template: str, *, tab: str, **context
) -> HttpResponse:
    """Every project page: its tabs, the triage form for those who may triage (maintainers) and
    the one they last had refused, and the upload instructions its empty states show."""
    triage_form = TriageForm() if may_triage(request, project) else None
    context = {
        "project": project,
        "tab": tab,
        "has_runs": selectors.project_has_runs(project=project),
        # Called by an empty state only (runs, none that counts): pages with data never ask.
        "off_branch_runs": lambda: selectors.off_branch_runs(project=project),
        "triage_form": triage_form,
        # A small triage form refused on the last post: it opens again (``_triage_form.html``).
        "triage_refused": request.session.pop("triage_refused", None) if triage_form else None,
        **_upload_help(request, project),
        **context,
    }
    return render(request, template, context)


def _upload_help(request: HttpRequest, project: Project | None = None) -> dict:
    def example_backend() -> str:
        # Called by the template only when it shows the help (a project without runs): pages
        # with data do not pay the query.
        backend = project.backends.values_list("name", flat=True).first() if project else None
        return backend or "cpu"

    return {
        "upload_url": request.build_absolute_uri(reverse("upload-create")),
        "example_backend": example_backend,
    }
