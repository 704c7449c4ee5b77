"""The gaps a week's runs uncovered, for the weekly digest (``parity.selectors.digest``'s
``uncovered``): each complete default-branch run of the week (one that may be current) judged
as its verdict is (``run_uncovered``: an exemption covered the gap for the run before and none
does now: it lapsed, expired or was removed), one row per backend and test, the latest run's
word. The reference judges no gap of its own here, as on the digest's other lines.

Most weeks nothing can have been uncovered: no triage of the project is conditioned or past its
expiry day, and none was removed. Then it reads two queries and no results; otherwise a few per
run of the week (and the results of those whose triages apply differently)."""

from django.db.models import Q
from django.utils import timezone

from parity.definitions import current_runs, triages_unexpired
from parity.models import ExemptionRemoval, Project, Triage
from parity.pure.weeks import Week
from parity.result_reads.verdict import run_uncovered
from parity.selectors.digest import UncoveredGapRow


def week_uncovered(*, project: Project, week: Week) -> list[UncoveredGapRow]:
    today = timezone.now().date()
    triages = Triage.objects.filter(project=project)
    if not (
        triages.filter(~Q(condition="") | ~triages_unexpired(today)).exists()
        or ExemptionRemoval.objects.filter(project=project).exists()
    ):
        return []
    runs = (
        current_runs(project)
        .filter(started_at__gte=week.start, started_at__lt=week.end)
        .exclude(backend_id=project.reference_backend_id)
        .select_related("backend", "project")
        .order_by("started_at", "pk")
    )
    found: dict[tuple[str, int], UncoveredGapRow] = {}
    for run in runs:
        for gap in run_uncovered(run=run):
            found[(run.backend.name, gap.test_id)] = UncoveredGapRow(
                backend=run.backend.name,
                test=gap.test,
                test_id=gap.test_id,
                state=gap.state,
                exemption=gap.exemption,
                why=gap.why,
            )
    return sorted(found.values(), key=lambda u: (u.backend, u.test))
