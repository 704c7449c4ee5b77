"""What an issue filed from parity is about: the open gaps a maintainer picked (one, or several
selected on the gaps page), those of one skip reason (on one backend, or on every one), or the
untracked ones of a test file on a backend (a group of the triage queue), with
what the issue's text names: tests, backends, states, reason, first seen. One query."""

from dataclasses import dataclass
from datetime import datetime

from parity.definitions import untracked_q
from parity.models import Gap, GapState, Project
from parity.pure.normalize import display_id

MAX_GAPS = 500  # an issue lists at most this many tests; more is a pattern, not an issue


@dataclass(frozen=True)
class DraftGap:
    id: int
    test_id: int
    test: str  # its ID as people paste it into a runner
    backend: str
    state: str
    reason: str | None
    opened_at: datetime


@dataclass(frozen=True)
class IssueSubject:
    """The gaps an issue will track, and what names them in a triage afterwards."""

    gaps: list[DraftGap]  # by backend, then test
    reference: str | None
    reason_id: int | None  # the skip reason, when the issue is about one
    backend: str | None  # the reason's or file's backend; None: every backend
    more: int  # gaps left out past MAX_GAPS
    file: str | None = None  # the test file, when the issue is about one on ``backend``

    @property
    def backends(self) -> list[str]:
        return sorted({gap.backend for gap in self.gaps})


def issue_subject(
    *,
    project: Project,
    gap_ids: list[int] | None = None,
    reason_id: int | None = None,
    backend: str | None = None,
    file: str | None = None,
) -> IssueSubject:
    """The open gaps named by ``gap_ids``, those skipped for reason ``reason_id`` (on
    ``backend`` when given), or the untracked ones of test ``file`` on ``backend``.
    ``reference_missing`` rows are never an issue's subject."""
    gaps = Gap.objects.filter(project=project, is_open=True).exclude(
        state=GapState.REFERENCE_MISSING
    )
    if reason_id is not None:
        gaps = gaps.filter(reason_id=reason_id)
        if backend:
            gaps = gaps.filter(backend__name=backend)
    elif file is not None:
        gaps = gaps.filter(untracked_q(), test__file=file, backend__name=backend or "")
    else:
        gaps = gaps.filter(pk__in=gap_ids or [])
    rows = list(
        gaps.select_related("test", "backend", "reason").order_by("backend__name", "test__key")[
            : MAX_GAPS + 1
        ]
    )
    reference = project.reference_backend.name if project.reference_backend_id else None
    return IssueSubject(
        gaps=[_draft_gap(gap) for gap in rows[:MAX_GAPS]],
        reference=reference,
        reason_id=reason_id,
        backend=backend if reason_id is not None or file is not None else None,
        more=max(0, gaps.count() - MAX_GAPS) if len(rows) > MAX_GAPS else 0,
        file=file if reason_id is None else None,
    )


def _draft_gap(gap: Gap) -> DraftGap:
    return DraftGap(
        id=gap.pk,
        test_id=gap.test_id,
        test=display_id(gap.test.file, gap.test.class_name, gap.test.name),
        backend=gap.backend.name,
        state=gap.state,
        reason=gap.reason.text if gap.reason else None,
        opened_at=gap.opened_at,
    )
