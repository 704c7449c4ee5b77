"""One test on every backend: its current outcome, reason and issues, its open gap with the
triage, and its outcomes over the backend's last runs (``testcase_history``)."""

from dataclasses import dataclass

from parity.models import CurrentOutcome, Gap, Outcome, Project, TestCase
from parity.selectors.dashboard.files import ReasonInfo, TestCell, gap_info
from parity.selectors.dashboard.issues import issue_links
from parity.selectors.gaps import issue_urls
from parity.selectors.testcases import RunOutcome, testcase_history


@dataclass(frozen=True)
class BackendLine(TestCell):
    """The test on one backend: its current cell, and how it went in the last runs."""

    is_reference: bool
    timeline: list[RunOutcome]  # the last runs, oldest first


@dataclass(frozen=True)
class TestCasePage:
    __test__ = False  # not a pytest test class

    test: TestCase
    lines: list[BackendLine]  # the reference first


def testcase_page(*, project: Project, test: TestCase) -> TestCasePage:
    """The history reads the test's own results by index, at most ``HISTORY_RUNS`` runs per
    backend; everything else comes from the current outcomes and open gaps."""
    history = testcase_history(project=project, test=test)
    current = {
        c.backend_id: c
        for c in CurrentOutcome.objects.filter(test=test)
        .select_related("reason")
        .prefetch_related("reason__issues")
    }
    gaps = {
        g.backend_id: g
        for g in Gap.objects.filter(test=test, is_open=True)
        .select_related("reason", "triage__issue")
        .prefetch_related("reason__issues")
    }
    backends = sorted(
        project.backends.all(), key=lambda b: (b.pk != project.reference_backend_id, b.name)
    )
    lines = []
    for backend in backends:
        now, gap = current.get(backend.pk), gaps.get(backend.pk)
        reasons = {}
        for reason in (now.reason if now else None, gap.reason if gap else None):
            if reason is not None:
                links = issue_links(issue_urls(reason=reason, triage=None))
                reasons[reason.pk] = ReasonInfo(id=reason.pk, text=reason.text, issues=links)
        lines.append(
            BackendLine(
                backend=backend.name,
                is_reference=backend.pk == project.reference_backend_id,
                outcome=Outcome(now.outcome).label if now else None,
                reason=reasons.get(now.reason_id) if now else None,
                gap=gap_info(gap, reasons) if gap else None,
                timeline=list(reversed(history.backends[backend.name].history)),
            )
        )
    return TestCasePage(test=test, lines=lines)
