"""Write JUnit XML at the sizes CI sends (tens of MB, 100k+ cases), streamed to disk.

pytest-style reports: dotted classnames (``test.test_ops.TestOps``) that normalize to
``test/test_ops.py::TestOps::name``, some skipped with a reason, some failed with a traceback,
a few errors. Everything written is ASCII, so characters counted are bytes. Every case name is
unique within a file (and across files given distinct ``prefix``), so the expected stored
counts are exactly the counts written.
"""

import base64
import random
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from xml.sax.saxutils import escape, quoteattr

CLASSNAMES = (
    "test.test_ops.TestOps",
    "test.test_nn.TestNN",
    "test.test_torch.TestTorch",
    "test.test_autograd.TestAutograd",
    "test.dynamo.test_dynamo.DynamoTests",
)
DTYPES = ("float32", "float16", "bfloat16", "int64")
SKIP_MESSAGES = (
    "test requires CUDA",
    "Skipped: not supported on this backend (see https://github.com/pytorch/xla/issues/4298)",
    "only runs with --large-memory",
)
FAILURE_MESSAGE = "AssertionError: Tensor-likes are not close!"
CASES_PER_SUITE = 1000


@dataclass
class Written:
    """What a generated file holds: counts keyed like ``Upload.counts``."""

    path: Path
    counts: Counter = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def expected_counts(self) -> dict[str, int]:
        labels = ("passed", "skipped", "failed", "error")
        return {"total": self.total, **{label: self.counts[label] for label in labels}}


def outcome_of(index: int) -> str:
    """A fixed mix: 1 in 10 skipped, 1 in 37 failed, 1 in 101 error, the rest passed."""
    if index % 101 == 100:
        return "error"
    if index % 37 == 36:
        return "failed"
    if index % 10 == 9:
        return "skipped"
    return "passed"


def case_xml(*, index: int, prefix: str, outcome: str, classname: str | None = None) -> str:
    classname = classname or CLASSNAMES[index % len(CLASSNAMES)]
    name = f"test_{prefix}op_{index:07d}_{DTYPES[index % len(DTYPES)]}"
    head = f'<testcase classname={quoteattr(classname)} name={quoteattr(name)} time="0.012"'
    if outcome == "passed":
        return head + "/>\n"
    if outcome == "skipped":
        message = quoteattr(SKIP_MESSAGES[index % len(SKIP_MESSAGES)])
        return f'{head}><skipped type="pytest.skip" message={message}/></testcase>\n'
    tag = "failure" if outcome == "failed" else "error"
    trace = escape(
        f'File "test/test_ops.py", line {index % 900 + 10}, in {name}\n{FAILURE_MESSAGE}'
    )
    return f'{head}><{tag} message="{FAILURE_MESSAGE}">{trace}</{tag}></testcase>\n'


def junit_write(
    path: Path,
    *,
    target_bytes: int | None = None,
    cases: int | None = None,
    prefix: str = "",
    system_out_bytes: int = 0,
    seed: int = 0,
    classnames: tuple[str, ...] = CLASSNAMES,
) -> Written:
    """Write one ``<testsuites>`` document of ``cases`` cases, or of as many as reach
    ``target_bytes``. ``system_out_bytes`` of incompressible log per suite (base64 of random
    bytes) make a zip of it as large as real CI logs make one. Cases take ``classnames`` in
    turn (so their test files)."""
    if (target_bytes is None) == (cases is None):
        raise ValueError("give exactly one of target_bytes and cases")
    written = Written(path=path)
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        size = out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n')
        index = 0
        while (cases is None or index < cases) and (target_bytes is None or size < target_bytes):
            count = CASES_PER_SUITE if cases is None else min(CASES_PER_SUITE, cases - index)
            size += out.write(f'<testsuite name="pytest" tests="{count}">\n')
            for _ in range(count):
                outcome = outcome_of(index)
                classname = classnames[index % len(classnames)]
                size += out.write(
                    case_xml(index=index, prefix=prefix, outcome=outcome, classname=classname)
                )
                written.counts[outcome] += 1
                index += 1
            size += _system_out(out, rng, system_out_bytes)
            size += out.write("</testsuite>\n")
        out.write("</testsuites>\n")
    return written


def _system_out(out: IO[str], rng: random.Random, size: int) -> int:
    # Characters written; everything here is ASCII, so also bytes.
    if size <= 0:
        return 0
    written = out.write("<system-out>")
    for line in _log_lines(rng, size):
        written += out.write(line)
    return written + out.write("</system-out>\n")


def _log_lines(rng: random.Random, size: int) -> Iterator[str]:
    while size > 0:
        line = base64.b64encode(rng.randbytes(57)).decode() + "\n"  # 77 characters
        size -= len(line)
        yield line


def zip_write(path: Path, members: dict[str, Path]) -> None:
    """A deflated zip, members named by their path inside it (e.g. ``test-reports/...``)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, source in members.items():
            archive.write(source, arcname=name)
