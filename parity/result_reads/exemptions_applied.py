"""The exemptions a run applied: which were added or removed since, and which conditioned
exemptions hold for it.

- Triage is read as it is now, not as it was when the run ran: a gap that an exemption added
  after the run covers counts tracked (triage, then re-run the gate job: it passes), and the
  gap names that exemption (``triage_added_after``). The run's ``exemptions_version`` (the
  manifest version CI applied) says which exemptions were added or removed since
  (``exemptions_applied``; the versions are kept by ``parity.services.exemption_lists``).
- A conditioned exemption (``rocm < 7.14``) applies where its condition holds for the run's own
  attributes (those its CI sent; none sent: its backend's current run's), as the manifest its CI
  applied held them: a pull request's run at another ROCm release is judged at that release.
  One that does not hold has lapsed for the run (``lapsed_triages``): the verdict's triage picks
  leave it out, and a gap it covered for the baseline is uncovered (``Verdict.uncovered``).
"""

from collections.abc import Callable
from dataclasses import dataclass

from parity.models import ExemptionList, Run, Triage
from parity.pure.attributes import condition_applies
from parity.pure.declarations import SOURCE as DECLARATION_SOURCE
from parity.selectors.manifest import (
    backend_attributes,
    backend_exemptions,
    backend_reason_exemptions,
    conditions_filter,
)


@dataclass(frozen=True)
class ExemptionsApplied:
    """The exemption list a run applied, and what changed in it since."""

    version: str  # "" when CI sent none
    known: bool  # parity served that version, so what changed since is known
    added: list["ListedExemption"]
    removed: list["ListedExemption"]


@dataclass(frozen=True)
class ListedExemption:
    """An exemption as a list CI fetched names it: the triage's id, pattern or test, and kind."""

    id: int
    match: str
    kind: str


def exemptions_applied(*, run: Run) -> tuple[ExemptionsApplied, set[int] | None]:
    """The run's exemption list against the backend's now, and the ids the run's list held
    (None: not known)."""
    version = run.exemptions_version
    listed = (
        ExemptionList.objects.filter(backend_id=run.backend_id, version=version).first()
        if version
        else None
    )
    if listed is None:
        return ExemptionsApplied(version=version, known=False, added=[], removed=[]), None
    before = {e["id"]: ListedExemption(**e) for e in listed.exemptions}
    # The list the run's CI would fetch now: conditions held to the run's attributes, as the
    # one it applied was (a conditioned exemption that does not hold for the run was in
    # neither).
    exemptions = [
        *backend_exemptions(project=run.project, backend=run.backend),
        *backend_reason_exemptions(project=run.project, backend=run.backend),
    ]
    if any(e.condition for e in exemptions):
        exemptions = conditions_filter(exemptions, run_attributes(run))
    now = {e.id: ListedExemption(id=e.id, match=e.match, kind=e.kind) for e in exemptions}
    # Declarations the run's own uploads sent (``hw_classification``): the list CI fetched
    # before it ran could not hold them, and nobody added them since.
    sent = set(
        Triage.objects.filter(
            project_id=run.project_id,
            source=DECLARATION_SOURCE,
            created_at__gte=run.created_at,
            pk__in=[pk for pk in now if pk not in before],
        ).values_list("pk", flat=True)
    )
    applied = ExemptionsApplied(
        version=version,
        known=True,
        added=[e for pk, e in now.items() if pk not in before and pk not in sent],
        removed=[e for pk, e in before.items() if pk not in now],
    )
    return applied, set(before)


def triage_added_after(*, run: Run, listed_ids: set[int] | None) -> Callable[[Triage], bool]:
    """Whether a triage came after the run: one not in the exemption list it applied
    (``listed_ids``, ``exemptions_applied``'s); when the list is not known, one made after
    parity received the run."""

    def after(triage: Triage) -> bool:
        if listed_ids is not None:
            return triage.pk not in listed_ids
        return triage.created_at > run.created_at

    return after


def conditioned_triages(*, project_id: int) -> list[tuple[int, str]]:
    """The project's conditioned triages: (id, condition)."""
    conditioned = Triage.objects.filter(project_id=project_id).exclude(condition="")
    return list(conditioned.values_list("pk", "condition"))


def lapsed_triages(*, run: Run, conditioned: list[tuple[int, str]]) -> list[int]:
    """The project's conditioned triages that do not apply for the run's attributes
    (``TriageLapse``'s rule, held to this run rather than its backend's current one), of
    ``conditioned`` (``conditioned_triages``')."""
    if not conditioned:
        return []
    attributes = run_attributes(run)
    return [pk for pk, condition in conditioned if not condition_applies(condition, attributes)]


def run_attributes(run: Run) -> dict[str, str]:
    """What a run's conditions are held to: the attributes its CI sent (over its backend's),
    or, none sent, its backend's current run's (as the manifest answers a request without)."""
    if run.attributes:
        return {**(run.backend.attributes or {}), **run.attributes}
    return backend_attributes(backend=run.backend)
