"""What a project's digest says about one ISO week, read from the engine's tables. Reads only.

Times are the engine's event times (``Gap.opened_at``/``closed_at`` and ``Snapshot.at``: when
CI ran the run that caused them), as on the dashboard's gaps page, so this week's new and fixed
gaps here are that page's "since Monday" lists.

- Scores: per backend (not the reference), its latest snapshot before the week's end, and the
  change from its latest one before the week's start.
- New gaps: opened during the week and still open at its end, by backend and state, untracked
  first. ``reference_missing`` rows are outside the score and left out, as on the gaps page.
- New gaps by family: for a backend with variants (``Backend.family``), the week's new gaps of
  its variants added up, and on how many of them: "rocm: 5 new gaps, on 2 of 3 arches".
- Fixed: gaps closed during the week.
- New skip reasons: canonical skip reasons that covered tests in a current run for the first
  time this week (``ReasonDaily``: so a reason seen only on a feature branch is not news).
- Issue link changes: ``parity.selectors.reason_links``.
- Tracked by closed issues: open gaps whose every cited issue is closed (``Gap.tracked_closed``,
  kept by the engine from the tracker sync), by backend and issue, with the earliest closing:
  "5 tpu skips cite issues closed since 2 Mar 2026". Issue states keep no history, so a past
  week reads them as they are now, minus issues closed after that week ended.
- Skips by category: the current runs' skips per category of their reason (the project's skip
  rules, ``parity.selectors.classification``), with the gaps they cause, untracked apart. The
  roll-ups keep no categories per day, so a past week reads them as they are now.
- Uncovered: the gaps the week's runs uncovered, as their verdicts say (an exemption that
  lapsed, expired or was removed since the run before: ``parity.result_reads.week_uncovered``,
  which reads results, so the caller passes them in), one per backend and test.
- Flaky: per backend, the tests that entered flaky during the week (states from history,
  ``FlakyChange``), most surely flaky first (the Wilson lower bound of their window's failure
  rate, ``TestHistory.rank``, when they entered), and how many left flaky in it.
- Exemptions that pass now: per backend, the exemptions whose every test passed in its latest
  probe run (``ProbeOutcome``) that ran before the week's end: "3 tpu exemptions pass now".
"""

import datetime
from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Count, F, Min, Q

from parity.definitions import untracked_q
from parity.models import (
    Backend,
    FlakyChange,
    Gap,
    GapState,
    ProbeOutcome,
    Project,
    Reason,
    ReasonDaily,
    Snapshot,
    SuiteTierMove,
    Triage,
)
from parity.models.reasons import ReasonKind
from parity.pure.normalize import display_id
from parity.pure.scores import Definition
from parity.pure.suite_runs import move_of
from parity.pure.weeks import Week
from parity.selectors import IssueInfo, issue_infos
from parity.selectors.classification import CategoryCount, skip_categories_current
from parity.selectors.compare_views import CompareHeadline, compare_views_red
from parity.selectors.fragments import headline_score
from parity.selectors.owners import gaps_owned, owner_clean
from parity.selectors.reason_links import LinkChange, link_changes
from parity.selectors.suite_gaps import UnrunSuite, folded_q, suites_unrun, suites_unrun_counted
from parity.selectors.targets import TargetProgress, targets_progress
from parity.selectors.transitions import transitions_of_week

# What did not run (a crash, a timeout...) before what the backend never had.
STATE_ORDER = [
    GapState.FAILED,
    GapState.ERROR,
    GapState.CRASHED,
    GapState.TIMED_OUT,
    GapState.EMPTY,
    GapState.NOT_RUN,
    GapState.TRUNCATED,
    GapState.MISSING,
    GapState.SKIPPED,
]
TRACKING_ORDER = ["untracked", "tracked", "intended"]


@dataclass(frozen=True)
class ScoreRow:
    backend: str
    score: float | None  # None: no run with a score before the week's end
    before: float | None  # at the week's start; None: no run before it
    open_gaps: int
    untracked: int
    variants: tuple[str, ...] = ()  # a family's, which has no run of its own

    @property
    def change(self) -> float | None:
        if self.score is None or self.before is None:
            return None
        return self.score - self.before


@dataclass(frozen=True)
class GapRow:
    test_id: int
    test: str
    backend: str
    state: str
    tracking: str  # untracked | tracked | intended
    reason: str | None
    issues: list[IssueInfo]


@dataclass(frozen=True)
class GapGroup:
    state: str
    gaps: list[GapRow]  # at most PARITY_DIGEST_MAX_GAPS
    total: int
    untracked: int

    @property
    def more(self) -> int:
        return self.total - len(self.gaps)


@dataclass(frozen=True)
class BackendGaps:
    backend: str
    groups: list[GapGroup]

    @property
    def total(self) -> int:
        return sum(g.total for g in self.groups)


@dataclass(frozen=True)
class FamilyNewGaps:
    """A family's new gaps of the week: on how many of its variants (of those the digest
    covers)."""

    family: str
    total: int
    untracked: int
    variants: list[str]  # the variants with new gaps, by name
    of: int  # the family's variants the digest covers


@dataclass(frozen=True)
class NewReason:
    id: int
    reason: str
    backends: list[str]
    issues: list[IssueInfo]
    category: str = ""  # by the project's skip rules; "": none matched


@dataclass(frozen=True)
class ClosedIssueGaps:
    issue: IssueInfo
    gaps: int  # open gaps of the backend citing it (and only closed issues)


@dataclass(frozen=True)
class ClosedTracking:
    """A backend's open gaps whose every cited issue is closed: tracked by nothing any more."""

    backend: str
    total: int
    skipped: int  # of them, skips (the rest fail, error or are missing)
    since: datetime.datetime | None  # the earliest closing of the issues they cite
    issues: list[ClosedIssueGaps]  # most gaps first, at most PARITY_DIGEST_MAX_GAPS

    @property
    def noun(self) -> str:
        """What they are: "skips" when every one is skipped, else "gaps"."""
        word = "skip" if self.skipped == self.total else "gap"
        return word if self.total == 1 else f"{word}s"


@dataclass(frozen=True)
class PassingExemptions:
    """A backend's exemptions whose tests all passed in its latest probe run: remove them."""

    backend: str
    total: int
    probed_at: datetime.datetime  # when that probe run ran
    matches: list[str]  # what they name, at most PARITY_DIGEST_MAX_GAPS


@dataclass(frozen=True)
class DigestTransition:
    """A backend's run attributes changed this week: how many tests went each way."""

    id: int
    backend: str
    changed: list[tuple[str, str | None, str | None]]  # (key, before, after)
    counts: dict[str, int]  # by TransitionKind
    lapses: int  # conditioned exemptions that stopped or started holding
    at: datetime.datetime


@dataclass(frozen=True)
class UncoveredGapRow:
    """A gap a run of the week uncovered: untracked now, though no run opened it."""

    backend: str
    test: str
    test_id: int
    state: str
    exemption: int  # the exemption that covered it (a removed one's id too)
    why: str  # "expired 2026-12-01", "removed by alice on 2026-12-03"


@dataclass(frozen=True)
class FlakyTest:
    test: str
    test_id: int
    rank: float  # the Wilson lower bound of its window's failure rate as it entered flaky


@dataclass(frozen=True)
class FlakyWeek:
    """A backend's tests that entered flaky in the week (the first ``PARITY_DIGEST_MAX_GAPS``,
    ranked), how many did, and how many left flaky."""

    backend: str
    entered: list[FlakyTest]
    entered_total: int
    left_total: int

    @property
    def more(self) -> int:
        return self.entered_total - len(self.entered)


@dataclass(frozen=True)
class DigestTierMove:
    """A suite moved tier on a backend this week (``SuiteTierMove``, docs/suites.md)."""

    backend: str
    suite: str
    move: str  # promoted, demoted, recovered
    before: str
    after: str
    at: datetime.datetime  # when the run that moved it started


@dataclass(frozen=True)
class DigestContent:
    project: str
    week: Week
    reference: str | None
    backends: list[str]  # the subscription's filter; empty: every backend
    scores: list[ScoreRow]
    score_definition: Definition  # what the scores are (docs/scores.md)
    new_gaps: list[BackendGaps]
    fixed: list[GapRow]  # at most PARITY_DIGEST_MAX_GAPS
    fixed_total: int
    new_reasons: list[NewReason]
    link_changes: list[LinkChange] | None  # None: not known (no record at the week's start)
    closed_tracking: list[ClosedTracking]
    passes_now: list[PassingExemptions]
    # The current runs' skips per category of their reason, with the gaps they cause.
    skip_categories: list[CategoryCount] = field(default_factory=list)
    # "My gaps": a code owner's subscription narrows the gaps (new, fixed, tracked by closed
    # issues) to the test files the owner owns, and says how many of theirs are open.
    owner: str = ""
    owned_open: list["OwnedGaps"] = field(default_factory=list)
    new_by_family: list[FamilyNewGaps] = field(default_factory=list)
    variant_keys: list[str] = field(default_factory=list)  # what the project's variants are
    transitions: list[DigestTransition] = field(default_factory=list)  # oldest first
    # Targets at risk as the digest is made (no progress, or a forecast after the date).
    targets_at_risk: list[TargetProgress] = field(default_factory=list)
    uncovered: list[UncoveredGapRow] = field(default_factory=list)  # by backend, test
    flaky: list[FlakyWeek] = field(default_factory=list)  # by backend
    tier_moves: list[DigestTierMove] = field(default_factory=list)  # by backend, then time
    # The compare views with red tests as the digest is made (their kept figures), by name.
    compare_views: list[CompareHeadline] = field(default_factory=list)
    # Suites never run on a backend (or excluded) whose tests' missing gaps opened this week:
    # one line each, with ``missing`` the week's; those gaps are in no group of ``new_gaps``.
    unrun_suites: list[UnrunSuite] = field(default_factory=list)

    @property
    def new_total(self) -> int:
        return sum(b.total for b in self.new_gaps)

    @property
    def fixed_more(self) -> int:
        return self.fixed_total - len(self.fixed)

    @property
    def quiet(self) -> bool:
        """Nothing opened, fixed, new, relinked, upgraded or at risk: the digest says so in one
        line."""
        return not (
            self.new_total
            or self.fixed_total
            or self.new_reasons
            or self.link_changes
            or self.transitions
            or self.targets_at_risk
            or self.uncovered
            or self.flaky
            or self.tier_moves
            or self.compare_views
            or self.unrun_suites
        )


@dataclass(frozen=True)
class OwnedGaps:
    """A code owner's open gaps on one backend at the week's end (the gaps page's count)."""

    backend: str
    open: int
    untracked: int


def digest_content(
    *,
    project: Project,
    week: Week,
    backends: list[str] | None = None,
    owner: str = "",
    uncovered: list[UncoveredGapRow] | None = None,
) -> DigestContent:
    """The digest of ``week``; ``backends`` (names) narrows it to those backends, ``owner`` its
    gaps to the test files that code owner owns ("my gaps"). ``uncovered``: the week's
    (``parity.result_reads.week_uncovered``), narrowed here to ``backends``."""
    owner = owner_clean(owner)
    chosen = _backends(project, backends or [])
    ids = [b.pk for b in chosen]
    names = {b.pk: b.name for b in chosen}
    reference = Backend.objects.filter(pk=project.reference_backend_id).first()
    filtered = sorted(names.values()) if backends else []
    fixed = _fixed(project, ids, week, owner)
    unrun = [u for u in suites_unrun(project=project) if u.backend_id in names]
    new_gaps = _new_gaps(project, ids, week, owner, folded=folded_q(unrun))
    return DigestContent(
        project=project.slug,
        week=week,
        reference=reference.name if reference else None,
        backends=filtered,
        scores=_scores(project, chosen, week),
        score_definition=project.score_settings(),
        new_gaps=new_gaps,
        new_by_family=_by_family(new_gaps, chosen),
        variant_keys=list(project.variant_keys or []),
        fixed=fixed[: settings.PARITY_DIGEST_MAX_GAPS],
        fixed_total=len(fixed),
        new_reasons=_new_reasons(project, ids if backends else None, names, week),
        link_changes=link_changes(
            project_id=project.pk, week=week, backend_ids=ids if backends else None
        ),
        closed_tracking=_closed_tracking(project, ids, week, owner),
        passes_now=_passes_now(ids, week),
        skip_categories=skip_categories_current(project=project, backends=filtered or None),
        owner=owner,
        owned_open=_owned_open(project, ids, week, owner) if owner else [],
        transitions=_transitions(project, ids, week),
        targets_at_risk=[
            t
            for t in targets_progress(project=project, backends=[b.name for b in chosen])
            if t.at_risk
        ],
        uncovered=[u for u in uncovered or [] if u.backend in names.values()],
        flaky=_flaky(project, ids, week),
        tier_moves=_tier_moves(project, ids, week),
        compare_views=compare_views_red(project=project),
        unrun_suites=suites_unrun_counted(unrun, _opened(project, ids, week, owner)),
    )


def _backends(project: Project, names: list[str]) -> list[Backend]:
    backends = Backend.objects.filter(project=project).select_related("family").order_by("name")
    if names:
        backends = backends.filter(name__in=names)
    return list(backends)


def _latest_snapshots(backend_ids: list[int], before: datetime.datetime) -> dict[int, Snapshot]:
    snapshots = (
        Snapshot.objects.filter(backend_id__in=backend_ids, at__lt=before)
        .order_by("backend_id", "-at", "-pk")
        .distinct("backend_id")
    )
    return {s.backend_id: s for s in snapshots}


def _scores(project: Project, backends: list[Backend], week: Week) -> list[ScoreRow]:
    # The reference's score is 1 by definition; the others are held to it.
    others = [b for b in backends if b.pk != project.reference_backend_id]
    ids = [b.pk for b in others]
    now, before = _latest_snapshots(ids, week.end), _latest_snapshots(ids, week.start)
    definition = project.score_settings()
    rows = []
    for backend in others:
        snapshot, earlier = now.get(backend.pk), before.get(backend.pk)
        rows.append(
            ScoreRow(
                backend=backend.name,
                score=_headline(snapshot, definition),
                before=_headline(earlier, definition),
                open_gaps=_gap_total(snapshot),
                untracked=snapshot.untracked if snapshot else 0,
                variants=tuple(v.name for v in others if v.family_id == backend.pk),
            )
        )
    return rows


def _headline(snapshot: Snapshot | None, definition: Definition) -> float | None:
    """The score pages show, by the project's definition."""
    return None if snapshot is None else headline_score(snapshot, definition)


def _gap_total(snapshot: Snapshot | None) -> int:
    if snapshot is None:
        return 0
    return snapshot.skipped + snapshot.failed + snapshot.error + snapshot.missing


def _gaps(project: Project, backend_ids: list[int], owner: str = ""):
    gaps = Gap.objects.filter(project=project, backend_id__in=backend_ids).exclude(
        state=GapState.REFERENCE_MISSING
    )
    if owner:
        gaps = gaps_owned(gaps, project=project, owner=owner)
    return gaps.select_related("backend", "test", "reason", "triage__issue").prefetch_related(
        "reason__issues"
    )


def _owned_open(project: Project, backend_ids: list[int], week: Week, owner: str):
    """Per backend, ``owner``'s gaps open now that opened before the week's end. One query."""
    rows = (
        _gaps(project, backend_ids, owner)
        .filter(is_open=True, opened_at__lt=week.end)
        .order_by()
        .values("backend__name")
        .annotate(open=Count("pk"), untracked=Count("pk", filter=untracked_q()))
        .order_by("backend__name")
    )
    return [OwnedGaps(r["backend__name"], r["open"], r["untracked"]) for r in rows]


def _row(gap: Gap) -> GapRow:
    tracking = "intended" if gap.intended else "tracked" if gap.tracked else "untracked"
    return GapRow(
        test_id=gap.test_id,
        test=display_id(gap.test.file, gap.test.class_name, gap.test.name),  # as readers paste it
        backend=gap.backend.name,
        state=gap.state,
        tracking=tracking,
        reason=gap.reason.text if gap.reason else None,
        issues=issue_infos(reason=gap.reason, triage=gap.triage),
    )


def _opened(project: Project, backend_ids: list[int], week: Week, owner: str):
    """The gaps opened during the week and open at its end."""
    return _gaps(project, backend_ids, owner).filter(
        Q(is_open=True) | Q(closed_at__gte=week.end),
        opened_at__gte=week.start,
        opened_at__lt=week.end,
    )


def _new_gaps(
    project: Project, backend_ids: list[int], week: Week, owner: str, folded: Q | None = None
) -> list[BackendGaps]:
    """``folded``: the gaps of suites never run on their backend, one line each instead."""
    opened = _opened(project, backend_ids, week, owner)
    if folded is not None:
        opened = opened.exclude(folded)
    by_group: dict[str, dict[str, list[GapRow]]] = defaultdict(lambda: defaultdict(list))
    for gap in opened:
        by_group[gap.backend.name][gap.state].append(_row(gap))
    limit = settings.PARITY_DIGEST_MAX_GAPS
    result = []
    for backend in sorted(by_group):
        groups = []
        for state in STATE_ORDER:
            rows = sorted(
                by_group[backend].get(state, []),
                key=lambda r: (TRACKING_ORDER.index(r.tracking), r.test),
            )
            if rows:
                untracked = sum(r.tracking == "untracked" for r in rows)
                groups.append(GapGroup(state, rows[:limit], len(rows), untracked))
        result.append(BackendGaps(backend, groups))
    return result


def _by_family(new_gaps: list[BackendGaps], backends: list[Backend]) -> list[FamilyNewGaps]:
    """The new gaps of each family's variants added up. No query (``_backends`` reads each
    backend's family)."""
    variants: dict[str, list[str]] = defaultdict(list)
    for backend in backends:
        if backend.family_id:
            variants[backend.family.name].append(backend.name)
    by_name = {b.backend: b for b in new_gaps}
    found = []
    for family, names in sorted(variants.items()):
        opened = [by_name[n] for n in sorted(names) if n in by_name]
        if opened:
            found.append(
                FamilyNewGaps(
                    family=family,
                    total=sum(b.total for b in opened),
                    untracked=sum(g.untracked for b in opened for g in b.groups),
                    variants=[b.backend for b in opened],
                    of=len(names),
                )
            )
    return found


def _fixed(project: Project, backend_ids: list[int], week: Week, owner: str) -> list[GapRow]:
    closed = _gaps(project, backend_ids, owner).filter(
        is_open=False, closed_at__gte=week.start, closed_at__lt=week.end
    )
    return sorted((_row(g) for g in closed), key=lambda r: (r.backend, r.test))


def _new_reasons(
    project: Project, backend_ids: list[int] | None, names: dict[int, str], week: Week
) -> list[NewReason]:
    counted = ReasonDaily.objects.filter(project=project, count__gt=0, reason__kind=ReasonKind.SKIP)
    if backend_ids is not None:
        counted = counted.filter(backend_id__in=backend_ids)
    first = (
        counted.values("reason_id")
        .annotate(first=Min("day"))
        .filter(first__gte=week.monday, first__lte=week.sunday)
    )
    days = counted.filter(reason_id__in=first.values("reason_id"), day__gte=week.monday)
    backends: dict[int, set[str]] = defaultdict(set)
    for reason_id, backend_id in days.filter(day__lte=week.sunday).values_list(
        "reason_id", "backend_id"
    ):
        if backend_id in names:
            backends[reason_id].add(names[backend_id])
    reasons = Reason.objects.filter(pk__in=backends).prefetch_related("issues")
    rows = [
        NewReason(
            id=r.pk,
            reason=r.text,
            backends=sorted(backends[r.pk]),
            issues=issue_infos(reason=r, triage=None),
            category=r.category,
        )
        for r in reasons
    ]
    return sorted(rows, key=lambda r: r.reason)


def _closed_tracking(
    project: Project, backend_ids: list[int], week: Week, owner: str
) -> list[ClosedTracking]:
    """Per backend, the gaps open at the week's end that cite only issues closed by then."""
    gaps = _gaps(project, backend_ids, owner).filter(
        is_open=True, tracked_closed=True, opened_at__lt=week.end
    )
    by_backend: dict[str, list[tuple[Gap, list[IssueInfo]]]] = defaultdict(list)
    for gap in gaps:
        issues = issue_infos(reason=gap.reason, triage=gap.triage)
        if all(i.closed_at is None or i.closed_at < week.end for i in issues):
            by_backend[gap.backend.name].append((gap, issues))
    result = []
    for backend in sorted(by_backend):
        rows = by_backend[backend]
        counts: dict[str, int] = defaultdict(int)
        cited: dict[str, IssueInfo] = {}
        for _, issues in rows:
            for issue in issues:
                counts[issue.key] += 1
                cited[issue.key] = issue
        closings = [i.closed_at for i in cited.values() if i.closed_at is not None]
        ranked = sorted(cited, key=lambda key: (-counts[key], key))
        result.append(
            ClosedTracking(
                backend=backend,
                total=len(rows),
                skipped=sum(gap.state == GapState.SKIPPED for gap, _ in rows),
                since=min(closings, default=None),
                issues=[
                    ClosedIssueGaps(issue=cited[key], gaps=counts[key])
                    for key in ranked[: settings.PARITY_DIGEST_MAX_GAPS]
                ],
            )
        )
    return result


def _passes_now(backend_ids: list[int], week: Week) -> list[PassingExemptions]:
    """Per backend, the exemptions that passed in its latest probe run before the week's end."""
    passing = (
        ProbeOutcome.objects.filter(
            backend_id__in=backend_ids, tests__gt=0, passed=F("tests"), at__lt=week.end
        )
        .select_related("backend", "triage__test")
        .order_by("backend__name", "triage__match", "triage_id")
    )
    by_backend: dict[str, list[ProbeOutcome]] = defaultdict(list)
    for probe in passing:
        by_backend[probe.backend.name].append(probe)
    limit = settings.PARITY_DIGEST_MAX_GAPS
    return [
        PassingExemptions(
            backend=backend,
            total=len(probes),
            probed_at=max(p.at for p in probes),
            matches=[_exemption_match(p.triage) for p in probes[:limit]],
        )
        for backend, probes in by_backend.items()
    ]


def _transitions(project: Project, backend_ids: list[int], week: Week) -> list[DigestTransition]:
    return [
        DigestTransition(
            id=t.pk,
            backend=t.backend.name,
            changed=t.changes,
            counts=t.counts,
            lapses=len(t.lapses),
            at=t.at,
        )
        for t in transitions_of_week(project=project, week=week, backend_ids=backend_ids)
    ]


def _tier_moves(project: Project, backend_ids: list[int], week: Week) -> list[DigestTierMove]:
    """The suites that moved tier this week on the chosen backends: promoted, demoted,
    recovered, by backend, oldest first."""
    moves = (
        SuiteTierMove.objects.filter(
            project=project, backend_id__in=backend_ids, at__gte=week.start, at__lt=week.end
        )
        .select_related("backend")
        .order_by("backend__name", "at", "pk")
    )
    return [
        DigestTierMove(
            backend=m.backend.name,
            suite=m.suite,
            move=move_of(m.before, m.after) or "",
            before=m.before,
            after=m.after,
            at=m.at,
        )
        for m in moves
    ]


def _exemption_match(triage: Triage) -> str:
    test = triage.test
    return display_id(test.file, test.class_name, test.name) if test else triage.match


def _flaky(project: Project, backend_ids: list[int], week: Week) -> list[FlakyWeek]:
    """The week's tests that entered flaky per backend, ranked, and how many left it; a test
    that entered twice is listed once, at its higher rank."""
    changes = FlakyChange.objects.filter(
        project=project, backend_id__in=backend_ids, at__gte=week.start, at__lt=week.end
    ).values_list("backend__name", "test_id", "test__key", "entered", "rank")
    entered: dict[str, dict[int, FlakyTest]] = defaultdict(dict)
    left: dict[str, set[int]] = defaultdict(set)
    for backend, test_id, key, came, rank in changes:
        if not came:
            left[backend].add(test_id)
            continue
        old = entered[backend].get(test_id)
        if old is None or rank > old.rank:
            entered[backend][test_id] = FlakyTest(test=key, test_id=test_id, rank=rank)
    limit = settings.PARITY_DIGEST_MAX_GAPS
    weeks = []
    for backend in sorted(set(entered) | set(left)):
        ranked = sorted(entered[backend].values(), key=lambda t: (-t.rank, t.test))
        weeks.append(
            FlakyWeek(
                backend=backend,
                entered=ranked[:limit],
                entered_total=len(ranked),
                left_total=len(left[backend]),
            )
        )
    return weeks
