"""Reports shaped as real CI sends them, at any size and spread over any number of test files.

``tests/e2e/generate.py`` writes five classnames, so every test file is known after its first
suite; the reservation and lookup costs that grow with files never show there. This generator
is pure and deterministic (seeded): the same arguments give the same bytes, streamed to a
gzipped file one ``<testsuite>`` at a time (a million cases never sit in memory as text).

What a report holds, modelled on PyTorch's CI:

* **Files.** ``files`` test files under ``test/<area>/test_<word>_<n>.py``, of skewed sizes
  (a few big, many small; each at least one case). A third name their file in ``file=`` with
  an undotted classname (xmlrunner), a third give ``file=`` and a dotted classname, a third
  only the dotted classname (``test.nn.test_conv_00042.TestConv00042XLA``, pytest). All three
  normalize to the same path, so ``files`` is exactly the number of distinct test files.
* **Names.** Device-generic classes (``TestConv00042XLA.test_add_17_xla_float32``; the suffix
  and token follow ``device``), parametrized ids (``test_y_18[shape0-float16]``) in plain
  classes, and device tests with parameters (``test_mm_19_xla_bfloat16[batch2]``). Every name
  carries its case's index in the file, so keys are unique after the device rule strips the
  suffix: each case is one new test on a first ingest.
* **Outcomes.** About 5% skipped, with one of several reasons (some with an issue URL), 1%
  failed and 0.1% errors, each with a multi-line traceback; the rest passed.
* **Layout.** ``interleaved``: as parallel runners (pytest-xdist, sharded jobs) write them,
  ``RUNNERS`` runners each work through their own files and their suites interleave, so new
  files keep appearing until the end of the report. ``grouped``: each file's cases together.

``run`` varies only the durations: the report a later nightly sends for the same tests
(a re-ingest) holds the same tests and outcomes, so one ``Manifest`` describes both.
"""

import gzip
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape, quoteattr

Layout = Literal["interleaved", "grouped"]
LAYOUTS: tuple[Layout, ...] = ("interleaved", "grouped")
RUNNERS = 8  # parallel runners whose suites interleave
SUITE_CASES = 200  # cases a runner writes before the next runner's suite comes
AREAS = ("nn", "ops", "inductor", "dynamo", "distributed", "autograd", "jit", "quantization")
WORDS = ("conv", "linear", "reductions", "indexing", "sparse", "fft", "linalg", "foreach")
OPS = ("add", "mm", "cat", "index_put", "softmax", "scatter_reduce", "addcmul", "sort")
DTYPES = ("float32", "float16", "bfloat16", "int64", "complex64")
SKIPS = (
    "test requires CUDA",
    "Skipped: not supported on this backend (see https://github.com/pytorch/xla/issues/4298)",
    "only runs with --large-memory",
    "skipped 'dtype not supported: bfloat16'",
    "Test is disabled because an issue exists disabling it: "
    "https://github.com/pytorch/pytorch/issues/112345",
    "test/test_ops.py:412: requires torchvision",
    "Skipped: flaky on this backend, see https://github.com/pytorch/pytorch/issues/98765",
    "expected failure: not implemented for this device",
)
FAILURES = (
    "AssertionError: Tensor-likes are not close!",
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "AssertionError: False is not true : Scalars failed to compare as equal!",
    "NotImplementedError: Could not run 'aten::_foreach_add' with arguments from the backend",
)
ERROR = "RuntimeError: torch._dynamo.exc.InternalTorchDynamoError: generator raised"
OUTCOMES = ("passed", "skipped", "failed", "error")


@dataclass
class Manifest:
    """What a report holds, as the upload's counts (``Upload.counts``) and its test files."""

    path: Path
    cases: int
    files: int
    counts: Counter = field(default_factory=Counter)

    @property
    def tests(self) -> int:
        """Distinct tests (every case is one: keys are unique)."""
        return self.cases

    def expected_counts(self) -> dict[str, int]:
        return {"total": self.cases, **{label: self.counts[label] for label in OUTCOMES}}


@dataclass(frozen=True)
class _File:
    number: int
    path: str  # as the normalizer will store it
    cases: int
    style: int  # 0: file= and undotted classname; 1: file= and dotted; 2: dotted only


def shaped_write(
    path: Path,
    *,
    cases: int,
    files: int,
    layout: Layout = "interleaved",
    device: str = "xla",
    seed: int = 0,
    run: int = 0,
    first_file: int = 0,
    outcome_seed: int | None = None,
) -> Manifest:
    """Write a gzipped ``<testsuites>`` report of ``cases`` cases over ``files`` test files.
    ``first_file``: the number of its first file, so shards of one run hold distinct files;
    ``outcome_seed`` (default ``seed + 1``): another draw of outcomes for the same tests, as
    another configuration of the same suite reports them."""
    if not 1 <= files <= cases:
        raise ValueError(f"need 1 <= files <= cases, got {files} files for {cases} cases")
    manifest = Manifest(path=path, cases=cases, files=files)
    plan = _files_plan(cases, files, random.Random(seed), first=first_file)
    # Outcomes do not depend on run: re-ingests match.
    outcomes = random.Random(seed + 1 if outcome_seed is None else outcome_seed)
    durations = random.Random(seed * 1_000_003 + run)
    with gzip.open(path, "wt", encoding="ascii", compresslevel=6) as out:
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="pytest tests">\n')
        for file, start, count in _suites(plan, layout):
            out.write(_suite_xml(file, start, count, device, outcomes, durations, manifest))
        out.write("</testsuites>\n")
    return manifest


def _files_plan(cases: int, files: int, rng: random.Random, *, first: int = 0) -> list[_File]:
    """Skewed sizes (Pareto weights), each file at least one case, summing to ``cases``."""
    weights = [min(rng.paretovariate(1.2), 50.0) for _ in range(files)]
    spare, total = cases - files, sum(weights)
    sizes = [1 + int(spare * w / total) for w in weights]
    for index in range(cases - sum(sizes)):  # what rounding down left, one each
        sizes[index % files] += 1
    plan = []
    for number, size in enumerate(sizes, start=first):
        area, word = AREAS[number % len(AREAS)], WORDS[number // len(AREAS) % len(WORDS)]
        plan.append(_File(number, f"test/{area}/test_{word}_{number:05d}.py", size, number % 3))
    return plan


def _suites(plan: list[_File], layout: Layout) -> Iterator[tuple[_File, int, int]]:
    """(file, first case index, cases) of each ``<testsuite>``, in the report's order."""
    if layout == "grouped":
        for file in plan:
            for start in range(0, file.cases, SUITE_CASES):
                yield file, start, min(SUITE_CASES, file.cases - start)
        return
    queues = [iter(plan[runner::RUNNERS]) for runner in range(RUNNERS)]
    current: list[tuple[_File, int] | None] = [None] * RUNNERS
    live = RUNNERS
    while live:
        live = 0
        for runner, queue in enumerate(queues):
            if current[runner] is None:
                file = next(queue, None)
                current[runner] = None if file is None else (file, 0)
            if current[runner] is None:
                continue
            live += 1
            file, start = current[runner]
            count = min(SUITE_CASES, file.cases - start)
            yield file, start, count
            current[runner] = (file, start + count) if start + count < file.cases else None


def _suite_xml(
    file: _File,
    start: int,
    count: int,
    device: str,
    outcomes: random.Random,
    durations: random.Random,
    manifest: Manifest,
) -> str:
    parts = []
    tally = Counter()
    for index in range(start, start + count):
        outcome = _outcome(outcomes.random())
        tally[outcome] += 1
        parts.append(_case_xml(file, index, device, outcome, durations.random()))
    manifest.counts.update(tally)
    head = (
        f'<testsuite name="pytest" tests="{count}" skipped="{tally["skipped"]}" '
        f'failures="{tally["failed"]}" errors="{tally["error"]}" '
        f'time="{count * 0.05:.3f}" hostname="runner-{file.number % RUNNERS}">\n'
    )
    return head + "".join(parts) + "</testsuite>\n"


def _outcome(draw: float) -> str:
    if draw < 0.05:
        return "skipped"
    if draw < 0.06:
        return "failed"
    if draw < 0.061:
        return "error"
    return "passed"


def _case_xml(file: _File, index: int, device: str, outcome: str, draw: float) -> str:
    classname, name = _naming(file, index, device)
    location = f' file="{file.path}"' if file.style < 2 else ""
    head = (
        f"<testcase classname={quoteattr(classname)} name={quoteattr(name)}{location} "
        f'time="{draw * draw * 2:.3f}"'
    )
    if outcome == "passed":
        return head + "/>\n"
    if outcome == "skipped":
        message = quoteattr(SKIPS[index % len(SKIPS)])
        return f'{head}><skipped type="pytest.skip" message={message}/></testcase>\n'
    tag, message = (
        ("failure", FAILURES[index % len(FAILURES)])
        if outcome == "failed"
        else (
            "error",
            ERROR,
        )
    )
    trace = escape(_traceback(file, index, name, message))
    return f"{head}><{tag} message={quoteattr(message)}>{trace}</{tag}></testcase>\n"


def _naming(file: _File, index: int, device: str) -> tuple[str, str]:
    """(classname, name) of case ``index`` of ``file``, unique in the file after the device
    rule strips ``XLA`` and ``_xla``."""
    stem = f"Test{WORDS[file.number // len(AREAS) % len(WORDS)].capitalize()}{file.number:05d}"
    op, dtype = OPS[index % len(OPS)], DTYPES[index // len(OPS) % len(DTYPES)]
    kind = index % 4
    if kind == 3:
        cls, name = f"{stem}Params", f"test_{op}_{index}[shape{index % 7}-{dtype}]"
    elif kind == 2:
        cls, name = (
            f"{stem}{device.upper()}",
            f"test_{op}_{index}_{device}_{dtype}[batch{index % 3}]",
        )
    else:
        cls, name = f"{stem}{device.upper()}", f"test_{op}_{index}_{device}_{dtype}"
    if file.style == 0:
        return cls, name
    return file.path.removesuffix(".py").replace("/", ".") + "." + cls, name


def _traceback(file: _File, index: int, name: str, message: str) -> str:
    line = 100 + index % 900
    return (
        "Traceback (most recent call last):\n"
        f'  File "{file.path}", line {line}, in {name.split("[")[0]}\n'
        "    self.assertEqual(actual, expected)\n"
        '  File "torch/testing/_internal/common_utils.py", line 3521, in assertEqual\n'
        "    raise error_metas.pop()[0].to_error(msg)\n"
        f"{message}\n"
        f"Mismatched elements: {index % 17 + 1} / 64 ({(index % 17 + 1) / 0.64:.1f}%)\n"
        f"Greatest absolute difference: 0.{index % 997:03d} at index ({index % 8}, 3)\n"
    )
