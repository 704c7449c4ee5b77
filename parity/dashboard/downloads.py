"""CSV downloads of the backend matrix (``parity.selectors.matrix``): every pair's numbers, and
for one pair the files on one backend and not the other and the tests passing on one and not
the other, with the reason there, whole (the pages show the first ones); and the gaps page's
list of open gaps as filtered and sorted, every page of it; and the suites matrix, a row per
suite and backend. A spreadsheet opens them as they are."""

import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import replace

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from parity import selectors
from parity.dashboard.forms import PairQuery
from parity.dashboard.views import gaps_query
from parity.models import Project
from parity.web.access import project_download

MATRIX_COLUMNS = (
    "backend_a",
    "backend_b",
    "files_a",
    "files_b",
    "files_both",
    "files_only_a",
    "files_jaccard",
    "tests_a",
    "tests_b",
    "tests_both",
    "tests_only_a",
    "tests_jaccard",
    "passes_on_a_not_b",
)
# A cell a spreadsheet would run as a formula is written as text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@require_safe
@project_download
@cache_control(private=True)
def matrix_csv(request: HttpRequest, project: Project) -> HttpResponse:
    """Every ordered pair of backends, one row each (of families with ``?by=family``)."""
    by = "family" if request.GET.get("by") == "family" else "variant"
    matrix = selectors.backend_matrix(project=project, by=by)
    rows = [
        (
            cell.a,
            cell.b,
            cell.files.a,
            cell.files.b,
            cell.files.both,
            cell.files.only_a,
            _ratio(cell.files.jaccard),
            cell.tests.a,
            cell.tests.b,
            cell.tests.both,
            cell.tests.only_a,
            _ratio(cell.tests.jaccard),
            cell.passes_a_not_b,
        )
        for row in matrix.rows
        for cell in row
        if cell is not None
    ]
    return _csv(f"{project.slug}-backend-matrix.csv", MATRIX_COLUMNS, rows)


@require_safe
@project_download
@cache_control(private=True)
def pair_files_csv(request: HttpRequest, project: Project) -> HttpResponse:
    """The test files in one backend's current run and not in the other's, both ways."""
    pair = _pair(request, project)
    if pair is None:
        return redirect("project-matrix", slug=project.slug)
    rows = [(file, pair.a, pair.b) for file in pair.files_only_a]
    rows += [(file, pair.b, pair.a) for file in pair.files_only_b]
    name = f"{project.slug}-files-{pair.a}-vs-{pair.b}.csv"
    return _csv(name, ("file", "runs_on", "not_on"), rows)


@require_safe
@project_download
@cache_control(private=True)
def pair_tests_csv(request: HttpRequest, project: Project) -> HttpResponse:
    """The tests passing on one backend and not on the other, both ways, with the outcome
    there ("not run": not in its current run) and its skip or failure reason there."""
    pair = _pair(request, project)
    if pair is None:
        return redirect("project-matrix", slug=project.slug)
    rows = [
        (t.test, t.file, on, other, t.there or "not run", t.reason or "")
        for tests, on, other in (
            (pair.passes_only_a, pair.a, pair.b),
            (pair.passes_only_b, pair.b, pair.a),
        )
        for t in tests
    ]
    name = f"{project.slug}-passing-{pair.a}-vs-{pair.b}.csv"
    header = ("test", "file", "passes_on", "not_on", "outcome_there", "reason_there")
    return _csv(name, header, rows)


GAP_COLUMNS = (
    "backend",
    "test",
    "file",
    "state",
    "reason",
    "issues",
    "tracking",
    "opened",
    "owners",  # the columns before it kept their places when it came
    "also_failing",  # the other backends failing the test, its family's first
    "history",  # its test's state from history there: flaky, broken or empty
    # The suite the reference runs the test in. A suite never run on a backend is one row of
    # its own first: ``test`` and ``file`` empty, ``state`` its cell's (never_ran, excluded),
    # ``reason`` "N tests missing" (and an exclusion's reason), ``issues`` the exclusion's.
    "suite",
)


@require_safe
@project_download
@cache_control(private=True)
def gaps_csv(request: HttpRequest, project: Project) -> HttpResponse:
    """The gaps page's first list whole: open gaps as its query string filters and sorts them
    (opened since its day, or every open gap with ``open=1``)."""
    _, query, filters = gaps_query(request, project)
    since = None if query["open"] else query["since"]
    filters, unrun = selectors.gaps_folded(project=project, query=filters)
    _, gaps = selectors.open_gaps_sorted(
        project=project, query=replace(filters, since=since), sort=query["sort"] or ""
    )
    return _csv(f"{project.slug}-gaps.csv", GAP_COLUMNS, _gap_rows(project, gaps, unrun))


def _gap_rows(project: Project, gaps, unrun) -> Iterator[tuple]:
    for suite in unrun:
        missing = f"{suite.missing} test{'' if suite.missing == 1 else 's'} missing"
        yield (
            suite.backend,
            "",
            "",
            suite.status,
            f"{missing}: {suite.reason}" if suite.reason else missing,
            suite.issue_url,
            "",
            "",
            "",
            "",
            "",  # history: a suite's row is no test's
            suite.suite,
        )
    for line in selectors.open_gap_lines(project=project, gaps=gaps):
        yield (
            line.backend,
            line.test,
            line.file,
            line.state,
            line.reason,
            " ".join(line.issues),
            line.tracking,
            line.opened_at.date().isoformat(),
            " ".join(line.owners),
            " ".join(line.also_failing),
            line.history,
            line.suite,
        )


SUITE_COLUMNS = (
    "suite",
    "backend",
    "status",
    "reason",
    "issue",
    "last_run",  # when its newest run started (UTC); empty: none in the window
    "pass_rate",  # greens over its last finished runs; empty: none
    "timeouts",
    "greens_in_a_row",
    "tier",  # empty where the page shows none: excluded, or no run
)


@require_safe
@project_download
@cache_control(private=True)
def suites_csv(request: HttpRequest, project: Project) -> HttpResponse:
    """The suites matrix (docs/suites.md), one row per suite and backend: the page's and the
    API's one read (``selectors.suite_matrix``)."""
    matrix = selectors.suite_matrix(project=project)
    rows = [
        (
            row.name,
            each.backend,
            each.cell.status,
            each.cell.reason,
            each.cell.issue_url,
            each.cell.last.started_at.isoformat() if each.cell.last else "",
            _ratio(each.cell.health.pass_rate),
            each.cell.health.timeouts,
            each.cell.health.consecutive_greens,
            each.cell.tier if each.cell.last and each.cell.status != "excluded" else "",
        )
        for row in matrix.rows
        for each in row.cells
    ]
    return _csv(f"{project.slug}-suites.csv", SUITE_COLUMNS, rows)


def _pair(request: HttpRequest, project: Project) -> selectors.PairLists | None:
    form = PairQuery(request.GET, project=project)
    if not form.is_valid():
        return None
    return selectors.backend_pair(
        project=project, a=form.cleaned_data["a"], b=form.cleaned_data["b"]
    )


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _csv(filename: str, header: Iterable[str], rows: Iterable[Iterable]) -> HttpResponse:
    # Written to a string, then set once: a write per row into the response encodes each row
    # apart.
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(header)
    writer.writerows([_safe(value) for value in row] for row in rows)
    response = HttpResponse(text.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _safe(value):
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
