"""Writes of a project's test identity: a shipped preset picked, triages that follow a re-key."""

from django.db import transaction

from parity.models import Project, TestCase, Triage
from parity.models.projects import project_lock
from parity.pure.normalize.presets import preset_rules
from parity.services.projects import project_rules_update


def project_rules_preset(*, project: Project, preset: str) -> Project:
    """Replace ``project``'s identity rules with a copy of the shipped ``preset``'s, to edit from
    there. ``KeyError`` naming the presets when there is no such one. Stored tests keep their
    keys until a re-key (``ingest.rekey``) or ``reingest``."""
    return project_rules_update(project=project, rules=preset_rules(preset))


@transaction.atomic
def triages_follow_keys(*, project: Project, moves: dict[str, str]) -> int:
    """Point each triage written for one test whose key a re-key changed (``moves``: old key →
    new key) at the test under its new key, so it is not deleted with the old row. Two tests that
    merged keep both their triages on the one test. Returns how many moved."""
    project_lock(project_id=project.pk)
    triaged = Triage.objects.filter(project=project, test__isnull=False).values("test_id")
    olds = {
        test.pk: moves[test.key]
        for test in TestCase.objects.filter(project=project, pk__in=triaged).only("pk", "key")
        if moves.get(test.key, test.key) != test.key
    }
    targets = dict(
        TestCase.objects.filter(project=project, key__in=set(olds.values())).values_list(
            "key", "pk"
        )
    )
    moved = 0
    for old_id, new_key in olds.items():
        if new_key in targets:
            moved += Triage.objects.filter(project=project, test_id=old_id).update(
                test_id=targets[new_key]
            )
    return moved
