"""Import a list a team keeps (``parity.pure.list_formats``) as the project's triages: through
``parity.services.triage``'s rules, recorded under the list's ``source``, with a report of the
stored tests each entry covers and of what could not be imported and why.

A list is known by its source ("import:amd-csv", "set_test_configs:test/xpu/conf.py"), and an
entry within it by its pattern and condition. Importing the same file again changes nothing.
Importing an edited file creates what is new, updates what changed (kind, reason, issue,
backends, carried fields: a maintainer's override stays), and *reports* the source's triages
the file no longer has, deleting them only with ``prune``. A dry run reports the same and
writes nothing.
"""

import json
from dataclasses import asdict, dataclass, field

from parity.models import ListRowsKept, Project, Triage
from parity.pure.attributes import ConditionError, condition_parse
from parity.pure.list_formats import (
    ListEntry,
    ListRead,
    ReadOptions,
    Unread,
    list_read,
    list_source,
)
from parity.selectors.exemptions import patterns_covered
from parity.services.triage import (
    TriageChanges,
    TriageRejected,
    TriageRequest,
    issue_key,
    triage_request_check,
    triages_change,
)

CREATED, UPDATED, UNCHANGED, NOT_IMPORTED = "created", "updated", "unchanged", "not imported"


@dataclass(frozen=True)
class ListImportRequest:
    source: str
    format: str = ""  # the list's: rows it keeps (``Unread.extra``) are kept under it
    dry_run: bool = False
    prune: bool = False  # delete the source's triages the list no longer has


@dataclass(frozen=True)
class ImportLine:
    where: str  # in the file
    match: str
    action: str  # created, updated, unchanged, not imported
    tests: int  # the project's stored tests the pattern covers (on any backend)
    why: str = ""  # why not imported; or what to know about an imported one


@dataclass(frozen=True)
class Removed:
    id: int
    match: str
    condition: str


@dataclass
class ListImportReport:
    source: str
    dry_run: bool
    lines: list[ImportLine] = field(default_factory=list)
    unread: list[Unread] = field(default_factory=list)  # parts of the file no entry came from
    removed: list[Removed] = field(default_factory=list)  # in parity, no longer in the list
    pruned: bool = False  # ``removed`` were deleted

    def count(self, action: str) -> int:
        """Lines of ``action``; "not imported" counts the parts of the file not read too."""
        lines = sum(1 for line in self.lines if line.action == action)
        return lines + len(self.unread) if action == NOT_IMPORTED else lines

    @property
    def matched(self) -> list[ImportLine]:
        return [line for line in self.lines if line.action != NOT_IMPORTED and line.tests]

    @property
    def unmatched(self) -> list[ImportLine]:
        """Entries not imported, and those imported that cover no stored test yet."""
        return [line for line in self.lines if line.action == NOT_IMPORTED or not line.tests]

    def as_dict(self) -> dict:
        return {
            "source": self.source,
            "dry_run": self.dry_run,
            **{action.replace(" ", "_"): self.count(action) for action in _ACTIONS},
            "removed_from_list": len(self.removed),
            "pruned": self.pruned,
            "matched": [asdict(line) for line in self.matched],
            "unmatched": [asdict(line) for line in self.unmatched],
            "unread": [{"where": u.where, "why": u.why} for u in self.unread],
            "removed": [asdict(removed) for removed in self.removed],
        }


_ACTIONS = (CREATED, UPDATED, UNCHANGED, NOT_IMPORTED)


@dataclass
class _Planned:
    entry: ListEntry
    request: TriageRequest | None
    why: str


def list_import(
    *, project: Project, read: ListRead, request: ListImportRequest, user=None
) -> ListImportReport:
    """Import ``read``'s entries as ``project``'s triages from ``request.source`` (see the
    module docstring); returns what was done, or in a dry run what would be."""
    existing = {
        (t.match, t.condition): t
        for t in Triage.objects.filter(project=project, source=request.source)
        .select_related("issue")
        .prefetch_related("backends")
    }
    planned = _plan(project, read.entries, request.source)
    covered = patterns_covered(
        project=project, patterns=[p.request.match for p in planned if p.request]
    )
    report = ListImportReport(source=request.source, dry_run=request.dry_run, unread=read.unread)
    changes = TriageChanges(create=[], change=[], delete=[])
    for plan in planned:
        report.lines.append(_line(project, plan, existing, covered, changes))
    seen = {(p.request.match, p.request.condition) for p in planned if p.request}
    gone = [t for key, t in existing.items() if key not in seen]
    report.removed = [Removed(t.pk, t.match, t.condition) for t in gone]
    if request.prune:
        changes.delete.extend(gone)
        report.pruned = bool(gone)
    if not request.dry_run and (changes.create or changes.change or changes.delete):
        triages_change(project=project, changes=changes, user=user)
    if not request.dry_run:
        _rows_keep(project, request, read)
    return report


def _rows_keep(project: Project, request: ListImportRequest, read: ListRead) -> None:
    """Keep the rows the list holds that declare nothing, for its export; the list's latest
    import has the last word."""
    rows = [_json(unread.extra) for unread in read.unread if unread.extra]
    if rows:
        ListRowsKept.objects.update_or_create(
            project=project,
            source=request.source,
            defaults={"format": request.format, "rows": rows},
        )
    else:
        ListRowsKept.objects.filter(project=project, source=request.source).delete()


def _plan(project: Project, entries: list[ListEntry], source: str) -> list[_Planned]:
    """Each entry as the triage it asks for, or why it cannot be one."""
    names = _backend_names(project)
    known = {backend.name: backend for backend in project.backends.all()}
    first: dict[tuple[str, str], str] = {}
    planned = []
    for entry in entries:
        key = (entry.match.strip(), entry.condition.strip())
        if key in first:
            planned.append(_Planned(entry, None, f"the same tests and condition as {first[key]}"))
            continue
        first[key] = entry.where
        backends = sorted({names[b.lower()] for b in entry.backends if b.lower() in names})
        unknown = sorted({b for b in entry.backends if b.lower() not in names})
        if entry.backends and not backends:
            why = f"names no backend of the project: {', '.join(unknown)}"
            planned.append(_Planned(entry, None, why))
            continue
        request = TriageRequest(
            kind=entry.kind,
            backends=backends,
            match=key[0],
            issue_url=entry.issue,
            note=entry.reason,
            condition=key[1],
            source=source,
            extra=_json(entry.extra),
        )
        try:
            triage_request_check(project=project, request=request, known=known)
        except TriageRejected as exc:
            planned.append(_Planned(entry, None, str(exc)))
            continue
        why = f"not a backend of the project, left out: {', '.join(unknown)}" if unknown else ""
        planned.append(_Planned(entry, request, why))
    return planned


def _line(
    project: Project, plan: _Planned, existing: dict, covered: dict[str, int], changes
) -> ImportLine:
    entry, request = plan.entry, plan.request
    if request is None:
        return ImportLine(entry.where, entry.match, NOT_IMPORTED, 0, plan.why)
    tests = covered.get(request.match, 0)
    notes = [plan.why] if plan.why else []
    if not tests:
        notes.append("matches no stored test")
    triage = existing.get((request.match, request.condition))
    if triage is None:
        changes.create.append(request)
        action = CREATED
    elif _same(project, triage, request):
        action = UNCHANGED
    else:
        changes.change.append((triage, request))
        action = UPDATED
    if triage is not None and triage.overridden:
        notes.append("a maintainer set it aside: it stays so")
    return ImportLine(entry.where, request.match, action, tests, "; ".join(notes))


def _same(project: Project, triage: Triage, request: TriageRequest) -> bool:
    issue = triage.issue.key if triage.issue_id else ""
    return (
        triage.kind == request.kind
        and triage.note == request.note.strip()
        and issue == issue_key(project=project, url=request.issue_url)
        and sorted(b.name for b in triage.backends.all()) == list(request.backends)
        and triage.extra == request.extra
        and triage.expires_on == request.expires_on
    )


def _backend_names(project: Project) -> dict[str, str]:
    """Each name and alias, lower-cased, to its backend's name."""
    names = {}
    for backend in project.backends.all():
        for name in (*backend.aliases, backend.name):
            names[name.lower()] = backend.name
    return names


def _json(extra) -> dict:
    """``extra`` as the database gives it back (tuples become lists), so a re-import of the
    same file compares equal."""
    return json.loads(json.dumps(dict(extra)))


@dataclass(frozen=True)
class ListFile:
    """A list to import, as a command or the API receives it."""

    format: str  # parity.pure.list_formats.FORMATS, but "yaml"
    text: str
    name: str = ""  # its path, for its source and for notes ("Skipped in skip_list_arc.py")
    source: str = ""  # "": the format's (``list_source``)
    kind: str = ""  # "": the format's default
    condition: str = ""
    backends: tuple[str, ...] = ()
    prefix: str = ""


def list_file_import(
    *, project: Project, file: ListFile, dry_run: bool = False, prune: bool = False, user=None
) -> ListImportReport:
    """Read ``file`` with the project's identity rules and import it (``list_import``); a file
    that is not its format raises ``ListFormatError``, a backend the project lacks
    ``TriageRejected``, as does a condition that cannot be read, and nothing is imported."""
    if file.condition.strip():
        try:
            condition_parse(file.condition)
        except ConditionError as exc:
            raise TriageRejected(
                f"Condition {file.condition!r}: {exc}", field="condition"
            ) from None
    names = _backend_names(project)
    for name in file.backends:
        if name.lower() not in names:
            known = ", ".join(sorted(set(names.values())))
            raise TriageRejected(f"Unknown backend '{name}' (known: {known}).", field="backends")
    options = ReadOptions(
        rules=project.normalization(),
        source_name=file.name,
        kind=file.kind,
        condition=file.condition,
        backends=file.backends,
        prefix=file.prefix,
    )
    read = list_read(file.format, file.text, options)
    source = file.source or list_source(file.format, file.name)
    return list_import(
        project=project,
        read=read,
        request=ListImportRequest(source=source, format=file.format, dry_run=dry_run, prune=prune),
        user=user,
    )
