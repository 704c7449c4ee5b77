"""The overview page: per project and backend, the current parity numbers (the backend's
``Snapshot``), its last upload, and a score trend from the snapshots of a recent window."""

import datetime
from collections import defaultdict
from dataclasses import dataclass, field, replace

from django.db.models import Count, F, Max, OuterRef, QuerySet, Subquery

from parity.definitions import on_default_branch_q
from parity.models import Backend, BackendState, Project, Run, Snapshot, Upload
from parity.pure.scores import DEFAULT, Definition
from parity.selectors.compare_views import CompareHeadline
from parity.selectors.families import FamilyRollup, families_failing
from parity.selectors.fragments import Scored, headline_score, reference_first, snapshot_counts
from parity.selectors.queue import BackendHeadline, BurnDown
from parity.selectors.snapshot_days import snapshot_days

# An empty state names a few branches, not every pull request's.
OFF_BRANCHES_SHOWN = 3


@dataclass(frozen=True)
class BackendCard(Scored):
    name: str
    is_reference: bool
    current_run: Run | None
    last_upload: Upload | None
    score: float | None = None  # raw: intended gaps counted (the snapshot's)
    passing: int = 0
    reference_passing: int = 0
    untracked: int = 0
    tracked: int = 0
    intended: int = 0
    not_applicable: int = 0
    rerun: int = 0
    reference_tests: int | None = None
    differ_not_passed: int = 0
    not_applicable_not_passed: int = 0
    coverage_drop: bool = False
    definition: Definition = DEFAULT  # the project's score definition
    # Without a current run: its complete runs on branches the project does not compare, per
    # branch, the most first (``off_branch_runs``).
    off_branch: tuple[tuple[str, int], ...] = ()
    family: str = ""  # a variant's family (``Backend.family``); "" for a family or a flat one
    attributes: dict = field(default_factory=dict)  # what makes the variant


@dataclass(frozen=True)
class ProjectCard:
    project: Project
    backends: list[BackendCard]  # the reference first
    # What is left to triage, when the page asks (``triage_headlines``, ``untracked_burndown``).
    headlines: list[BackendHeadline] = field(default_factory=list)
    burndown: BurnDown | None = None
    # The project's compare view its headline reads from, when it names one (``compare_headlines``).
    compare: CompareHeadline | None = None
    # Each family with variants, by name: the roll-up its row shows above its variants.
    families: dict[str, FamilyRollup] = field(default_factory=dict)

    @property
    def groups(self) -> list["BackendGroup"]:
        """The backends as rows: a flat backend alone, a family with its variants under it;
        the reference first, then by name."""
        variants: dict[str, list[BackendCard]] = defaultdict(list)
        for b in self.backends:
            if b.family:
                variants[b.family].append(b)
        return [
            BackendGroup(head=b, variants=variants[b.name], rollup=self.families.get(b.name))
            for b in self.backends
            if not b.family
        ]

    @property
    def untracked(self) -> int:
        return sum(b.untracked for b in self.backends)

    @property
    def has_uploads(self) -> bool:
        return any(b.last_upload for b in self.backends)


@dataclass(frozen=True)
class BackendGroup:
    head: BackendCard  # a flat backend, or a family's own row (which may have no run)
    variants: list[BackendCard]  # a family's, by name; none for a flat backend
    rollup: FamilyRollup | None = None


def project_cards(*, projects: list[Project] | None = None) -> list[ProjectCard]:
    """Every project (or those given), in three queries however many projects, backends and
    runs there are; a fourth when a backend has variants (``families_failing``)."""
    projects = list(Project.objects.all()) if projects is None else projects
    # A LIMIT 1 lookup per backend: its newest upload, whatever its run's branch or state.
    newest = Upload.objects.filter(run__backend=OuterRef("pk")).order_by("-created_at", "-pk")
    backends = (
        Backend.objects.filter(project__in=projects)
        .select_related("state__current_run", "state__snapshot", "family")
        .annotate(last_upload_id=Subquery(newest.values("pk")[:1]))
    )
    by_project: dict[int, list[Backend]] = defaultdict(list)
    for backend in backends:
        by_project[backend.project_id].append(backend)
    upload_ids = [b.last_upload_id for bs in by_project.values() for b in bs if b.last_upload_id]
    uploads = Upload.objects.in_bulk(upload_ids) if upload_ids else {}
    # A fourth query only when a backend has no current run, to say where its runs went.
    lacking = [b.pk for bs in by_project.values() for b in bs if _current_run(b) is None]
    elsewhere = _off_branch_by_backend(lacking) if lacking else {}
    cards = []
    for project in projects:
        ordered = reference_first(project, by_project[project.pk])
        backend_cards = [
            _card(b, project, uploads.get(b.last_upload_id), elsewhere.get(b.pk, ()))
            for b in ordered
        ]
        cards.append(ProjectCard(project=project, backends=backend_cards))
    return _families_attach(cards, by_project)


def _families_attach(
    cards: list[ProjectCard], by_project: dict[int, list[Backend]]
) -> list[ProjectCard]:
    family_ids = sorted({b.family_id for bs in by_project.values() for b in bs if b.family_id})
    if not family_ids:
        return cards
    failing = families_failing(family_ids=family_ids)
    found = []
    for card in cards:
        pks = {b.name: b.pk for b in by_project[card.project.pk]}
        members: dict[str, list[BackendCard]] = defaultdict(list)
        for b in card.backends:
            if b.family:
                members[b.family].append(b)
        rollups = {
            family: FamilyRollup(
                family=family,
                variants=[v.name for v in variants],
                scores=[v.scores if v.score is not None else None for v in variants],
                failing=failing.get(pks[family]),
            )
            for family, variants in sorted(members.items())
        }
        found.append(replace(card, families=rollups))
    return found


def _current_run(backend: Backend) -> Run | None:
    state = getattr(backend, "state", None)
    return state.current_run if state else None


def _off_branch(runs: QuerySet[Run]) -> QuerySet[Run]:
    """Complete runs on branches their project does not compare (probes are never current)."""
    return runs.filter(complete=True, probe=False).exclude(
        on_default_branch_q(F("project__default_branch"))
    )


def _off_branch_by_backend(backend_ids: list[int]) -> dict[int, tuple[tuple[str, int], ...]]:
    counted = (
        _off_branch(Run.objects.filter(backend_id__in=backend_ids))
        .values_list("backend_id", "branch")
        .annotate(n=Count("pk"))
        .order_by("backend_id", "-n", "branch")
    )
    found: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for backend_id, branch, n in counted:
        found[backend_id].append((branch, n))
    return {pk: tuple(rows[:OFF_BRANCHES_SHOWN]) for pk, rows in found.items()}


def _card(
    backend: Backend,
    project: Project,
    upload: Upload | None,
    off_branch: tuple[tuple[str, int], ...],
) -> BackendCard:
    state = getattr(backend, "state", None)
    run = state.current_run if state else None
    snapshot = state.snapshot if state else None
    numbers = {}
    # A snapshot of an older run is no current number (the engine repoints it on recompute).
    if run is not None and snapshot is not None and snapshot.run_id == run.pk:
        numbers = {
            "score": snapshot.score,
            **snapshot_counts(snapshot),
            "untracked": snapshot.untracked,
            "tracked": snapshot.tracked,
            "coverage_drop": snapshot.coverage_drop,
        }
    return BackendCard(
        name=backend.name,
        family=backend.family.name if backend.family_id else "",
        attributes=backend.attributes or {},
        is_reference=backend.pk == project.reference_backend_id,
        current_run=run,
        last_upload=upload,
        off_branch=off_branch,
        definition=project.score_settings(),
        **numbers,
    )


def score_trends(
    *, since: datetime.datetime, projects: list[Project] | None = None
) -> dict[str, dict[str, dict[str, list]]]:
    """Per project slug (of every project, or those given) and backend name, the headline score
    (``parity.pure.scores``) of each day's last snapshot since ``since``: ``{"at": [iso, …],
    "score": [float | None, …]}``, oldest first. Two queries, bounded by days x backends
    (``snapshot_days``), not by runs."""
    projects = list(Project.objects.all()) if projects is None else projects
    by_pk = {p.pk: p for p in projects}
    fields = (
        "score", "passing", "reference_passing", "intended", "not_applicable",
        "reference_tests", "differ_not_passed", "not_applicable_not_passed",
    )  # fmt: skip
    days = snapshot_days(project_ids=list(by_pk), since=since, fields=fields)
    trends: dict[str, dict[str, dict[str, list]]] = defaultdict(dict)
    for day in days:
        project = by_pk[day.project_id]
        score = headline_score(Snapshot(**day.values), project.score_settings())
        series = trends[project.slug].setdefault(day.backend, {"at": [], "score": []})
        series["at"].append(day.at.isoformat())
        series["score"].append(None if score is None else round(score, 4))
    return dict(trends)


def project_has_runs(*, project: Project) -> bool:
    return Run.objects.filter(project=project).exists()


def off_branch_runs(*, project: Project) -> list[tuple[str, int]]:
    """The complete runs on branches the project does not compare, counted per branch, the
    most first: the empty states say why they show nothing."""
    counted = (
        _off_branch(Run.objects.filter(project=project))
        .values("branch")
        .annotate(n=Count("pk"))
        .order_by("-n", "branch")
    )
    return [(row["branch"], row["n"]) for row in counted[:OFF_BRANCHES_SHOWN]]


def data_version(*, project: Project | None = None) -> str:
    """Changes whenever the engine recomputes a backend (of ``project``, or any): an ETag base
    for chart data, which only a recompute changes."""
    states = BackendState.objects.all()
    if project is not None:
        states = states.filter(project=project)
    latest = states.aggregate(latest=Max("computed_at"), n=Count("pk"))
    stamp = latest["latest"].isoformat() if latest["latest"] else "none"
    return f"{stamp}/{latest['n']}"
