"""The split of a sharded run, fixed for its run key.

Each shard of a CI run asks the manifest for the files to run and splits them by duration
(``parity_ci.py files --shard I/N``). The files come from the reference's current run and the
durations from the backend's, and either moves when a run completes: a shard of the same run
that completed early, another commit's run, the reference's nightly. Shards that ask a minute
apart then split different lists, run some files twice and some never. So the first request
under a run key stores the files and durations it answered, and every later one under that key
gets them back (``RunSplit``); the exemptions stay live.
"""

import datetime

from django.db import router
from django.utils import timezone

from parity.models import Backend, Project, RunSplit

# A pin serves the jobs of one CI run, which start within hours of each other; kept a week, so
# a job rerun days later still splits as its run did.
KEEP = datetime.timedelta(days=7)


def run_split_pin(
    *,
    project: Project,
    backend: Backend,
    key: str,
    files: list[str],
    durations: dict[str, float],
    create: bool,
) -> RunSplit | None:
    """The split pinned for ``key`` on ``backend``: the one stored, else (``create``) ``files``
    and ``durations`` stored now. None when there is none and ``create`` is false."""
    db = router.db_for_write(RunSplit)  # a replica may not have another shard's pin yet
    pinned = RunSplit.objects.using(db).filter(backend=backend, key=key).first()
    if pinned is not None or not create:
        return pinned
    RunSplit.objects.using(db).filter(
        backend=backend, created_at__lt=timezone.now() - KEEP
    ).delete()
    RunSplit.objects.using(db).bulk_create(
        [RunSplit(project=project, backend=backend, key=key, files=files, durations=durations)],
        ignore_conflicts=True,  # another shard pinned it at the same moment: that one holds
    )
    return RunSplit.objects.using(db).get(backend=backend, key=key)
