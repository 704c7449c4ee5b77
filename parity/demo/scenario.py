"""A deterministic CI history for the pytorch-xla demo, built from ``fixture.json``.

``demo_uploads(fixture, end=date)`` yields, for each of ``days`` days and each backend, the
1-3 files its CI run would upload: JUnit XML written with junitparser, or a zip of an xmlrunner
``test-reports`` folder. Nothing here touches Django, the clock or the network, and the same
arguments always give the same bytes (every choice comes from ``SEED``).

How it mirrors the data (see the README of the shared ``data/pytorch-xla`` folder):

- Each backend runs the active files of its runner (fixture ``backends``), once per file.
  A file's tests are the inventory's, capped at ``MAX_TESTS_PER_FILE`` (the first in inventory
  order). The cap only trims test_core_aten_ops.py (491 tests): a day is then ~1.36k (CPU),
  ~1.0k (GPU), ~0.85k (TPU) and ~0.5k (Neuron) cases, ~104k over 28 days.
- Name shapes follow the README's table: unittest files as xmlrunner writes them
  (``classname="TestFoo" file="test/x.py"``), absl files as absltest does
  (``classname="__main__.TestFoo"``, a skip is ``status="notrun" result="suppressed"`` with no
  reason), the TPU ``python -m unittest`` file with its module (``test_mat_mul_precision.X``).
  In a zip each file's XML sits in ``test-reports/python-unittest/test.dir.test_x/``, the
  folder being the only file hint absl cases carry. Scripts with no per-test results
  (``torch_xla.launch`` programs, examples) get one case named ``main`` for their exit status,
  so every file a runner lists shows up; Neuron's runner names a file that does not exist,
  which errors every night.
- Skips come from the fixture's real rows, with their reason verbatim; on some days a
  backend's converter words them like pytest (``test/x.py:12: Skipped: <reason>``).
- Device-parameterized upstream tests (``TestViewOpsXLA.test_x_xla_float32``, file
  ``../../test/test_view_ops.py`` as the runner invokes it) run on all four backends under the
  same names, skipped (``skipped on XLA``) where that backend's DISABLED_TORCH_TESTS key lists
  them. Really only CPU (until 2025-08) and GPU ran them; the demo also runs them on TPU and
  Neuron (with the CPU key: Neuron has none) so one logical test can be followed everywhere.

What changes over the days is listed by ``demo_events``: gaps that open and close, a few
chronic failures, and one file dropped from Neuron's list midway. On top of that, a seeded
coin makes one test of a backend fail for a single day about one day in three.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import random
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from junitparser import Attr, Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

SEED = "parity-demo-pytorch-xla-1"
BACKENDS = ("cpu", "gpu", "tpu", "neuron")
BRANCH = "master"
MAX_TESTS_PER_FILE = 250
# Upstream test files run from pytorch/xla/test as ``python3 ../../test/test_x.py`` (README).
UPSTREAM_DIR = "../../"
UPSTREAM_SHARD = "run_torch_op_tests"
SCRIPT_CASE = "main"
REPORTS_DIR = "test-reports/python-unittest"
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
RUN_START_HOUR = {"cpu": 2, "gpu": 2, "tpu": 4, "neuron": 7}  # UTC, nightly
# Reason wordings a converter may produce; (weight, template). {where} is "file:line".
SKIP_WORDINGS = (
    (14, "{reason}"),
    (2, "{where}: {reason}"),
    (2, "{where}: Skipped: {reason}"),
    (1, "Skipped: {reason}"),
)
TENSOR_MISMATCH = (
    "Tensor-likes are not close!\n\nMismatched elements: 3 / 128 (2.3%)\n"
    "Greatest absolute difference: 0.0029296875 at index (5, 11) (up to 1e-05 allowed)\n"
    "Greatest relative difference: 0.0107421875 at index (5, 11) (up to 1.3e-06 allowed)"
)
SCALAR_MISMATCH = (
    "Scalars are not equal!\n\nExpected 1 but got 2.\nAbsolute difference: 1\n"
    "Relative difference: 1.0"
)
OUT_OF_MEMORY = (
    "Bad StatusOr access: RESOURCE_EXHAUSTED: Error allocating device buffer: "
    "Attempting to allocate 2.00G. That was not possible. There are 1.41G free."
)
FLAKY_CHANCE = 0.35


@dataclass(frozen=True)
class DemoUpload:
    backend: str  # "cpu" | "gpu" | "tpu" | "neuron"
    day: datetime.date
    commit: str  # 40-hex, deterministic per day (one commit per day shared by all backends)
    branch: str  # "master"
    run_key: str  # f"{commit}-{backend}"
    complete: bool  # True on the last shard of the run
    filename: str  # e.g. "test-reports-cpu-shard1.zip" or "TEST-tpu-run_tests.xml"
    content: bytes  # the file to upload: JUnit XML, or a .zip of a test-reports folder


@dataclass(frozen=True)
class Case:
    """One test as a runner reports it; ``dialect`` picks the XML shape."""

    file: str  # repository path; upstream files keep their pytorch/pytorch path
    cls: str
    name: str
    dialect: str  # unittest | run_tests | absl | unittest_module | script | missing | upstream
    shard: str = field(compare=False)  # differs per backend; the test is the same


@dataclass(frozen=True)
class Outcome:
    status: str  # passed | skipped | failed | error
    message: str = ""
    error_type: str = ""
    where: str = ""  # "file:line" of the skip, for pytest-style wordings


PASSED = Outcome("passed")
TENSOR_FAILURE = Outcome("failed", TENSOR_MISMATCH, "AssertionError")
SCALAR_FAILURE = Outcome("failed", SCALAR_MISMATCH, "AssertionError")
OOM_ERROR = Outcome("error", OUT_OF_MEMORY, "RuntimeError")


@dataclass(frozen=True)
class ScenarioEvent:
    """A scripted change. ``opens``: from ``day`` on, the case has ``outcome`` on ``backend``
    (it passed before, as on CPU). ``closes``: before ``day`` it had ``outcome``, then passes.
    ``chronic``: ``outcome`` every day. ``dropped``: from ``day`` on, the backend no longer
    runs ``case.file`` at all (its tests go missing)."""

    kind: str  # opens | closes | chronic | dropped
    backend: str
    day: int  # index into the run of days, 0 = first
    case: Case
    outcome: Outcome


@dataclass
class _Plan:
    """A backend's cases in run order and the outcome each has when nothing happens."""

    cases: list[Case] = field(default_factory=list)
    base: dict[Case, Outcome] = field(default_factory=dict)


# --- Entry point ------------------------------------------------------------------------------


def demo_uploads(
    fixture: dict[str, Any], *, days: int = 28, end: datetime.date
) -> Iterator[DemoUpload]:
    """Every upload of ``days`` daily runs per backend, the last run on ``end``, oldest first."""
    plans = {backend: _plan(fixture, backend) for backend in BACKENDS}
    events = _events(fixture, plans, days)
    for index in range(days):
        day = end - datetime.timedelta(days=days - 1 - index)
        commit = hashlib.sha1(f"{SEED}:commit:{day.isoformat()}".encode()).hexdigest()
        for backend in BACKENDS:
            results = _day_results(plans[backend], events, backend, index)
            yield from _run_uploads(backend, day, commit, results)


def _run_uploads(
    backend: str, day: datetime.date, commit: str, results: list[tuple[Case, Outcome]]
) -> Iterator[DemoUpload]:
    specs = UPLOADS[backend]
    groups: list[list[tuple[Case, Outcome]]] = [[] for _ in specs]
    for case, outcome in results:
        groups[_upload_index(specs, case.shard)].append((case, outcome))
    start = datetime.datetime.combine(day, datetime.time(RUN_START_HOUR[backend]))
    wording = _skip_wording(backend, day)
    for number, ((label, kind, _), group) in enumerate(zip(specs, groups, strict=True), 1):
        render = _zip_bytes if kind == "zip" else _merged_xml_bytes
        yield DemoUpload(
            backend=backend,
            day=day,
            commit=commit,
            branch=BRANCH,
            run_key=f"{commit}-{backend}",
            complete=number == len(specs),
            filename=f"test-reports-{backend}-{label}.zip"
            if kind == "zip"
            else f"TEST-{backend}-{label}.xml",
            content=render(_timed(group, start, backend, day), wording),
        )


def _upload_index(specs: tuple[tuple[str, str, tuple[str, ...] | None], ...], shard: str) -> int:
    for index, (_, _, shards) in enumerate(specs):
        if shards is not None and shard in shards:
            return index
    return next(index for index, (_, _, shards) in enumerate(specs) if shards is None)


# --- What each backend runs -------------------------------------------------------------------


def _plan(fixture: dict[str, Any], backend: str) -> _Plan:
    plan = _Plan()
    skips = _SkipIndex(fixture, backend)
    for file, shard in fixture["backends"][backend]["files"].items():
        file_row = skips.file_rows.get(file)
        if file_row is not None:
            # The module exits before any test runs (`if cond: sys.exit(0)`): only the
            # script's own status can be reported.
            case = _script_case(file, "script", shard)
            plan.cases.append(case)
            plan.base[case] = _skip_outcome(file_row)
            continue
        for case in _file_cases(fixture, backend, file, shard):
            plan.cases.append(case)
            plan.base[case] = skips.outcome(case)
    upstream = fixture["upstream"]
    where = f"{upstream['skip_file']}:{upstream['skip_line']}"
    for test in upstream["tests"]:
        file = UPSTREAM_DIR + test["file"]
        case = Case(file, test["class"], test["test"], "upstream", UPSTREAM_SHARD)
        plan.cases.append(case)
        disabled = backend in test["disabled"]
        plan.base[case] = (
            Outcome("skipped", upstream["skip_reason"], where=where) if disabled else PASSED
        )
    return plan


def _script_case(file: str, dialect: str, shard: str) -> Case:
    stem = file.rsplit("/", 1)[-1].removesuffix(".py")
    return Case(file, stem, SCRIPT_CASE, dialect, shard)


def _file_cases(fixture: dict[str, Any], backend: str, file: str, shard: str) -> list[Case]:
    info = fixture["files"][file]
    dialect = info["entry"]
    classes = {cls: list(tests) for cls, tests in info["classes"].items()}
    if backend == "gpu":
        for cls, tests in fixture["gpu_era_tests"].get(file, {}).items():
            classes.setdefault(cls, []).extend(t for t in tests if t not in classes[cls])
    only = fixture["backends"][backend]["only"].get(file)
    names = [
        (cls, test)
        for cls, tests in classes.items()
        for test in tests
        if only is None or f"{cls}.{test}" in only
    ][:MAX_TESTS_PER_FILE]
    if dialect in ("script", "missing") or not names:
        # No per-test results (or none known): one case stands for the script's exit status.
        return [_script_case(file, "missing" if dialect == "missing" else "script", shard)]
    return [Case(file, cls, test, dialect, shard) for cls, test in names]


class _SkipIndex:
    """The fixture's skip rows that apply on one backend, looked up per case.

    Precedence follows unittest: a class decorator wins over a method's, and among a method's
    stacked decorators the outermost (first line) gives the reason; a ``skipTest`` in setUp
    skips every test of its class. Rows in helpers are left out: which tests call the helper
    is unknown.
    """

    def __init__(self, fixture: dict[str, Any], backend: str) -> None:
        self.file_rows: dict[str, dict[str, Any]] = {}
        self.class_rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in fixture["skips"]:
            if backend not in row["backends"] or row["scope"] == "helper":
                continue
            if row["scope"] == "file":
                self.file_rows.setdefault(row["file"], row)
                continue
            cls = row["test_or_class"].partition(".")[0]
            self.class_rows.setdefault((row["file"], cls), []).append(row)
        for rows in self.class_rows.values():
            rows.sort(key=lambda row: (SCOPE_RANK[row["scope"]], row["line"]))

    def outcome(self, case: Case) -> Outcome:
        for row in self.class_rows.get((case.file, case.cls), []):
            if row["scope"] != "test" or row["test_or_class"].partition(".")[2] == case.name:
                return _skip_outcome(row)
        if case.dialect == "missing":
            return Outcome(
                "error",
                f"python3: can't open file '{case.file}': [Errno 2] No such file or directory",
                "exit code 2",
            )
        return PASSED


SCOPE_RANK = {"class": 0, "test": 1, "setup": 2}


def _skip_outcome(row: dict[str, Any]) -> Outcome:
    return Outcome("skipped", row["reason"], where=f"{row['file']}:{row['line']}")


# --- What changes over the days -----------------------------------------------------------------


def demo_events(fixture: dict[str, Any], *, days: int = 28) -> tuple[ScenarioEvent, ...]:
    """The scripted changes of a ``days``-day window, as ``demo_uploads`` plays them."""
    return _events(fixture, {backend: _plan(fixture, backend) for backend in BACKENDS}, days)


def _events(
    fixture: dict[str, Any], plans: dict[str, _Plan], days: int
) -> tuple[ScenarioEvent, ...]:
    """Each event gets its own file, so none masks another. Tests are drawn (seeded) among
    unittest-style tests that pass on both CPU and the backend at baseline, so each event is
    a real change of parity against the reference backend."""
    neuron_reason = next(
        row["reason"] for row in fixture["skips"] if row["reason"] == "Not supported on NEURON"
    )
    script = (  # kind, backend, first day it applies (or stops applying), outcome
        ("opens", "tpu", max(1, days // 3), TENSOR_FAILURE),
        ("opens", "neuron", max(1, 2 * days // 3), Outcome("skipped", neuron_reason)),
        ("closes", "tpu", max(1, days // 5), SCALAR_FAILURE),
        ("closes", "gpu", max(1, days // 2 + 1), OOM_ERROR),
        ("chronic", "neuron", 0, OOM_ERROR),
        ("chronic", "neuron", 0, TENSOR_FAILURE),
        ("chronic", "gpu", 0, Outcome("failed", "False is not true", "AssertionError")),
    )
    picker = _Picker(plans)
    dropped = ScenarioEvent("dropped", "neuron", days // 2, picker.file("neuron"), PASSED)
    return dropped, *(
        ScenarioEvent(kind, backend, day, picker.case(backend), outcome)
        for kind, backend, day, outcome in script
    )


class _Picker:
    """Seeded draws of event tests, never two on one file."""

    def __init__(self, plans: dict[str, _Plan]) -> None:
        self.plans = plans
        self.rng = random.Random(f"{SEED}:events")
        self.used: set[str] = set()

    def _candidates(self, backend: str) -> list[Case]:
        plan, cpu = self.plans[backend], self.plans["cpu"].base
        return [
            case
            for case in plan.cases
            if case.dialect in ("unittest", "run_tests")
            and case.file not in self.used
            and plan.base[case] == PASSED
            and cpu.get(case) == PASSED
        ]

    def case(self, backend: str) -> Case:
        case = self.rng.choice(self._candidates(backend))
        self.used.add(case.file)
        return case

    def file(self, backend: str) -> Case:
        """A file with at least 5 such tests; the returned case stands for the whole file."""
        per_file: dict[str, list[Case]] = {}
        for case in self._candidates(backend):
            per_file.setdefault(case.file, []).append(case)
        files = sorted(f for f, cases in per_file.items() if len(cases) >= 5)
        chosen = self.rng.choice(files)
        self.used.add(chosen)
        return per_file[chosen][0]


def _day_results(
    plan: _Plan, events: Iterable[ScenarioEvent], backend: str, index: int
) -> list[tuple[Case, Outcome]]:
    dropped: set[str] = set()
    outcomes = dict(plan.base)
    for event in events:
        if event.backend != backend:
            continue
        if event.kind == "dropped" and index >= event.day:
            dropped.add(event.case.file)
        elif (
            event.kind == "chronic"
            or (event.kind == "opens" and index >= event.day)
            or (event.kind == "closes" and index < event.day)
        ):
            outcomes[event.case] = event.outcome
    flaky = _flaky_case(plan, backend, index, {event.case for event in events})
    if flaky is not None:
        outcomes[flaky] = TENSOR_FAILURE
    return [(case, outcomes[case]) for case in plan.cases if case.file not in dropped]


def _flaky_case(plan: _Plan, backend: str, index: int, exclude: set[Case]) -> Case | None:
    """About one day in three, one otherwise passing test fails once (then passes again)."""
    rng = random.Random(f"{SEED}:flaky:{backend}:{index}")
    if rng.random() >= FLAKY_CHANCE:
        return None
    pool = [c for c in plan.cases if plan.base[c] == PASSED and c not in exclude]
    return rng.choice(pool)


def _skip_wording(backend: str, day: datetime.date) -> str:
    rng = random.Random(f"{SEED}:wording:{backend}:{day.isoformat()}")
    weights, templates = zip(*SKIP_WORDINGS, strict=True)
    return rng.choices(templates, weights=weights)[0]


# --- Writing the files ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Timed:
    case: Case
    outcome: Outcome
    seconds: float
    file_start: datetime.datetime


def _timed(
    results: list[tuple[Case, Outcome]], start: datetime.datetime, backend: str, day: datetime.date
) -> list[_Timed]:
    """Give each case a stable duration and each file the time its run began."""
    timed, clock, current = [], start, None
    file_start = start
    for case, outcome in results:
        if case.file != current:
            current, file_start = case.file, clock
        seconds = _seconds(backend, case, outcome, day)
        clock += datetime.timedelta(seconds=seconds)
        timed.append(_Timed(case, outcome, seconds, file_start))
    return timed


def _seconds(backend: str, case: Case, outcome: Outcome, day: datetime.date) -> float:
    if outcome.status == "skipped":
        return 0.001
    # Stable per test and backend (0.01 s to 5 s; whole scripts 20x), +-15 % from day to day.
    base = 0.01 * 500 ** _fraction(backend, case.file, case.cls, case.name)
    if case.dialect in ("script", "missing"):
        base *= 20
    return round(base * (0.85 + 0.3 * _fraction(case.file, case.name, day.isoformat())), 3)


def _fraction(*parts: str) -> float:
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def _by_file(timed: list[_Timed]) -> Iterator[list[_Timed]]:
    group: list[_Timed] = []
    for item in timed:
        if group and item.case.file != group[0].case.file:
            yield group
            group = []
        group.append(item)
    if group:
        yield group


def _by_class(items: list[_Timed]) -> dict[str, list[_Timed]]:
    classes: dict[str, list[_Timed]] = {}
    for item in items:
        classes.setdefault(item.case.cls, []).append(item)
    return classes


def _zip_bytes(timed: list[_Timed], wording: str) -> bytes:
    """A ``test-reports`` folder as xmlrunner and absltest leave it, zipped."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for items in _by_file(timed):
            case, start = items[0].case, items[0].file_start
            if case.dialect == "upstream":
                raise ValueError("upstream tests go in merged XML: their path leaves the repo")
            folder = f"{REPORTS_DIR}/{case.file.removesuffix('.py').replace('/', '.')}"
            for name, document in _file_documents(items, wording):
                info = zipfile.ZipInfo(f"{folder}/{name}", date_time=start.timetuple()[:6])
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, _xml_bytes(document))
    return buffer.getvalue()


def _file_documents(items: list[_Timed], wording: str) -> Iterator[tuple[str, Any]]:
    """xmlrunner writes one ``TEST-<Class>-<time>.xml`` per class; absltest one file."""
    first = items[0]
    stamp = first.file_start.strftime("%Y%m%d%H%M%S")
    suites = _suites(items, wording, merged=False)
    if first.case.dialect == "absl":
        stem = first.case.file.rsplit("/", 1)[-1].removesuffix(".py")
        yield f"TEST-{stem}-{stamp}.xml", _testsuites(suites)
        return
    for cls, suite in zip(_by_class(items), suites, strict=True):
        yield f"TEST-{cls}-{stamp}.xml", suite


def _merged_xml_bytes(timed: list[_Timed], wording: str) -> bytes:
    """One ``<testsuites>`` holding every class's suite, as a CI merge step writes it."""
    suites = [s for items in _by_file(timed) for s in _suites(items, wording, merged=True)]
    return _xml_bytes(_testsuites(suites))


def _testsuites(suites: list[TestSuite]) -> JUnitXml:
    root = JUnitXml()
    for suite in suites:
        root.append(suite)  # not add_testsuite(), which merges suites of equal name
    root.update_statistics()
    return root


def _suites(items: list[_Timed], wording: str, *, merged: bool) -> list[TestSuite]:
    start = items[0].file_start
    stamp = start.strftime("%Y%m%d%H%M%S")
    absl = items[0].case.dialect == "absl"
    suites = []
    for cls, members in _by_class(items).items():
        # xmlrunner names a suite "<Class>-<outsuffix>"; absltest by the class alone.
        suite = TestSuite(cls if absl else f"{cls}-{stamp}")
        end = start + datetime.timedelta(seconds=sum(m.seconds for m in members))
        suite.timestamp = end.replace(microsecond=0).isoformat()
        suite.add_testcases([_case_element(m, wording, merged=merged) for m in members])
        suites.append(suite)
    return suites


class _XmlrunnerCase(TestCase):
    file = Attr()


class _AbslCase(TestCase):
    status = Attr()
    file = Attr()


def _case_element(item: _Timed, wording: str, *, merged: bool) -> TestCase:
    case, outcome = item.case, item.outcome
    if case.dialect == "absl":
        return _absl_case(item, merged=merged)
    classname = case.cls
    if case.dialect == "unittest_module":
        # `python -m unittest test_x.Class.test` keeps the module: it is not __main__.
        classname = f"{case.file.rsplit('/', 1)[-1].removesuffix('.py')}.{case.cls}"
    element = _XmlrunnerCase(case.name, classname, item.seconds)
    element.file = case.file
    if outcome.status == "skipped":
        message = _worded(outcome, wording)
        skipped = Skipped(message, "skip" if message == outcome.message else "pytest.skip")
        if message != outcome.message:
            skipped.text = message
        element.result = [skipped]
    elif outcome.status != "passed":
        element.result = [_problem(outcome)]
    return element


def _absl_case(item: _Timed, *, merged: bool) -> TestCase:
    """absltest's shape: the module stays in classname, and a skip is only an attribute."""
    element = _AbslCase(item.case.name, f"__main__.{item.case.cls}", item.seconds)
    skipped = item.outcome.status == "skipped"
    element.status = "notrun" if skipped else "run"
    # junitparser's TestCase.result is the outcome list, so this attribute is set directly.
    element._elem.set("result", "suppressed" if skipped else "completed")
    if merged:
        element.file = item.case.file  # the merge step records it; absltest does not
    if item.outcome.status in ("failed", "error"):
        element.result = [_problem(item.outcome)]
    return element


def _problem(outcome: Outcome) -> Failure | Error:
    kind = Failure if outcome.status == "failed" else Error
    element = kind(outcome.message, outcome.error_type)
    element.text = f"{outcome.error_type}: {outcome.message}"
    return element


def _worded(outcome: Outcome, wording: str) -> str:
    if not outcome.message or not outcome.where:
        return outcome.message
    return wording.format(reason=outcome.message, where=outcome.where)


def _xml_bytes(document: JUnitXml | TestSuite) -> bytes:
    buffer = io.BytesIO()
    document.write(buffer)
    return buffer.getvalue()
