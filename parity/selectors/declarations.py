"""The project's declarations that tests are not applicable on backends (``not_applicable``
triages: a hardware classification, an imported exclusion list, its own list), each with its
source and how many reference-passing tests it keeps out of each backend's gaps and score, and,
under an agreement score, how many of the reference's other tests it keeps out of that."""

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count

from parity.models import DeclaredNotPassed, Gap, Project, Triage, TriageKind


@dataclass(frozen=True)
class DeclarationRow:
    triage: Triage
    backends: list[str]  # the backends it names; empty: every backend
    # Per backend name, the reference-passing tests it keeps out of the gaps there now.
    tests: dict[str, int] = field(default_factory=dict)
    # Per backend name, the tests the reference did not pass whose outcome differs there that it
    # keeps out of the agreement score (``DeclaredNotPassed``; none under the default score).
    agreement: dict[str, int] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return self.triage.source or "written in parity"


def declarations(*, project: Project) -> list[DeclarationRow]:
    """Every not-applicable declaration of ``project`` (overridden ones too), by source then
    pattern. Three queries: the declarations, their flagged gaps counted per backend, and what
    they keep out of an agreement score."""
    triages = (
        Triage.objects.filter(project=project, kind=TriageKind.NOT_APPLICABLE)
        .select_related("test", "reason")
        .prefetch_related("backends")
        .order_by("source", "match", "pk")
    )
    counted = (
        Gap.objects.filter(project=project, is_open=True, not_applicable=True)
        .values_list("triage_id", "backend__name")
        .annotate(n=Count("pk"))
        .order_by()
    )
    tests: dict[int, dict[str, int]] = defaultdict(dict)
    for triage_id, backend, n in counted:
        tests[triage_id][backend] = n
    agreement: dict[int, dict[str, int]] = defaultdict(dict)
    for triage_id, backend, n in DeclaredNotPassed.objects.filter(project=project).values_list(
        "triage_id", "backend__name", "tests"
    ):
        agreement[triage_id][backend] = n
    return [
        DeclarationRow(
            triage=t,
            backends=sorted(b.name for b in t.backends.all()),
            tests=dict(sorted(tests[t.pk].items())),
            agreement=dict(sorted(agreement[t.pk].items())),
        )
        for t in triages
    ]
