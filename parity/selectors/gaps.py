"""Gaps, read from the engine's ``Gap`` rows: the gaps endpoint's list (open ones, or those
closed since a date) and the gaps page (new since a day and still open, fixed since then, a
page of each)."""

import datetime
import operator
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import reduce

from django.core.paginator import Page, Paginator
from django.db.models import Count, Q, QuerySet

from parity.definitions import (
    INFRA_STATES,
    HistoryStanding,
    history_kept,
    history_standings,
    history_state_expr,
    standing,
    untracked_q,
)
from parity.models import Backend, Gap, GapState, Project, Reason
from parity.pure.normalize import display_id
from parity.pure.skip_rules import NO_REASON
from parity.read_replica import read_cursor
from parity.selectors.classification import UNCATEGORIZED_LABEL
from parity.selectors.families import failing_on, gaps_also_failing_attach
from parity.selectors.fragments import sort_order
from parity.selectors.owners import files_owners, gaps_owned, gaps_owners_attach
from parity.selectors.run_files import unrun_files
from parity.selectors.suite_names import suite_reference_name, suites_by_reference_name

# States whose gaps say why their file gave no result (run health's); the page shows how its
# run ended.
UNRUN_STATES = INFRA_STATES

# ``?sort=`` columns of the gaps lists (``fragments.sort_order``); ties by backend and test.
GAP_SORTS = {
    "backend": ("backend__name", "test__key", "pk"),
    "test": ("test__key", "backend__name", "pk"),
    "state": ("state", "backend__name", "test__key", "pk"),
    "reason": ("reason__text", "backend__name", "test__key", "pk"),
    "opened": ("opened_at", "backend__name", "test__key", "pk"),
    "fixed": ("closed_at", "backend__name", "test__key", "pk"),
}


@dataclass(frozen=True)
class GapsQuery:
    """Which gaps a list holds (``gaps_list``), read once from the request by the gaps page
    and its CSV (``parity.dashboard.views.gaps_query``) or the API (``GapsQuery.gaps_query`` of
    ``parity.api.serializers``). None is no filter."""

    backend: str | None = None
    # One state; by default every one but ``reference_missing`` (tests the reference does not
    # run: outside the score, listed only when asked for by name).
    state: str | None = None
    tracked: bool | None = None  # False: untracked (intended gaps never are)
    intended: bool | None = None
    tracked_closed: bool | None = None  # True: tracked, every cited issue closed
    since: datetime.datetime | None = None  # opened on or after it
    closed_since: datetime.datetime | None = None  # the gaps fixed since then, not open ones
    file: str | None = None  # of one test file
    reason: int | None = None  # skipped for one reason (a group of the triage queue)
    # Skipped for a reason of this category, as the reasons page labels it.
    category: str | None = None
    owner: str | None = None  # of the test files this code owner owns
    # Tests declared not applicable on a backend are no gaps there: listed only with True
    # (None: both).
    not_applicable: bool | None = False
    # Of tests in this state from history on their backend (flaky or broken): none when the
    # project keeps no states from history.
    history: str | None = None
    # Only the tests the reference runs in this suite (its logical name: docs/suites.md).
    suite: str | None = None
    # Suites never run on a backend (``parity.selectors.suite_gaps.gaps_folded``): their
    # ``missing`` gaps there are one row each, folded out of an open list.
    folded: tuple = ()


OPEN_GAPS = GapsQuery()  # the default: every open gap the score counts


def gaps_list(*, project: Project, query: GapsQuery = OPEN_GAPS) -> QuerySet[Gap]:
    """Open gaps, or with ``query.closed_since`` the gaps fixed since then, filtered by
    ``query`` (``GapsQuery``): by when (``_when``), where (``_where``) and how they are
    triaged (``_triaged``). ``gaps_owners_attach`` gives a page of them their owners. Each
    gap of a project that keeps states from history carries its test's there
    (``history_state``: flaky, broken or "")."""
    gaps = _when(Gap.objects.filter(project=project), query)
    gaps = _triaged(_where(gaps, query, project=project), query)
    if history_kept(project):
        gaps = gaps.annotate(history_state=history_state_expr())
        if query.history:
            gaps = gaps.filter(history_state=query.history)
    elif query.history:
        gaps = gaps.none()
    return (
        gaps.select_related("backend", "test__reference_suite", "reason", "triage__issue")
        .prefetch_related("reason__issues")
        .order_by("backend__name", "test__key", "pk")
    )


def _when(gaps: QuerySet[Gap], query: GapsQuery) -> QuerySet[Gap]:
    if query.closed_since is not None:
        gaps = gaps.filter(is_open=False, closed_at__gte=query.closed_since)
    else:
        gaps = gaps.filter(is_open=True)
    if query.since is not None:
        gaps = gaps.filter(opened_at__gte=query.since)
    return gaps


def _where(gaps: QuerySet[Gap], query: GapsQuery, *, project: Project) -> QuerySet[Gap]:
    if query.backend:
        gaps = gaps.filter(backend__name=query.backend)
    if query.file:
        gaps = gaps.filter(test__file=query.file)
    if query.reason is not None:
        gaps = gaps.filter(reason_id=query.reason)
    if query.category is not None:
        gaps = gaps.filter(_category_q(query.category), state=GapState.SKIPPED)
    if query.owner:
        gaps = gaps_owned(gaps, project=project, owner=query.owner)
    if query.suite:
        name = suite_reference_name(project=project, suite=query.suite)
        gaps = gaps.filter(test__reference_suite__suite=name)
    if query.folded:
        gaps = gaps.exclude(reduce(operator.or_, (suite.fold_q for suite in query.folded)))
    return gaps


def _triaged(gaps: QuerySet[Gap], query: GapsQuery) -> QuerySet[Gap]:
    if query.state:
        gaps = gaps.filter(state=query.state)
    else:  # outside the score: listed only when asked for by name
        gaps = gaps.exclude(state=GapState.REFERENCE_MISSING)
    if query.tracked is True:
        gaps = gaps.filter(tracked=True)
    elif query.tracked is False:
        gaps = gaps.filter(untracked_q())
    if query.intended is not None:
        gaps = gaps.filter(intended=query.intended)
    if query.tracked_closed is not None:
        gaps = gaps.filter(tracked_closed=query.tracked_closed)
    if query.not_applicable is not None:
        gaps = gaps.filter(not_applicable=query.not_applicable)
    return gaps


def gaps_window(gaps: QuerySet[Gap], *, offset: int, limit: int) -> tuple[int, list[Gap]]:
    """``limit`` of ``gaps_list``'s gaps from ``offset`` on, and how many there are in all.

    They are ordered by backend first, so a count per backend says which backends the window
    spans, and only their gaps are sorted by test: a page's cost follows its backends, not the
    project. Sorting every open gap with its test's key, for a page of the first few hundred,
    was the endpoint's largest cost in a big project."""
    assert gaps.query.order_by[0] == "backend__name", "ordered by backend first"
    counts = dict(gaps.order_by().values_list("backend_id").annotate(n=Count("*")))
    by_name = Backend.objects.filter(pk__in=counts).order_by("name").values_list("pk", flat=True)
    total, skipped, spanned = 0, 0, []
    for backend_id in by_name:
        n = counts[backend_id]
        if total + n <= offset:
            skipped += n  # wholly before the window
        elif total < offset + limit:
            spanned.append(backend_id)
        total += n
    if not spanned:
        return total, []
    # The window's ids first, sorted with their tests' keys alone; then its rows, whole.
    start = offset - skipped
    window = gaps.filter(backend_id__in=spanned).values_list("pk", flat=True)[start : start + limit]
    return total, list(gaps.filter(pk__in=list(window)))


def gap_is_stale(gap: Gap) -> bool:
    """A fixed gap whose triage now matches no open gap: the triage can be removed."""
    return not gap.is_open and gap.triage is not None and gap.triage.stale


@dataclass(frozen=True)
class GapsPage:
    new: Page  # of Gap, with backend, test, reason (and its issues) and triage (and its issue)
    fixed: Page  # of Gap, the same
    new_sort: str = "-opened"  # the sort in force of each list
    fixed_sort: str = "-fixed"
    # Open gaps of any age under the same filters, when ``new`` keeps only the recent ones:
    # the page says how many the date leaves out.
    open_total: int | None = None
    # The project keeps states from history: the page offers their filter.
    history_kept: bool = False


def open_gaps_sorted(
    *, project: Project, query: GapsQuery, sort: str = ""
) -> tuple[str, QuerySet[Gap]]:
    """The open gaps ``query`` lists (opened since ``query.since``; every open gap when None),
    sorted by ``sort`` (``GAP_SORTS``; newest first by default): the gaps page's first list,
    and its CSV whole. Returns the sort in force too."""
    columns = {k: v for k, v in GAP_SORTS.items() if k != "fixed"}
    sort, order = sort_order(sort, columns, "-opened")
    return sort, gaps_list(project=project, query=query).order_by(*order)


@dataclass(frozen=True, slots=True)
class GapLine:
    """An open gap as a list written whole shows it (the gaps CSV): values, not models."""

    backend: str
    test: str  # its real ID (``display_id``)
    file: str
    state: str
    reason: str  # "" for none
    issues: list[str]  # where it is tracked: its reason's issues, then its triage's (URL or key)
    intended: bool
    tracked: bool
    opened_at: datetime.datetime
    owners: list[str]  # its file's code owners
    also_failing: list[str]  # the other backends failing its test, its family's first
    flaky: bool = False  # its test is flaky on the backend (states from history)
    history: str = ""  # its test's state from history there: flaky, broken or ""
    suite: str = ""  # the (logical) suite the reference runs its test in; "" for none

    @property
    def tracking(self) -> str:
        """Its standing's triage (``parity.definitions.standing``): untracked, tracked,
        intended or flaky; ``lost`` for a test whose file infrastructure lost (no gap of the
        backend's to triage)."""
        found = standing(
            gap_state=self.state, tracked=self.tracked, intended=self.intended, flaky=self.flaky
        )
        return found.triage or found.outcome


# Read as values: a model per gap and per row it selects (325k objects for 102k open gaps)
# was most of the CSV's time.
_LINE_FIELDS = (
    "backend__name",
    "test_id",
    "test__file",
    "test__class_name",
    "test__name",
    "state",
    "reason_id",
    "reason__text",
    "triage__issue__key",
    "triage__issue__url",
    "intended",
    "tracked",
    "opened_at",
    "flaky",
    "test__reference_suite__suite",
)
LINES_FETCHED = 2000  # rows turned into Python objects at a time


def open_gap_lines(*, project: Project, gaps: QuerySet[Gap]) -> Iterator[GapLine]:
    """``gaps`` (``open_gaps_sorted``'s, in its order) as ``GapLine``s. Four queries for any
    length (five when a backend has variants): the gaps, their reasons' issues, the files'
    owners, where their tests fail; one more for the suites' map when a test has a suite. Read
    by a plain cursor a batch at a time: Postgres sends the result whole (about the CSV's size)
    and Python holds one batch of rows; a server-side cursor would not survive a transaction
    pooler (docs/operations.md, "Behind PgBouncer")."""
    issues = _reason_issue_refs(project)
    owners = files_owners(project=project)
    variants = Backend.objects.filter(project=project, family__isnull=False).exists()
    failing = failing_on(project=project, tests=gaps.values("test_id"), variants=variants)
    suites = _SuiteNames(project)
    # A project keeping states from history lists its gaps with theirs (``gaps_list``).
    kept = "history_state" in gaps.query.annotations
    fields = (*_LINE_FIELDS, "history_state") if kept else _LINE_FIELDS
    sql, params = gaps.values_list(*fields).query.sql_with_params()
    with read_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(LINES_FETCHED):
            for row in rows:
                yield _line(row, issues=issues, owners=owners, failing=failing, suites=suites)


class _SuiteNames:
    """The logical suite of a name on the reference, the map read at the first gap with one."""

    def __init__(self, project: Project) -> None:
        self.project, self.names = project, None

    def logical(self, name: str) -> str:
        if self.names is None:
            self.names = suites_by_reference_name(project=self.project)
        return self.names.get(name, name)


def _line(row: tuple, *, issues: dict, owners: dict, failing, suites: _SuiteNames) -> GapLine:
    backend, test_id, file, class_name, name, state, reason_id, reason = row[:8]
    issue_key, issue_url, intended, tracked, opened_at, flaky, suite = row[8:15]
    history = row[15] if len(row) > 15 else ""
    cited = issues.get(reason_id, {})
    refs = list(cited.values())
    if issue_key is not None and issue_key not in cited:
        refs.append(issue_url or issue_key)
    return GapLine(
        backend=backend,
        test=display_id(file, class_name, name),
        file=file,
        state=state,
        reason=reason or "",
        issues=list(dict.fromkeys(refs)),
        intended=intended,
        tracked=tracked,
        opened_at=opened_at,
        owners=owners.get(file, []),
        also_failing=failing.also(backend=backend, test_id=test_id).backends,
        flaky=flaky,
        history=history,
        suite=suites.logical(suite) if suite else "",
    )


def _reason_issue_refs(project: Project) -> dict[int, dict[str, str]]:
    """Per reason of the project citing issues, each issue's key -> its reference (URL, else
    key), by key as ``issue_infos`` lists them."""
    links = Reason.issues.through.objects.filter(reason__project=project).values_list(
        "reason_id", "trackingissue__key", "trackingissue__url"
    )
    refs: dict[int, dict[str, str]] = {}
    for reason_id, key, url in sorted(links, key=lambda link: link[1]):
        refs.setdefault(reason_id, {})[key] = url or key
    return refs


def _category_q(label: str) -> Q:
    """The gaps whose reason has the category labelled ``label`` (``skip_categories_current``)."""
    if label == NO_REASON.category:
        return Q(reason__isnull=True)
    return Q(reason__category="" if label == UNCATEGORIZED_LABEL else label)


def gaps_page(
    *,
    project: Project,
    since: datetime.datetime,
    filters: GapsQuery,
    open_any_age: bool = False,
    page: int = 1,
    fixed_page: int = 1,
    per_page: int = 50,
    sort: str = "",
) -> GapsPage:
    """Gaps opened since ``since`` and still open (every open gap with ``open_any_age``), and
    gaps fixed since ``since``, each list sorted by ``sort`` where it has that column (newest
    first otherwise). ``filters``: which gaps (a ``GapsQuery``, whose dates ``since`` sets).
    Four queries a page: its count, its ids, its rows, their reasons' issues; one for both
    pages' files' code owners (each gap gets ``file_owners``); one for how the files of crashed,
    timed out, empty or unrun gaps ran (each such open gap gets ``unrun``, a
    ``parity.selectors.run_files.UnrunFile``); and without ``open_any_age``, one count of the
    open gaps of any age (``open_total``); one for where else the open gaps' tests fail (two
    when one is a variant's) (each gets ``also_failing``,
    ``parity.selectors.families.AlsoFailing``)."""
    any_age = replace(filters, since=None, closed_since=None)  # open, of any age
    recent = any_age if open_any_age else replace(any_age, since=since)
    new_sort, new = open_gaps_sorted(project=project, query=recent, sort=sort)
    fixed_sort, fixed_order = sort_order(sort, GAP_SORTS, "-fixed")
    fixed = gaps_list(project=project, query=replace(any_age, closed_since=since))
    new_page = _page(new, page, per_page)
    fixed_page = _page(fixed.order_by(*fixed_order), fixed_page, per_page)
    _unrun_attach(project, new_page.object_list)
    gaps_history_attach(new_page.object_list, project=project)
    gaps_also_failing_attach(new_page.object_list, project=project)
    gaps_owners_attach([*new_page.object_list, *fixed_page.object_list], project=project)
    return GapsPage(
        new=new_page,
        fixed=fixed_page,
        new_sort=new_sort,
        fixed_sort=fixed_sort,
        open_total=None if open_any_age else gaps_list(project=project, query=any_age).count(),
        history_kept=history_kept(project),
    )


def gaps_history_attach(gaps: list[Gap], *, project: Project) -> None:
    """Each open gap of ``gaps`` gets ``history``: its test's ``HistoryStanding`` on its
    backend (None: neither flaky nor broken), for its "broken since" or "flaky" mark. One query
    when some are in a state (``gaps_list`` says which); none for a project that keeps no
    states from history."""
    marked = [gap for gap in gaps if getattr(gap, "history_state", "")]
    found: dict[tuple[int, int], HistoryStanding] = {}
    if marked:
        found = history_standings(
            project=project,
            backend_ids=sorted({gap.backend_id for gap in marked}),
            test_ids=sorted({gap.test_id for gap in marked}),
        )
    for gap in gaps:
        gap.history = found.get((gap.backend_id, gap.test_id))


def _unrun_attach(project: Project, gaps: list[Gap]) -> None:
    unrun = [gap for gap in gaps if gap.state in UNRUN_STATES]
    if not unrun:
        return
    files = unrun_files(project=project, files=sorted({gap.test.file for gap in unrun}))
    for gap in unrun:
        gap.unrun = files.get((gap.backend.name, gap.test.file))


def _page(gaps: QuerySet[Gap], number: int, per_page: int) -> Page:
    """Page ``number`` of ``gaps``: its ids sorted and cut first, then its rows whole by id.
    Sorting every open gap with the rows it selects carried each one's test, reason and triage
    through the joins and the sort for a page of 50."""
    page = Paginator(gaps.values_list("pk", flat=True), per_page).get_page(number)
    ids = list(page.object_list)
    found = {gap.pk: gap for gap in gaps.filter(pk__in=ids).order_by()} if ids else {}
    page.object_list = [found[pk] for pk in ids if pk in found]  # one closed since drops out
    return page
