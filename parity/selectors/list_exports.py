"""A project's exemptions written as one of the lists teams keep (``parity.pure.list_formats``):
``export_exemptions``, ``GET …/exemptions/export/`` and the exemptions page's links."""

from dataclasses import dataclass

from parity.models import ListRowsKept, Project, Triage
from parity.pure.list_formats import FORMATS, ListEntry, Unread
from parity.selectors.exemptions import exemptions_list


@dataclass(frozen=True)
class ExportQuery:
    format: str
    backend: str | None = None  # those that apply there (naming it, or every backend)
    kind: str | None = None
    source: str | None = None  # exactly this source ("import:amd-csv"); "": those made here


@dataclass(frozen=True)
class ListExport:
    text: str
    content_type: str
    filename: str
    written: int  # exemptions the text holds
    skipped: list[Unread]  # exemptions the format cannot spell, and why


def exemptions_export(*, project: Project, query: ExportQuery) -> ListExport:
    """The exemptions CI applies today (not expired, not set aside by a maintainer) that match
    ``query``, in ``query.format``, with the rows its lists keep (``_rows_kept``). Three
    queries."""
    listed = FORMATS[query.format]
    triages = exemptions_list(
        project=project, backend=query.backend, kind=query.kind, expired=False
    ).filter(overridden=False)
    if query.source is not None:
        triages = triages.filter(source=query.source)
    entries, skipped = [], []
    for triage in triages.prefetch_related(None).prefetch_related("backends"):
        entry = triage_entry(triage)
        if entry is None:
            skipped.append(Unread(f"triage {triage.pk}", "names a skip reason, not tests"))
        else:
            entries.append(entry)
    kept = _rows_kept(project=project, query=query)
    written = listed.write(entries + kept)
    return ListExport(
        text=written.text,
        content_type=listed.content_type,
        filename=listed.filename,
        written=len(entries) - len(written.skipped),
        skipped=skipped + written.skipped,
    )


def _rows_kept(*, project: Project, query: ExportQuery) -> list[ListEntry]:
    """The rows the exported lists keep that declare nothing (``ListRowsKept``), as entries
    that write back as they were: an export of every exemption of the list's format, or of
    that list, gives them back. One query."""
    if query.kind or query.backend or query.source == "":
        return []  # an export of some exemptions: these rows are none of them
    kept = ListRowsKept.objects.filter(project=project, format=query.format)
    if query.source is not None:
        kept = kept.filter(source=query.source)
    return [
        ListEntry(match=row.get("match", ""), kind="", extra=row, where=f"{lst.source} kept")
        for lst in kept.order_by("source")
        for row in lst.rows
    ]


def triage_entry(triage: Triage) -> ListEntry | None:
    """A triage as a list entry: its pattern (a test's ID for a test's), None for a reason's."""
    match = triage.match or (triage.test.key if triage.test_id else "")
    if not match:
        return None
    return ListEntry(
        match=match,
        kind=triage.kind,
        backends=tuple(sorted(b.name for b in triage.backends.all())),
        reason=triage.note,
        issue=(triage.issue.url or triage.issue.key) if triage.issue_id else "",
        condition=triage.condition,
        extra=triage.extra or {},
        where=f"triage {triage.pk}",
    )
