"""A shard's verdict: until its run is complete, a CI job of shard ``I/N`` is judged on its own
files.

Each shard of a sharded run gates on the verdict right after its own upload
(``parity_ci.py run --shard 2/4 … --complete --wait --gate``). The run then holds the other
shards' results too, as far as they have come: gating on the whole run failed shard 2 for a
test shard 3 broke, and shard 3 again. So, the run not complete, the verdict counts and lists
the opened gaps of the shard's files only, and names for rerun only the shard's files and
uploads. Once the run is complete (its last shard arrived, ``run_shards_arrived``) every shard
reads the whole run's verdict, missing tests included: it is the run's gate.
"""

from dataclasses import replace

from parity.models import Result, Run, RunFile, Upload
from parity.pure.shards import shard_parse
from parity.result_reads.verdict import ShardScope, Verdict, run_verdict


def shard_files(*, run: Run, shard: str) -> list[str]:
    """The test files the shard's uploads ran or were told to: their run manifest's files and
    the files of the results they reported (an upload without a manifest)."""
    uploads = list(Upload.objects.filter(run=run, shard=shard).values_list("pk", flat=True))
    listed = RunFile.objects.filter(run=run, upload_id__in=uploads).values_list("file", flat=True)
    reported = (
        Result.objects.filter(run=run, upload_id__in=uploads)
        .values_list("test__file", flat=True)
        .distinct()
    )
    return sorted({*listed, *reported} - {""})


def run_verdict_of_shard(*, run: Run, shard: str, **options) -> Verdict:
    """``run_verdict`` (``options`` are its own) as shard ``shard`` (``"2/4"``) gates on it:
    scoped to its files while the run is not complete; the whole run's otherwise, or for a
    label that is no ``I/N``."""
    if run.complete or shard_parse(shard) is None:
        return run_verdict(run=run, **options)
    files = shard_files(run=run, shard=shard)
    verdict = run_verdict(run=run, files=files, **options)
    return replace(
        verdict,
        rerun=verdict.rerun.of_shard(shard=shard, files=set(files)),
        scope=ShardScope(shard=shard, files=len(files)),
    )
