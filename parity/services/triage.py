"""Triage services: a maintainer links an issue to a gap, a test, a whole reason or a pattern of
tests, marks it intended, or quarantines flaky tests; the same rows are the exemptions CI applies
(``parity.selectors.manifest``).

The API, the dashboard, the admin and ``import_exemptions`` all write triages through these
functions, so every write takes the project lock (triage and the engine's recompute read and
write the same rows), checks the rules once (``triage_check``), and re-applies triages to the
open gaps and recounts the current snapshots in the same transaction: the dashboard's
tracked/untracked/intended numbers move at once, not at the next run.
"""

import dataclasses
import datetime
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from parity.definitions import triages_unexpired, unexpired
from parity.engine.gap_triages import triages_refresh
from parity.engine.lapses import lapses_write
from parity.models import (
    Backend,
    ExemptionRemoval,
    Gap,
    Project,
    Reason,
    TestCase,
    TrackingIssue,
    Triage,
    TriageKind,
)
from parity.models.parity import KINDS_WITH_ISSUE
from parity.models.projects import project_lock
from parity.pure.attributes import ConditionError, condition_parse
from parity.pure.globs import (
    PatternError,
    pattern_check,
    pattern_literal,
    pattern_regex,
    pattern_shape,
)
from parity.pure.list_formats.parity_file import ExemptionEntry
from parity.pure.normalize import extract_issue_refs
from parity.pure.web_urls import PROBLEM as WEB_URL_PROBLEM
from parity.pure.web_urls import web_url_problem

logger = logging.getLogger(__name__)


class TriageRejected(ValueError):
    """The request names something the project lacks, or the triage breaks a rule. ``field``
    names the triage's field at fault, when one is (forms show the message beside it)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class TriageRequest:
    """A triage as the API, the dashboard's forms and imports name it: by ids and names."""

    kind: str
    backends: Sequence[str] = ()  # backend names; none: every backend
    backend: str | None = None  # one backend's name, the same as ``backends=[backend]``
    test: int | None = None  # a TestCase id
    reason: int | None = None  # a Reason id
    gap: int | None = None  # a Gap id: its test on its backend
    match: str = ""  # a pattern over test IDs (parity.pure.globs)
    issue_url: str = ""
    note: str = ""
    expires_on: datetime.date | None = None
    condition: str = ""  # applies only where the run's attributes match (parity.pure.attributes)
    source: str = ""  # where a declaration came from: "import:amd-csv", "set_test_configs:…"
    # What an imported list carried, for export.
    extra: Mapping = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class TriageTarget:
    """What a triage covers, its rows looked up: checked by ``triage_check``."""

    backends: Sequence[Backend] = ()
    test: TestCase | None = None
    reason: Reason | None = None
    match: str = ""


def triage_check(
    *,
    project: Project,
    kind: str,
    target: TriageTarget,
    issue: TrackingIssue | None,
    note: str,
    expires_on: datetime.date | None = None,
    expires_was: datetime.date | None = None,
    condition: str = "",
) -> None:
    """The rules of a triage, whichever way it arrives; raises ``TriageRejected``.
    ``expires_was`` is the stored expiry of a triage being changed: keeping it is allowed."""
    if condition.strip():
        try:
            condition_parse(condition)
        except ConditionError as exc:
            raise TriageRejected(f"Condition {condition!r}: {exc}", field="condition") from None
    targets = sum((target.test is not None, target.reason is not None, bool(target.match)))
    if targets != 1:
        raise TriageRejected("Triage exactly one of: a test, a reason, or a 'match' pattern.")
    if target.match:
        try:
            pattern_check(target.match)
        except PatternError as exc:
            raise TriageRejected(str(exc), field="match") from None
    rows = [("test", target.test), ("reason", target.reason), ("issue", issue)]
    rows += [("backends", backend) for backend in target.backends]
    for field, row in rows:
        if row is not None and row.project_id != project.pk:
            raise TriageRejected(f"The {field} is not in project '{project.slug}'.", field=field)
    if issue is not None and issue.url and web_url_problem(issue.url):
        raise TriageRejected(
            f"The {WEB_URL_PROBLEM}: {web_url_problem(issue.url)} (got {issue.url[:80]!r}).",
            field="issue",
        )
    if kind in KINDS_WITH_ISSUE and issue is None:
        raise TriageRejected(f"A {kind} triage needs an 'issue_url'.", field="issue")
    if kind == TriageKind.INTENDED and not note.strip():
        raise TriageRejected("An intended triage needs a short 'note' saying why.", field="note")
    if kind == TriageKind.NOT_APPLICABLE and not note.strip():
        raise TriageRejected(
            "A not-applicable declaration needs a short 'note' saying why the test does not "
            "apply to the backend.",
            field="note",
        )
    if kind == TriageKind.QUARANTINE and target.reason is not None:
        raise TriageRejected(
            "Quarantine names tests (a test or a pattern), not a skip reason.", field="kind"
        )
    today = timezone.now().date()
    if not unexpired(expires_on, today) and expires_on != expires_was:
        raise TriageRejected(f"'expires_on' {expires_on} has already passed.", field="expires_on")


def triage_create(*, project: Project, request: TriageRequest, user=None) -> Triage:
    """Create the triage ``request`` describes (the API, the dashboard, imports)."""
    with transaction.atomic():
        project = project_lock(project_id=project.pk)
        triage = _triage_create_locked(project=project, request=request, user=user)
    logger.info("triage %s created in project %s (%s)", triage.pk, project.pk, triage.kind)
    return triage


def triages_create(
    *, project: Project, requests: Iterable[TriageRequest], user=None
) -> list[Triage]:
    """Create many triages in one transaction, all or none (``import_exemptions``); a
    rejected one raises ``TriageRejected`` naming its position."""
    with transaction.atomic():
        project = project_lock(project_id=project.pk)
        triages = []
        for position, request in enumerate(requests, 1):
            try:
                triages.append(
                    _triage_create_locked(
                        project=project, request=request, user=user, refresh=False
                    )
                )
            except TriageRejected as exc:
                raise TriageRejected(f"Entry {position}: {exc}", field=exc.field) from None
        triages_refresh(project=project)
    logger.info("%s triage(s) created in project %s", len(triages), project.pk)
    return triages


@dataclass(frozen=True)
class Imported:
    created: list[Triage]
    duplicates: int  # entries the project already had, left alone


def exemptions_import(
    *, project: Project, entries: Iterable[ExemptionEntry], user=None
) -> Imported:
    """Create the exemptions ``entries`` list (``import_exemptions``, the demo), all or none.
    An entry the project already has (same pattern, kind, backends, issue and reason) is left
    alone, so importing a list again changes nothing."""
    patterns = Triage.objects.filter(project=project).exclude(match="")
    have = {_signature(t) for t in patterns.select_related("issue").prefetch_related("backends")}
    requests, duplicates = [], 0
    for entry in entries:
        request = TriageRequest(
            kind=entry.kind,
            backends=entry.backends,
            match=entry.match,
            issue_url=entry.issue,
            note=entry.reason,
            expires_on=entry.expires,
            condition=entry.condition,
        )
        if _request_signature(project, request) in have:
            duplicates += 1
        else:
            requests.append(request)
    return Imported(
        created=triages_create(project=project, requests=requests, user=user),
        duplicates=duplicates,
    )


def triage_request_check(
    *, project: Project, request: TriageRequest, known: Mapping[str, Backend] | None = None
) -> None:
    """Whether ``request`` keeps the rules, without writing anything (an import's report and
    its dry run); raises ``TriageRejected``. ``known``: the project's backends by name, read
    once for many pattern requests."""
    target = _pattern_target(request, known) if known is not None else _target(project, request)
    url = request.issue_url.strip()
    # An unsaved stand-in: the rules ask only whether there is one, in this project.
    issue = TrackingIssue(project=project, key=url, url=url) if url else None
    triage_check(
        project=project,
        kind=request.kind,
        target=target,
        issue=issue,
        note=request.note,
        expires_on=request.expires_on,
    )


def _pattern_target(request: TriageRequest, known: Mapping[str, Backend]) -> TriageTarget:
    """The target of a pattern ``request``, its backends found in ``known`` (no query)."""
    if not request.match or request.gap or request.test or request.reason:
        raise TriageRejected("Name a 'match' pattern (an imported list names tests).")
    unknown = sorted(set(request.backends) - set(known))
    if unknown:
        names = ", ".join(sorted(known))
        raise TriageRejected(f"Unknown backend '{unknown[0]}' (known: {names}).", field="backends")
    backends = [known[name] for name in sorted(set(request.backends))]
    return TriageTarget(backends=backends, match=request.match)


@dataclass(frozen=True)
class TriageChanges:
    """Triages to create, to change and to delete together (a list's import)."""

    create: Sequence[TriageRequest] = ()
    change: Sequence[tuple[Triage, TriageRequest]] = ()
    delete: Sequence[Triage] = ()


def triages_change(*, project: Project, changes: TriageChanges, user=None) -> list[Triage]:
    """Apply ``changes`` (pattern requests: an imported list) in one transaction, all or none,
    re-applying triages once at the end; returns the triages created. The new ones are checked
    one by one and written together. A rejected request raises ``TriageRejected`` naming it."""
    with transaction.atomic():
        project = project_lock(project_id=project.pk)
        known = {backend.name: backend for backend in project.backends.all()}
        issues: dict[str, TrackingIssue | None] = {}
        new: list[tuple[Triage, Sequence[Backend]]] = []
        for request in changes.create:
            url = request.issue_url.strip()
            if url not in issues:
                issues[url] = tracking_issue_get_or_create(project=project, url=url)
            try:
                new.append(_triage_new(project, request, known, issues[url], user))
            except TriageRejected as exc:
                raise TriageRejected(f"{request.match}: {exc}", field=exc.field) from None
        created = Triage.objects.bulk_create([triage for triage, _ in new], batch_size=1000)
        through = Triage.backends.through
        through.objects.bulk_create(
            [through(triage_id=t.pk, backend_id=b.pk) for t, backends in new for b in backends],
            batch_size=5000,
        )
        conditioned = [triage.pk for triage in created if triage.condition]
        if conditioned:  # read by the refresh below, as _triage_write does for one
            lapses_write(project_id=project.pk, triage_ids=conditioned)
        for triage, request in changes.change:
            try:
                _triage_update_locked(project=project, triage=triage, request=request)
            except TriageRejected as exc:
                raise TriageRejected(f"{request.match}: {exc}", field=exc.field) from None
        removals_record(triages=changes.delete, how=REMOVED, user=user)
        for triage in changes.delete:
            triage.delete()
        triages_refresh(project=project)
    logger.info(
        "triages in project %s: %s created, %s changed, %s deleted",
        project.pk,
        len(created),
        len(changes.change),
        len(changes.delete),
    )
    return created


def _triage_new(
    project: Project,
    request: TriageRequest,
    known: Mapping[str, Backend],
    issue: TrackingIssue | None,
    user,
) -> tuple[Triage, Sequence[Backend]]:
    """The unsaved triage of a pattern ``request``, checked, and its backends."""
    target = _pattern_target(request, known)
    triage = Triage(
        project=project,
        match=target.match.strip(),
        kind=request.kind,
        issue=issue,
        note=request.note,
        expires_on=request.expires_on,
        condition=request.condition.strip(),
        source=request.source,
        extra=dict(request.extra),
        created_by=user,
    )
    _triage_prepare(triage=triage, project=project, backends=target.backends)
    return triage, target.backends


def triage_save(*, triage: Triage, backends: Iterable[Backend], user=None) -> Triage:
    """Create or change ``triage`` as given, rows and all, on ``backends`` (the admin's form).
    ``user`` becomes its author when it has none."""
    with transaction.atomic():
        project = project_lock(project_id=triage.project_id)
        if triage.created_by_id is None and user is not None:
            triage.created_by = user
        expires_was = (
            Triage.objects.filter(pk=triage.pk).values_list("expires_on", flat=True).first()
            if triage.pk
            else None
        )
        _triage_write(
            triage=triage, project=project, backends=list(backends), expires_was=expires_was
        )
    logger.info("triage %s saved in project %s (%s)", triage.pk, project.pk, triage.kind)
    return triage


def declaration_override(*, triage: Triage, overridden: bool, user=None) -> Triage:
    """A maintainer sets a declaration aside (``overridden``: it no longer applies, and CI runs
    the tests again) or restores it. The declaration stays, with its source, so a contested
    label can be seen and the decision undone; setting it aside is recorded as a removal (the
    next verdict names the gaps it uncovered)."""
    with transaction.atomic():
        project = project_lock(project_id=triage.project_id)
        if overridden and not triage.overridden:
            removals_record(triages=[triage], how=SET_ASIDE, user=user)
        triage.overridden = overridden
        triage.save(update_fields=["overridden"])
        triages_refresh(project=project)
    logger.info("triage %s overridden=%s", triage.pk, overridden)
    return triage


def triage_delete(*, triage: Triage, user=None) -> None:
    triages_delete(triages=[triage], user=user)


def triages_delete(*, triages: Iterable[Triage], user=None) -> None:
    """Delete triages (the admin's bulk delete) and recount, one transaction per project. Each
    is recorded as removed by ``user`` (``removals_record``)."""
    by_project: dict[int, list[Triage]] = {}
    for triage in triages:
        by_project.setdefault(triage.project_id, []).append(triage)
    for project_id, group in sorted(by_project.items()):
        with transaction.atomic():
            project = project_lock(project_id=project_id)
            removals_record(triages=group, how=REMOVED, user=user)
            for triage in group:
                triage.delete()
            triages_refresh(project=project)
        logger.info("%s triage(s) deleted in project %s", len(group), project_id)


# How a removal is said: "removed by alice on 2026-12-03", "set aside by bob on ...".
REMOVED, SET_ASIDE = "removed", "set aside"


def removals_record(*, triages: Sequence[Triage], how: str, user=None) -> None:
    """Keep what each removed triage named, who removed it and when (``ExemptionRemoval``), so a
    verdict can say which gaps the removal uncovered. Called in the removal's transaction,
    before the triages go. One insert, and one read of their backends."""
    if not triages:
        return
    through = Triage.backends.through
    backends: dict[int, list[int]] = {}
    for triage_id, backend_id in through.objects.filter(
        triage_id__in=[t.pk for t in triages]
    ).values_list("triage_id", "backend_id"):
        backends.setdefault(triage_id, []).append(backend_id)
    ExemptionRemoval.objects.bulk_create(
        [
            ExemptionRemoval(
                project_id=t.project_id,
                triage_id=t.pk,
                kind=t.kind,
                how=how,
                test_id=t.test_id,
                reason_id=t.reason_id,
                match=t.match,
                match_regex=t.match_regex,
                backends=sorted(backends.get(t.pk, [])),
                condition=t.condition,
                expires_on=t.expires_on,
                # A user signed in (an upload token's principal is none: who is not known).
                removed_by=user if isinstance(user, get_user_model()) else None,
            )
            for t in triages
        ]
    )


def reason_issues_set(*, reason: Reason, issues: Iterable[TrackingIssue]) -> None:
    """Set the issues a reason cites (the admin's edit) and re-apply triages: whether its gaps
    count as tracked follows from them, so the change shows at once rather than at the next
    run (whose recompute picks triages for the gaps it touched only)."""
    with transaction.atomic():
        project = project_lock(project_id=reason.project_id)
        reason.issues.set(issues)
        triages_refresh(project=project)
    logger.info("issues of reason %s set in project %s", reason.pk, reason.project_id)


def triages_expire() -> list[int]:
    """Re-apply triages in projects where one passed its expiry day since the engine last
    applied them, so the gaps it covered count untracked again (a beat task). Returns the
    projects refreshed."""
    today = timezone.now().date()
    project_ids = sorted(
        set(
            Triage.objects.filter(expired=False)
            .exclude(triages_unexpired(today))
            .values_list("project_id", flat=True)
        )
    )
    for project_id in project_ids:
        with transaction.atomic():
            triages_refresh(project=project_lock(project_id=project_id))
        logger.info("expired triages re-applied in project %s", project_id)
    return project_ids


def issue_key(*, project: Project, url: str) -> str:
    """The key the project's issue for ``url`` has, or would get (``pytorch/xla#4298``)."""
    return _issue_identity(project, url.strip())[1] if url.strip() else ""


def _issue_identity(project: Project, url: str) -> tuple[str, str]:
    refs = extract_issue_refs(url, issue_url_template=project.issue_url_template)
    return (refs[0].kind, refs[0].key) if refs else ("url", url[:200])


def tracking_issue_get_or_create(*, project: Project, url: str) -> TrackingIssue | None:
    """The project's issue for ``url``, created if new, keyed like issues found in reasons
    (``pytorch/xla#4298``) so a triage and a reason naming one issue share it."""
    url = url.strip()
    if not url:
        return None
    problem = web_url_problem(url)
    if problem:  # before any row: the rule holds for a URL whose key the project already has
        raise TriageRejected(f"The {WEB_URL_PROBLEM}: {problem} (got {url[:80]!r}).", field="issue")
    kind, key = _issue_identity(project, url)
    issue, created = TrackingIssue.objects.get_or_create(
        project=project, key=key, defaults={"kind": kind, "url": url}
    )
    if not created and not issue.url:
        issue.url = url
        issue.save(update_fields=["url"])
    return issue


def _signature(triage: Triage) -> tuple:
    issue = triage.issue.key if triage.issue else ""
    backends = tuple(sorted(b.name for b in triage.backends.all()))
    return (triage.match, triage.kind, backends, issue, triage.note, triage.condition)


def _request_signature(project: Project, request: TriageRequest) -> tuple:
    """``_signature`` of the triage ``request`` would make; its issue by the key it would get."""
    url = request.issue_url.strip()
    issue = _issue_identity(project, url)[1] if url else ""
    backends = tuple(sorted(b.lower() for b in request.backends))
    condition = request.condition.strip()
    return (request.match.strip(), request.kind, backends, issue, request.note.strip(), condition)


def _triage_create_locked(
    *, project: Project, request: TriageRequest, user, refresh: bool = True
) -> Triage:
    target = _target(project, request)
    triage = Triage(
        project=project,
        test=target.test,
        reason=target.reason,
        match=target.match.strip(),
        kind=request.kind,
        issue=tracking_issue_get_or_create(project=project, url=request.issue_url),
        note=request.note,
        expires_on=request.expires_on,
        condition=request.condition,
        source=request.source,
        extra=dict(request.extra),
        created_by=user,
    )
    _triage_write(triage=triage, project=project, backends=target.backends, refresh=refresh)
    return triage


def _triage_update_locked(*, project: Project, triage: Triage, request: TriageRequest) -> None:
    """Give ``triage`` what ``request`` says (an import of an edited list); a maintainer's
    override and the author stay."""
    target = _target(project, request)
    expires_was = triage.expires_on
    triage.kind = request.kind
    triage.match = target.match
    triage.issue = tracking_issue_get_or_create(project=project, url=request.issue_url)
    triage.note = request.note
    triage.expires_on = request.expires_on
    triage.condition = request.condition.strip()
    triage.source = request.source
    triage.extra = dict(request.extra)
    _triage_write(
        triage=triage,
        project=project,
        backends=target.backends,
        expires_was=expires_was,
        refresh=False,
    )


def _triage_write(
    *,
    triage: Triage,
    project: Project,
    backends: Sequence[Backend],
    expires_was: datetime.date | None = None,
    refresh: bool = True,
) -> None:
    _triage_prepare(triage=triage, project=project, backends=backends, expires_was=expires_was)
    new = triage.pk is None
    triage.save()
    triage.backends.set(backends)
    # Before the triages are applied: they read which conditioned triages hold where. A new
    # triage without a condition has no lapse to write (an import of thousands asks nothing).
    if triage.condition or not new:
        lapses_write(project_id=project.pk, triage_ids=[triage.pk])
    if refresh:
        triages_refresh(project=project)
        triage.refresh_from_db(fields=["stale", "expired"])


def _triage_prepare(
    *,
    triage: Triage,
    project: Project,
    backends: Sequence[Backend],
    expires_was: datetime.date | None = None,
) -> None:
    """Check ``triage`` by the rules and give it what its pattern derives, unsaved."""
    target = TriageTarget(
        backends=backends, test=triage.test, reason=triage.reason, match=triage.match.strip()
    )
    triage_check(
        project=project,
        kind=triage.kind,
        target=target,
        issue=triage.issue,
        note=triage.note,
        expires_on=triage.expires_on,
        expires_was=expires_was,
        condition=triage.condition,
    )
    triage.note = triage.note.strip()
    triage.condition = triage.condition.strip()
    triage.match = target.match
    triage.match_regex = pattern_regex(target.match) if target.match else ""
    triage.match_literal = pattern_literal(target.match) if target.match else ""
    triage.match_shape = pattern_shape(target.match) if target.match else ""


def _target(project: Project, request: TriageRequest) -> TriageTarget:
    """The rows ``request`` names, looked up in ``project``."""
    named = (request.gap, request.test, request.reason, request.match or None)
    if sum(x is not None for x in named) != 1:
        raise TriageRejected("Name exactly one of 'gap', 'test', 'reason' or 'match'.")
    if request.gap is not None:
        gap = Gap.objects.filter(project=project, pk=request.gap).select_related("backend").first()
        if gap is None:
            raise TriageRejected(f"No gap {request.gap} in project '{project.slug}'.")
        return TriageTarget(backends=[gap.backend], test=gap.test)
    backends = _backends(project, [*request.backends, *filter(None, [request.backend])])
    if request.test is not None:
        test = TestCase.objects.filter(project=project, pk=request.test).first()
        if test is None:
            raise TriageRejected(f"No test {request.test} in project '{project.slug}'.")
        return TriageTarget(backends=backends, test=test)
    if request.reason is not None:
        reason = Reason.objects.filter(project=project, pk=request.reason).first()
        if reason is None:
            raise TriageRejected(f"No reason {request.reason} in project '{project.slug}'.")
        return TriageTarget(backends=backends, reason=reason)
    return TriageTarget(backends=backends, match=request.match)


def _backends(project: Project, names: Sequence[str]) -> list[Backend]:
    found = {b.name: b for b in project.backends.filter(name__in=names)}
    unknown = sorted(set(names) - set(found))
    if unknown:
        known = ", ".join(sorted(project.backends.values_list("name", flat=True)))
        raise TriageRejected(f"Unknown backend '{unknown[0]}' (known: {known}).", field="backends")
    return [found[name] for name in sorted(found)]
