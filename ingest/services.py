"""The upload service: accept an upload, store its raw files, queue its ingest. And a re-key
of stored tests under new identity rules, stored then queued the same way (``ingest.rekey``).

Completing a run is the run lifecycle's (``parity.services.lifecycle``), which the API calls
directly.
"""

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile as DjangoUploadedFile
from django.db import IntegrityError, transaction
from django.utils import timezone

from ingest.tasks import rekey_send, upload_send
from parity.definitions import file_truncated
from parity.models import (
    Backend,
    Project,
    Rekey,
    RekeyStatus,
    Run,
    RunFile,
    RunFileState,
    Upload,
    UploadFile,
    UploadStatus,
    UploadToken,
)
from parity.models.cleanup import raw_file_delete
from parity.pure.normalize import RulesError, validate_rules
from parity.pure.run_manifest import FileRun, file_state
from parity.pure.shards import shard_parse
from parity.raw_storage import raw_save
from parity.result_reads.verdict import baseline_run_pick
from parity.services.variants import VariantRejected, backend_for_run
from parity.storage.partitions import partition_ensure_quietly

logger = logging.getLogger(__name__)


class UploadRejected(Exception):
    """A request the API answers with a clear message and an HTTP status; nothing is stored."""

    status_code = 400

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        if status_code is not None:
            self.status_code = status_code


@dataclass(frozen=True)
class UploadRequest:
    project: str
    backend: str
    commit: str
    branch: str = ""
    run_key: str = ""
    ci_url: str = ""
    complete: bool = False
    file_hint: str = ""
    started_at: datetime | None = None
    probe: bool = False
    exemptions_version: str = ""
    run_manifest: tuple[FileRun, ...] = ()
    attributes: dict[str, str] = field(default_factory=dict)  # checked: attributes_check
    hw_classification: dict[str, str] = field(default_factory=dict)
    shard: str = ""
    suite: str = ""  # the suite or CI job (parity.models.suites)


def project_for_token(*, token: UploadToken, slug: str) -> Project:
    """The project ``slug`` names, which must be the token's own (loaded with the token)."""
    if token.project.slug == slug:
        return token.project
    if not Project.objects.filter(slug=slug).exists():
        raise UploadRejected(
            f"Unknown project '{slug}'. Your token's project is: {token.project.slug}."
        )
    raise UploadRejected(
        f"This token belongs to project '{token.project.slug}' and cannot upload to '{slug}'.",
        status_code=403,
    )


def backend_resolve(*, project: Project, name: str) -> Backend:
    backend = project.backend_named(name)
    if backend is None:
        raise UploadRejected(
            f"Unknown backend '{name}' for project '{project.slug}'. "
            f"Known: {project.backend_names()}."
        )
    return backend


def token_backend_check(*, token: UploadToken, backend: Backend) -> None:
    """A token an OIDC trust rule scoped to some backends uploads (and completes runs) of
    those only: 403 naming the backend otherwise."""
    if not token.may_upload_to(backend):
        raise UploadRejected(
            f"This token may upload to backend(s) {', '.join(token.backends)} only, "
            f"not '{backend.name}' (its trust rule's backends).",
            status_code=403,
        )


def default_run_key(*, commit: str, branch: str, backend: str, probe: bool = False) -> str:
    # A probe of a commit is a run of its own beside that commit's run.
    return f"{commit}:{branch}:{backend}" + (":probe" if probe else "")


def _probe_check(run: Run, request: UploadRequest) -> None:
    """A shard cannot turn a run into a probe or back: a probe's results must never be
    compared, and a run's must."""
    if run.probe != request.probe:
        what = "a probe run" if run.probe else "not a probe run"
        raise UploadRejected(
            f"Run '{run.key}' is {what}: send every shard of it with probe={str(run.probe).lower()}"
            " or use another 'run' key."
        )


def _attributes_agree(run: Run, request: UploadRequest) -> None:
    """Every shard of a run describes one machine: a shard sends the run's attributes, or none
    (it then takes the run's)."""
    if request.attributes and request.attributes != run.attributes:
        differ = sorted(
            key
            for key in {*request.attributes, *run.attributes}
            if request.attributes.get(key) != run.attributes.get(key)
        )
        raise UploadRejected(
            f"Run '{run.key}' has attributes {run.attributes}; this shard sends "
            f"{request.attributes} (they differ in {', '.join(differ)}). Send every shard of a "
            "run with the same attributes, or use another 'run' key."
        )


def _shard_count_agrees(run: Run, request: UploadRequest) -> None:
    """The shards of a run say one count: ``2/4`` and ``3/3`` would leave it waiting for a
    shard that never comes, or complete it early."""
    parsed = shard_parse(request.shard)
    if parsed is None:
        return
    labels = Upload.objects.filter(run=run).exclude(shard="").values_list("shard", flat=True)
    counts = {p[1] for p in map(shard_parse, set(labels)) if p is not None}
    if counts - {parsed[1]}:
        raise UploadRejected(
            f"Run '{run.key}' has {'/'.join(map(str, sorted(counts)))} shards (its uploads say "
            f"so); this upload says shard {request.shard}. Send every shard of a run with the "
            "same count, or use another 'run' key."
        )


def _run_backend(*, project: Project, backend: Backend, request: UploadRequest) -> Backend:
    """The backend the run belongs to: ``backend``, or its variant for the run's attributes."""
    try:
        return backend_for_run(project=project, backend=backend, attributes=request.attributes)
    except VariantRejected as exc:
        raise UploadRejected(str(exc)) from None


def _file_digest(file: DjangoUploadedFile) -> str:
    digest = hashlib.sha256()
    for chunk in file.chunks():
        digest.update(chunk)
    file.seek(0)
    return digest.hexdigest()


def upload_create(
    *, token: UploadToken, request: UploadRequest, files: list[DjangoUploadedFile]
) -> tuple[Upload, bool]:
    """Store the raw files and queue their ingestion; the same content sent again to the same
    run returns the existing upload (``created`` False) and stores nothing."""
    # A shard the split left nothing to run still arrives (its manifest empty): the run counts
    # its shards to complete.
    if not files and not request.run_manifest and not shard_parse(request.shard):
        raise UploadRejected("Send at least one 'file' part (.xml, .xml.gz, .zip or .tar.gz).")
    project = project_for_token(token=token, slug=request.project)
    backend = backend_resolve(project=project, name=request.backend)
    token_backend_check(token=token, backend=backend)
    digests = [_file_digest(f) for f in files]
    # The manifest is part of the content: shards whose files all crashed send the same (no)
    # reports, and each one's manifest must still be kept.
    upload_digest = hashlib.sha256(
        "\n".join(
            [*sorted(digests), *_manifest_lines(request.run_manifest), *_shard_line(request)]
        ).encode()
    ).hexdigest()
    stored_names: list[str] = []
    try:
        return _upload_store(
            request=request,
            project=project,
            backend=backend,
            files=files,
            digests=digests,
            upload_digest=upload_digest,
            stored_names=stored_names,
        )
    except BaseException:
        # Nothing of a request that failed stays, in Postgres or in the storage: its rows rolled
        # back, and the files it stored before the failure go too.
        for name in stored_names:
            raw_file_delete(default_storage, name)
        raise


def _upload_store(
    *,
    request: UploadRequest,
    project: Project,
    backend: Backend,
    files: list[DjangoUploadedFile],
    digests: list[str],
    upload_digest: str,
    stored_names: list[str],
) -> tuple[Upload, bool]:
    """The rows and the raw files of a new upload, in one transaction; the name of each file
    stored goes to ``stored_names`` as soon as it is stored."""
    with transaction.atomic():
        # In the upload's transaction: a refused upload leaves no variant behind.
        backend = _run_backend(project=project, backend=backend, request=request)
        run_key = request.run_key or default_run_key(
            commit=request.commit, branch=request.branch, backend=backend.name, probe=request.probe
        )
        run, run_created = Run.objects.get_or_create(
            project=project,
            backend=backend,
            key=run_key,
            defaults={
                "commit": request.commit,
                "branch": request.branch,
                "ci_url": request.ci_url,
                "started_at": request.started_at or timezone.now(),
                "probe": request.probe,
                "exemptions_version": request.exemptions_version,
                "attributes": request.attributes,
            },
        )
        if run_created:
            transaction.on_commit(lambda: partition_ensure_quietly(run_id=run.pk))
        _probe_check(run, request)
        _attributes_agree(run, request)
        _shard_count_agrees(run, request)
        existing = Upload.objects.filter(run=run, sha256=upload_digest).first()
        if existing is not None:
            _requeue_if_pending(existing)
            return existing, False
        try:
            with transaction.atomic():
                upload = Upload.objects.create(
                    run=run,
                    sha256=upload_digest,
                    size=sum(f.size for f in files),
                    completes_run=request.complete,
                    file_hint=request.file_hint,
                    declarations=(
                        {"hw_classification": request.hw_classification}
                        if request.hw_classification
                        else {}
                    ),
                    shard=request.shard,
                    suite=request.suite,
                )
        except IntegrityError:  # the same content arrived concurrently and won the race
            return Upload.objects.get(run=run, sha256=upload_digest), False
        for file, digest in zip(files, digests, strict=True):
            stored = UploadFile(upload=upload, name=file.name, sha256=digest, size=file.size)
            stored_names.append(raw_save(stored.raw, name=file.name, content=file))
            stored.save()
        _run_files_merge(run=run, upload=upload, entries=request.run_manifest)
        transaction.on_commit(lambda: upload_send(upload.pk))
    logger.info("upload %s queued for run %s (%s bytes)", upload.pk, run.pk, upload.size)
    return upload, True


def _manifest_lines(entries: tuple[FileRun, ...]) -> list[str]:
    return [f"manifest {entry!r}" for entry in entries]


def _shard_line(request: UploadRequest) -> list[str]:
    # Two shards that sent the same (no) reports are two uploads, each naming its shard; two
    # suites too. Neither line is there without its field, so older digests still match.
    return [
        *([f"shard {request.shard}"] if request.shard else []),
        *([f"suite {request.suite}"] if request.suite else []),
    ]


def run_file_row(entry: FileRun, *, run: Run, upload: Upload | None = None) -> RunFile:
    """The row (unsaved) of one run manifest entry, its state read from it."""
    return RunFile(
        run=run,
        upload=upload,
        file=entry.file,
        state=file_state(entry),
        started=entry.started,
        exit_code=entry.exit_code,
        signal=entry.signal,
        timed_out=entry.timed_out,
        duration=entry.duration,
        report=entry.report,
        tests=entry.tests,
    )


def _run_files_merge(*, run: Run, upload: Upload, entries: tuple[FileRun, ...]) -> None:
    """Record what the job was told to run and what happened to each file. Shards merge by
    file: a file some upload started is kept over one that only expected it (a plain upload's
    ``--expected-files``), and the latest started entry wins over an earlier one (a rerun)."""
    rows = [run_file_row(entry, run=run, upload=upload) for entry in entries]
    started = [row for row in rows if row.started]
    expected = [row for row in rows if not row.started]
    _truncated_mark(run=run, rows=started)
    if started:
        RunFile.objects.bulk_create(
            started,
            batch_size=5000,
            update_conflicts=True,
            unique_fields=["run", "file"],
            update_fields=[
                "upload",
                "state",
                "started",
                "exit_code",
                "signal",
                "timed_out",
                "duration",
                "report",
                "tests",
                "baseline_tests",
            ],
        )
    if expected:
        RunFile.objects.bulk_create(expected, batch_size=5000, ignore_conflicts=True)


def _truncated_mark(*, run: Run, rows: list[RunFile]) -> None:
    """Mark each file that ran normally ``truncated`` when its report held far fewer tests than
    in the backend's last complete run that ran it normally (``file_truncated``, the project's
    ``truncation_percent``): its tests without a result are then infrastructure's, not gaps of
    the backend. Two queries, by the run index and the manifest's (run, file) key."""
    counted = {r.file: r for r in rows if r.state == RunFileState.RAN and r.tests is not None}
    if not counted:
        return
    baseline = baseline_run_pick(run=run)
    if baseline is None:
        return
    before = RunFile.objects.filter(
        run=baseline, file__in=list(counted), state=RunFileState.RAN, tests__isnull=False
    ).values_list("file", "tests")
    percent = run.project.truncation_percent
    for file, previous in before:
        row = counted[file]
        if file_truncated(previous=previous, current=row.tests, percent=percent):
            row.state, row.baseline_tests = RunFileState.TRUNCATED, previous


def _requeue_if_pending(upload: Upload) -> None:
    """A client resending content it got no answer for must not find a dead upload: queue a
    pending one again. Harmless when a worker has it (the claim is a row lock). The send clears
    an ``unsent`` mark, so recovery does not send a second message (a failed send sets it again)."""
    if upload.status in (UploadStatus.QUEUED, UploadStatus.PROCESSING):
        Upload.objects.filter(pk=upload.pk, unsent=True).update(unsent=False)
        transaction.on_commit(lambda: upload_send(upload.pk))


class RekeyRejected(ValueError):
    """A re-key that cannot be planned or run; str() says why, and nothing is stored."""


def rekey_request(*, project: Project, rules: dict, user=None) -> Rekey:
    """Store new identity rules to plan a re-key under, and queue the plan. ``RekeyRejected``
    naming the rule at fault when they are invalid. The project's rules change only when the
    re-key runs (``rekey_start``)."""
    try:
        validate_rules(rules)
    except RulesError as exc:
        raise RekeyRejected(str(exc)) from exc
    rekey = Rekey.objects.create(
        project=project,
        rules=rules,
        rules_before=project.normalization_rules or {},
        created_by=user if user is not None and user.is_authenticated else None,
    )
    transaction.on_commit(lambda: rekey_send(rekey.pk, run=False))
    return rekey


def rekey_start(*, rekey: Rekey) -> None:
    """Queue the re-key of a planned request, once a maintainer has read its plan."""
    rekey.refresh_from_db(fields=["status"])
    if rekey.status != RekeyStatus.PLANNED:
        raise RekeyRejected(f"Re-key {rekey.pk} is {rekey.status}, not planned: nothing to run.")
    transaction.on_commit(lambda: rekey_send(rekey.pk, run=True))
