"""The entry point: every backend's nightly run, split into the files its CI uploads."""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from parity.demo.scenario.cases import BACKENDS, SEED, Case, Outcome
from parity.demo.scenario.events import day_results
from parity.demo.scenario.junit import merged_xml_bytes, skip_wording, zip_bytes
from parity.demo.scenario.plan import UPSTREAM_SHARD, plan_build
from parity.demo.scenario.stories import events_build
from parity.demo.scenario.timing import timed

BRANCH = "master"
# Per backend, its uploads in order: (label, "zip" | "xml", shards it holds; None = the rest).
# CPU and GPU upload zipped test-reports folders per CI shard, like PyTorch's CI artifacts;
# TPU (one matrix job per script) and Neuron (AWS's nightly) upload merged XML.
UPLOADS: dict[str, tuple[tuple[str, str, tuple[str, ...] | None], ...]] = {
    "cpu": (
        ("shard1", "zip", ("run_xla_op_tests1", "run_xla_op_tests2")),
        ("shard2", "zip", None),
        ("torch_op", "xml", (UPSTREAM_SHARD,)),
    ),
    "gpu": (
        ("shard1", "zip", ("run_xla_op_tests1",)),
        ("shard2", "zip", None),
        ("torch_op", "xml", (UPSTREAM_SHARD,)),
    ),
    "tpu": (
        ("run_tests", "xml", ("test/tpu/run_tests.sh",)),
        ("other_scripts", "xml", None),
    ),
    "neuron": (("nightly", "xml", None),),
}
# The suite each upload names, as its backend's CI calls it (docs/suites.md): the runner script
# it comes from, or the runner's function for the upstream op tests. CPU's two shards are one
# suite, as PyTorch/XLA's matrix jobs run one script; ``parity.demo.suites`` maps the names.
UPLOAD_SUITES: dict[str, dict[str, str]] = {
    "cpu": {"shard1": "test/run_tests.sh", "shard2": "test/run_tests.sh",
            "torch_op": UPSTREAM_SHARD},
    "gpu": {"shard1": "test/run_tests.sh", "shard2": "test/run_tests.sh",
            "torch_op": UPSTREAM_SHARD},
    "tpu": {"run_tests": "test/tpu/run_tests.sh", "other_scripts": "test/tpu/other_scripts"},
    "neuron": {"nightly": "test/neuron/run_tests.sh"},
}  # fmt: skip
RUN_START_HOUR = {"cpu": 2, "gpu": 2, "tpu": 4, "neuron": 7}  # UTC, nightly


@dataclass(frozen=True)
class DemoUpload:
    backend: str  # "cpu" | "gpu" | "tpu" | "neuron"
    day: datetime.date
    commit: str  # 40-hex, deterministic per day (one commit per day shared by all backends)
    branch: str  # "master"
    run_key: str  # f"{commit}-{backend}"
    suite: str  # the suite it names, as its backend's CI calls it (UPLOAD_SUITES)
    complete: bool  # True on the last shard of the run
    filename: str  # e.g. "test-reports-cpu-shard1.zip" or "TEST-tpu-run_tests.xml"
    content: bytes  # the file to upload: JUnit XML, or a .zip of a test-reports folder


def demo_uploads(
    fixture: dict[str, Any], *, days: int = 28, end: datetime.date
) -> Iterator[DemoUpload]:
    """Every upload of ``days`` daily runs per backend, the last run on ``end``, oldest first."""
    plans = {backend: plan_build(fixture, backend) for backend in BACKENDS}
    events = events_build(fixture, plans, days)
    for index in range(days):
        day = end - datetime.timedelta(days=days - 1 - index)
        commit = hashlib.sha1(f"{SEED}:commit:{day.isoformat()}".encode()).hexdigest()
        for backend in BACKENDS:
            results = day_results(plans[backend], events, backend, index)
            yield from _run_uploads(backend, day, commit, results)


def _run_uploads(
    backend: str, day: datetime.date, commit: str, results: list[tuple[Case, Outcome]]
) -> Iterator[DemoUpload]:
    specs = UPLOADS[backend]
    groups: list[list[tuple[Case, Outcome]]] = [[] for _ in specs]
    for case, outcome in results:
        groups[_upload_index(specs, case.shard)].append((case, outcome))
    start = datetime.datetime.combine(day, datetime.time(RUN_START_HOUR[backend]))
    wording = skip_wording(backend, day)
    for number, ((label, kind, _), group) in enumerate(zip(specs, groups, strict=True), 1):
        render = zip_bytes if kind == "zip" else merged_xml_bytes
        yield DemoUpload(
            backend=backend,
            day=day,
            commit=commit,
            branch=BRANCH,
            run_key=f"{commit}-{backend}",
            suite=UPLOAD_SUITES[backend][label],
            complete=number == len(specs),
            filename=f"test-reports-{backend}-{label}.zip"
            if kind == "zip"
            else f"TEST-{backend}-{label}.xml",
            content=render(timed(group, start, backend, day), wording),
        )


def _upload_index(specs: tuple[tuple[str, str, tuple[str, ...] | None], ...], shard: str) -> int:
    for index, (_, _, shards) in enumerate(specs):
        if shards is not None and shard in shards:
            return index
    return next(index for index, (_, _, shards) in enumerate(specs) if shards is None)
