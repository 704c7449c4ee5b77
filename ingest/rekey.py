"""Re-key a project's stored tests under new identity rules: a plan first, then the re-key.

Both read the stored raw uploads as re-ingest does (``pipeline.upload_rows``). The plan parses
each upload under the project's saved rules and under the new ones, case by case, and counts
which stored tests change key, which merge into one, which split. The re-key saves the rules and
re-ingests (``reingest.project_reingest``): results, reasons and roll-ups are rebuilt by the one
path that writes them, so a merge of two tests is one test whose results came from one ingest,
never two rows edited into one. There is no second mechanism that rewrites keys in place. A
triage written for one test follows it to its new key before the old row is deleted.

Forward only (``RekeyStatus``): planning → planned → running → done, or failed. Each task claims
its row in the state it expects and returns when it finds another: a rerun is a no-op.
"""

import logging
from collections import defaultdict
from dataclasses import asdict, dataclass

from celery.exceptions import SoftTimeLimitExceeded
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ingest.pipeline import BadUpload, upload_rows
from ingest.reingest import project_reingest, reingest_runs
from parity.models import Project, Rekey, RekeyStatus, TestCase, Upload, UploadStatus
from parity.pure.normalize import Rules, RulesError, validate_rules
from parity.services.identity import triages_follow_keys
from parity.services.projects import project_rules_update

logger = logging.getLogger(__name__)

EXAMPLES = 10


@dataclass(frozen=True)
class RekeyPlan:
    """What re-keying the stored tests under new rules does (``Rekey.plan``)."""

    runs: int
    uploads: int
    tests: int  # stored tests read: the keys the saved rules give the stored uploads' cases
    changed: int  # ... whose key changes
    merged_into: int  # new keys that each take two or more stored tests
    merging: int  # the stored tests those are
    split: int  # stored tests whose cases go to two or more new keys
    unmatched: int  # keys the saved rules give that no stored test has (keyed under older rules)
    examples: list[tuple[str, str]]  # (old key, new key), changed ones
    merges: list[tuple[str, list[str]]]  # (new key, the old keys it takes)


def rekey_plan_compute(*, project: Project, rules: Rules) -> tuple[RekeyPlan, dict[str, set[str]]]:
    """The plan, and every stored key's new keys. Reads every stored upload twice over."""
    saved = project.normalization()
    runs = list(reingest_runs(project=project))
    uploads = (
        Upload.objects.filter(run__in=runs, status=UploadStatus.DONE)
        .select_related("run__project")
        .order_by("pk")
    )
    mapping: dict[str, set[str]] = defaultdict(set)
    count = 0
    for upload in uploads:
        count += 1
        old_rows = upload_rows(upload, rules=saved)
        for old, new in zip(old_rows, upload_rows(upload, rules=rules), strict=True):
            mapping[old.key].add(new.key)
    stored = set(TestCase.objects.filter(project=project).values_list("key", flat=True))
    return _plan(mapping, runs=len(runs), uploads=count, stored=stored), mapping


def _plan(mapping: dict[str, set[str]], *, runs: int, uploads: int, stored: set[str]) -> RekeyPlan:
    takes: dict[str, list[str]] = defaultdict(list)
    for old, news in mapping.items():
        for new in news:
            takes[new].append(old)
    changed = sorted(old for old, news in mapping.items() if news != {old})
    merges = sorted((new, sorted(olds)) for new, olds in takes.items() if len(olds) > 1)
    return RekeyPlan(
        runs=runs,
        uploads=uploads,
        tests=len(mapping),
        changed=len(changed),
        merged_into=len(merges),
        merging=sum(len(olds) for _, olds in merges),
        split=sum(len(news) > 1 for news in mapping.values()),
        unmatched=len(mapping.keys() - stored),
        examples=[(old, min(mapping[old])) for old in changed[:EXAMPLES]],
        merges=[(new, olds[:EXAMPLES]) for new, olds in merges[:EXAMPLES]],
    )


def _claim(rekey_id: int, expected: str, then: str | None = None) -> Rekey | None:
    """The row when it is in the state a task expects (moved on to ``then``), else None."""
    with transaction.atomic():
        rekey = Rekey.objects.select_for_update().select_related("project").get(pk=rekey_id)
        if rekey.status != expected:
            logger.info("re-key %s is %s, not %s: nothing to do", rekey_id, rekey.status, expected)
            return None
        if then is not None:
            rekey.status = then
            rekey.save(update_fields=["status"])
    return rekey


def _fail(rekey: Rekey, message: str) -> None:
    Rekey.objects.filter(pk=rekey.pk).update(
        status=RekeyStatus.FAILED, message=message[:2000], finished_at=timezone.now()
    )
    logger.warning("re-key %s failed: %s", rekey.pk, message)


def rekey_plan(*, rekey_id: int) -> None:
    """Plan a stored request: count what its rules change."""
    rekey = _claim(rekey_id, RekeyStatus.PLANNING)
    if rekey is None:
        return
    try:
        plan, _ = rekey_plan_compute(project=rekey.project, rules=validate_rules(rekey.rules))
    except (BadUpload, RulesError) as exc:
        _fail(rekey, f"Cannot plan: {exc}")
        return
    except SoftTimeLimitExceeded:
        _fail(rekey, "Planning ran out of time: re-ingest with `manage.py reingest` instead.")
        return
    Rekey.objects.filter(pk=rekey.pk, status=RekeyStatus.PLANNING).update(
        status=RekeyStatus.PLANNED, plan=asdict(plan)
    )


def rekey_run(*, rekey_id: int) -> None:
    """Save a planned request's rules, re-ingest every stored run under them, move triages to
    their tests' new keys, recompute, and delete the keys no result uses any more."""
    rekey = _claim(rekey_id, RekeyStatus.PLANNED, RekeyStatus.RUNNING)
    if rekey is None:
        return
    project = Project.objects.get(pk=rekey.project_id)
    if (project.normalization_rules or {}) != rekey.rules_before:
        _fail(rekey, "The project's rules changed after this plan was made: plan again.")
        return
    try:
        rules = validate_rules(rekey.rules)
        plan, mapping = rekey_plan_compute(project=project, rules=rules)
        project_rules_update(project=project, rules=rekey.rules)
        moves = {old: next(iter(news)) for old, news in mapping.items() if len(news) == 1}
        moved: list[int] = []
        summary = project_reingest(
            project=project,
            before_recompute=lambda: moved.append(
                triages_follow_keys(project=project, moves=moves)
            ),
        )
    except (BadUpload, RulesError, ValidationError) as exc:
        _fail(rekey, f"Re-key stopped (runs re-ingested before stay re-keyed): {exc}")
        return
    except SoftTimeLimitExceeded:
        _fail(
            rekey,
            "Re-key ran out of time; the rules are saved and the runs re-ingested before stay "
            f"re-keyed: finish with `manage.py reingest {project.slug}`.",
        )
        return
    Rekey.objects.filter(pk=rekey.pk).update(
        status=RekeyStatus.DONE,
        finished_at=timezone.now(),
        summary={
            "plan_at_run": asdict(plan),
            "runs": summary.runs,
            "uploads": summary.uploads,
            "results": summary.results,
            "tests_deleted": summary.orphans_deleted,
            "triages_moved": sum(moved),
        },
    )
    logger.info("re-key %s done: %s runs, %s tests", rekey.pk, summary.runs, plan.changed)
