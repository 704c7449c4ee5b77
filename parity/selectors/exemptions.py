"""The exemptions page: a project's triages (every target: a test, a reason, a pattern), filtered
and a page at a time, each with its latest probe outcome per backend (does it pass now?), and
for one backend the test files CI runs there and the file-level exemptions that took files out
of its run."""

import re
from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet

from parity.definitions import triages_on_backend, triages_unexpired, untracked_q
from parity.models import (
    Backend,
    BackendState,
    FileCell,
    Gap,
    GapState,
    IssueState,
    ProbeOutcome,
    Project,
    TestCase,
    Triage,
    TriageLapse,
)
from parity.pure.attributes import ConditionError, condition_parse
from parity.pure.globs import (
    file_matches,
    key_parts,
    pattern_literal,
    pattern_regex,
    pattern_shape,
)
from parity.selectors.fragments import sort_order
from parity.selectors.manifest import SKIPPING_KINDS, Exemption, manifest_build


def triages_list(
    *, project: Project, stale: bool | None = None, backend: Backend | None = None
) -> QuerySet[Triage]:
    """Triages of a project (its exemptions), newest first, with whether each is stale (no open
    gap matches it): the API's list. With ``backend``, those that apply to it: its own, its
    family's (a variant's) and every backend's."""
    triages = Triage.objects.filter(project=project)
    if stale is not None:
        triages = triages.filter(stale=stale)
    if backend is not None:
        triages = triages.filter(
            pk__in=Triage.objects.filter(project=project).filter(triages_on_backend(backend))
        )
    return (
        triages.select_related("test", "reason", "issue", "created_by")
        .prefetch_related("backends")
        .order_by("-created_at", "-pk")
    )


@dataclass(frozen=True)
class FileExemption:
    exemption: Exemption
    files: list[str]  # the reference's test files it removed from the backend's run


@dataclass(frozen=True)
class BackendFiles:
    """What ``GET …/manifest/?backend=`` gives CI: the test files the backend must run."""

    backend: str
    reference: str
    files: list[str]
    durations: dict[str, float]  # seconds per file, for the files with history
    reference_files: int  # test files in the reference's current run
    removed: list[FileExemption]  # file-level exemptions, each with the files it removed
    ran: frozenset[str] = frozenset()  # files with a test in the backend's current run

    @property
    def rows(self) -> list[tuple[str, float | None, bool]]:
        """Each file with its duration (None: no history), and whether the backend's current
        run ran it."""
        return [(file, self.durations.get(file), file in self.ran) for file in self.files]

    @property
    def not_run(self) -> int:
        """Files CI is told to run that the backend's current run did not."""
        return sum(1 for file in self.files if file not in self.ran)

    @property
    def ran_count(self) -> int:
        """Files CI is told to run that the backend's current run ran."""
        return len(self.files) - self.not_run

    @property
    def removing(self) -> list[FileExemption]:
        """The file-level exemptions that leave some file of the reference's run out."""
        return [r for r in self.removed if r.files]

    @property
    def idle(self) -> list[FileExemption]:
        """Those that name no file of the reference's current run (renamed or gone files)."""
        return [r for r in self.removed if not r.files]


@dataclass(frozen=True)
class ExemptionsPage:
    triages: Page  # of Triage, with test, reason, issue, created_by and backends
    files: BackendFiles | None  # None: no backend chosen, or the project has no reference
    sort: str = "-made"  # in force


# ``?sort=`` columns of the exemptions page (``fragments.sort_order``); ties newest first.
EXEMPTION_SORTS = {
    "kind": ("kind", "-created_at", "-pk"),
    "expires": ("expires_on", "-created_at", "-pk"),
    "made": ("created_at", "pk"),
}


def exemptions_list(
    *,
    project: Project,
    backend: str | None = None,
    kind: str | None = None,
    expired: bool | None = None,
    stale: bool | None = None,
    issue_closed: bool | None = None,
    sort: str = "",
    passes_now: bool | None = None,
) -> QuerySet[Triage]:
    """Triages, newest first (or by ``sort``: ``EXEMPTION_SORTS``), each with its probe
    outcomes (``probes``, by backend). ``backend``: those that apply there (naming it, or
    naming no backend: every backend). ``expired``: past their expiry day, today (not as the
    engine last applied them: this page says what CI gets now). ``issue_closed``: those whose
    issue is (or is not) closed at its tracker: a closed one tracks nothing any more.
    ``passes_now``: those whose every test passed in a backend's latest probe run (on
    ``backend``, when given)."""
    triages = Triage.objects.filter(project=project)
    if backend:
        named = Triage.backends.through.objects.filter(triage=OuterRef("pk"))
        triages = triages.filter(~Exists(named) | Exists(named.filter(backend__name=backend)))
    if kind:
        triages = triages.filter(kind=kind)
    if expired is not None:
        unexpired = triages_unexpired()
        triages = triages.filter(~unexpired if expired else unexpired)
    if stale is not None:
        triages = triages.filter(stale=stale)
    if issue_closed is not None:
        closed = Q(issue__state=IssueState.CLOSED)
        triages = triages.filter(closed if issue_closed else ~closed)
    if passes_now is not None:
        passing = ProbeOutcome.objects.filter(triage=OuterRef("pk"), tests__gt=0, passed=F("tests"))
        if backend:
            passing = passing.filter(backend__name=backend)
        triages = triages.filter(Exists(passing) if passes_now else ~Exists(passing))
    probes = ProbeOutcome.objects.select_related("backend").order_by("backend__name")
    return (
        triages.select_related("test", "reason", "issue", "created_by")
        .prefetch_related("backends", Prefetch("probes", queryset=probes))
        .order_by(*sort_order(sort, EXEMPTION_SORTS, "-made")[1])
    )


def exemptions_page(
    *,
    project: Project,
    filters: dict,
    files_backend: str | None,
    page: int = 1,
    per_page: int = 50,
) -> ExemptionsPage:
    """A page of ``exemptions_list(**filters)`` (its count, its rows, their backends, their
    probe outcomes: four queries) and the files of ``files_backend`` (nine more)."""
    paginator = Paginator(exemptions_list(project=project, **filters), per_page)
    triages = paginator.get_page(page)
    triages.object_list = list(triages.object_list)  # read once, with its prefetches
    triages_lapse_note(project=project, triages=triages.object_list)
    return ExemptionsPage(
        triages=triages,
        files=_backend_files(project=project, name=files_backend),
        sort=sort_order(filters.get("sort", ""), EXEMPTION_SORTS, "-made")[0],
    )


def triages_lapse_note(*, project: Project, triages: list[Triage]) -> None:
    """Set ``lapse`` on each of ``triages`` (read with their backends): for a conditioned one
    whose condition holds on no current run of the backends it names (their variants too;
    none named: every backend), what those runs are, so the page says it can go; else "".
    Two queries, none when no triage on the list has a condition."""
    for triage in triages:
        triage.lapse = ""
    conditioned = [t for t in triages if t.condition]
    if not conditioned:
        return
    states = BackendState.objects.filter(project=project, current_run__isnull=False)
    runs = {
        backend: (name, family, {**(own or {}), **(run or {})})
        for backend, name, family, own, run in states.values_list(
            "backend_id",
            "backend__name",
            "backend__family_id",
            "backend__attributes",
            "current_run__attributes",
        )
    }
    lapsed = set(
        TriageLapse.objects.filter(triage__in=conditioned).values_list("triage_id", "backend_id")
    )
    for triage in conditioned:
        named = {b.pk for b in triage.backends.all()}
        scope = [b for b, (_, family, _) in runs.items() if not named or {b, family} & named]
        if scope and all((triage.pk, b) in lapsed for b in scope):
            triage.lapse = _lapse_note(triage.condition, [runs[b] for b in sorted(scope)])


def _lapse_note(condition: str, runs: list[tuple]) -> str:
    try:
        keys = sorted(condition_parse(condition).keys())
    except ConditionError:
        keys = []
    where = "; ".join(
        f"{name}: "
        + (", ".join(f"{k}={attrs[k]}" for k in keys if k in attrs) or "no such attributes")
        for name, _, attrs in runs
    )
    return (
        f"lapsed: {condition} holds on no current run of the backends it names ({where}); remove it"
    )


def _backend_files(*, project: Project, name: str | None) -> BackendFiles | None:
    backend = Backend.objects.filter(project=project, name=name).first() if name else None
    if backend is None or project.reference_backend_id is None:
        return None
    # The manifest is the one definition of what a backend runs: this page shows what CI gets.
    manifest = manifest_build(project=project, backend=backend)
    return BackendFiles(
        backend=manifest.backend,
        reference=manifest.reference,
        files=manifest.files,
        durations=manifest.durations,
        reference_files=len(manifest.files) + len(manifest.left_out),
        removed=[
            FileExemption(
                exemption=exemption,
                files=[f for f in manifest.left_out if file_matches(exemption.regex, f)],
            )
            for exemption in manifest.exemptions
            if exemption.file_level and exemption.kind in SKIPPING_KINDS
        ],
        ran=_files_run(backend),
    )


def _files_run(backend: Backend) -> frozenset[str]:
    """The files with a test in the backend's current run (its heatmap cells). One query."""
    ran = Q(passed__gt=0) | Q(failed__gt=0) | Q(error__gt=0) | Q(skipped__gt=0)
    cells = FileCell.objects.filter(ran, backend=backend)
    return frozenset(cells.values_list("file", flat=True))


@dataclass(frozen=True)
class ExemptionPreview:
    """What a new exemption's pattern would cover, before it is saved."""

    tests: int  # the project's tests it names, on any backend
    files: int  # their test files
    gaps: int  # open gaps of those tests on the backends named (every backend: none named)
    untracked: int  # of those, the gaps no issue tracks and no triage calls intended


def exemption_preview(*, project: Project, match: str, backends: list[str]) -> ExemptionPreview:
    """How many tests (and files) ``match`` names and how many open gaps it would cover on
    ``backends``: the new-exemption form's preview. Two queries, each one pass over the
    project's tests at most: one test's or one file's pattern is found by equality, a glob by
    a substring every match contains, then its regular expression (``parity.pure.globs``).
    ``match`` must be a valid pattern (``pattern_check``)."""
    tests = TestCase.objects.filter(project=project).filter(_pattern_q(match))
    counted = tests.aggregate(tests=Count("pk"), files=Count("file", distinct=True))
    gaps = Gap.objects.filter(project=project, is_open=True, test__in=tests.values("pk")).exclude(
        state=GapState.REFERENCE_MISSING
    )
    if backends:
        gaps = gaps.filter(backend__name__in=backends)
    gap_counts = gaps.aggregate(gaps=Count("pk"), untracked=Count("pk", filter=untracked_q()))
    return ExemptionPreview(**counted, **gap_counts)


def _pattern_q(match: str) -> Q:
    shape = pattern_shape(match)
    if shape == "file":
        return Q(file=match.strip())
    if shape == "key":
        return Q(key=match.strip())
    # Every key the regex matches contains the literal: a cheap test first.
    return Q(key__contains=pattern_literal(match), key__regex=pattern_regex(match))


def patterns_covered(*, project: Project, patterns: list[str]) -> dict[str, int]:
    """How many of the project's stored tests each pattern names (valid patterns only): what an
    imported list's report says each entry matched. One pass over the project's test keys: a
    test's ID, a file and ``**::Class::name`` are looked up by what they equal (as the engine
    finds them, ``globs.key_parts``); a glob is tried on its file's keys when it names one file,
    on the keys holding its literal otherwise. A list of thousands of globs costs one read."""
    shapes = {pattern.strip(): pattern_shape(pattern) for pattern in patterns}
    covered = dict.fromkeys(shapes, 0)
    if not shapes:
        return covered
    by_file: dict[str, list[str]] = {}
    # Read whole, not by a server-side cursor (which a transaction pooler cannot keep between
    # statements): every key is held in by_file anyway, so a cursor would save no memory.
    keys = TestCase.objects.filter(project=project).values_list("key", flat=True)
    for key in keys:
        file, anyfile = key_parts(key)
        by_file.setdefault(file or "", []).append(key)
        for named in (key, file, anyfile):
            if named in covered and shapes[named] != "glob":
                covered[named] += 1
    every_key = [key for file_keys in by_file.values() for key in file_keys]
    for pattern, shape in shapes.items():
        if shape != "glob":
            continue
        file, sep, _ = pattern.partition("::")
        one_file = sep and not any(c in file for c in "*?")
        candidates = by_file.get(file, []) if one_file else every_key
        literal, regex = pattern_literal(pattern), re.compile(pattern_regex(pattern))
        covered[pattern] = sum(1 for k in candidates if literal in k and regex.match(k))
    return covered
