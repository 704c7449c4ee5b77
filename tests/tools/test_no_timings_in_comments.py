"""Comments and docstrings say why, not how fast: measured timings and sizes go in bench/.

A figure in a comment is true on the day it was measured and stale after the next change, and
nothing checks it; bench/README.md holds the current figures and the budgets each bench holds
them to (issue 35). This reads the comments (``tokenize``) and docstrings (``ast``) of
parity/, ingest/, tools/ and bench/*.py and fails, naming file:line, on a number followed by a
unit of time or size ("1.3 s", "120 ms", "15 MB") or on a speed-up ("3x faster").

What is not a measurement stays: text in quotes or backticks is an example of output
("0.3 s", ``3 hours ago``), and the figures in ``ALLOWED`` are settings, defaults and other
systems' limits, each with why. Sizes in bytes and bare multiples ("4 x 100k tests") are not
matched at all: they describe shapes and formats, not timings.
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [
    *sorted((ROOT / "parity").rglob("*.py")),
    *sorted((ROOT / "ingest").rglob("*.py")),
    *sorted((ROOT / "tools").rglob("*.py")),
    *sorted((ROOT / "bench").glob("*.py")),
]

_NUMBER = r"(?<![\w.])~?\d+(?:[.,]\d+)*(?:\s?[-–]\s?\d+(?:[.,]\d+)*)?"
# "s" and "h" only after a space: "404s" and "304s" are HTTP statuses, "0x1f" is hex.
_UNIT = (
    r"(?:\s(?:s|h)|\s?(?:ms|µs|us|ns|msec|milliseconds?|secs?|seconds?|mins?|minutes?|hours?"
    r"|[kKMGT]i?B))(?![\w])"
)
_SPEEDUP = r"\s?(?:x|×|times|%)\s+(?:faster|slower|quicker|as fast|as slow)\b"
FIGURE = re.compile(_NUMBER + r"(?:" + _UNIT + r"|" + _SPEEDUP + r")")
# Examples of output, not measurements: "...", ``...`` and `...`.
_QUOTED = re.compile(r'"[^"]*"|``[^`]*``|`[^`]*`')

# (file, figure as matched, why it is not a measurement). Keep it short: a measured figure
# belongs in bench/README.md, and the comment keeps its reason in words. A file is named by the
# tail of its path, which survives a move to another package.
ALLOWED = {
    ("clients/parity_ci.py", "16 s", "the retries' configured backoff, added up"),
    ("clients/parity_ci.py", "1 s", "the default duration of a file with no history"),
    ("demo/scenario/timing.py", "0.01 s", "the demo's invented durations"),
    ("demo/scenario/timing.py", "5 s", "the demo's invented durations"),
    ("migrations/0004_long_test_ids.py", "2.7 kB", "Postgres's cap on a btree entry"),
    ("models/results.py", "~2.7 kB", "Postgres's cap on a btree entry"),
    ("parity/ratelimit.py", "10 s", "how often a failure is logged, a setting of the code"),
    ("services/owners.py", "3 MB", "GitHub's cap on a CODEOWNERS file"),
    ("settings/base.py", "60 s", "the setting's production value"),
    ("settings/base.py", "5 s", "the publish retry policy's total, configured"),
    ("settings/base.py", "0.6 s", "kombu's default, which the setting replaces"),
    ("/archives.py", "4 GiB", "gzip's trailer holds the size modulo 2**32"),
    ("junit/stream.py", "1 MiB", "pyexpat's most per call, and the feeder's chunk cap"),
    ("bench/token_bench.py", "64 KiB", "the size of the block constant it labels"),
}


def _named(path: str, tail: str) -> bool:
    return ("/" + path).endswith("/" + tail.lstrip("/"))


def _comments(source: str):
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def _docstrings(source: str):
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, documented) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
            for offset, line in enumerate(first.value.value.splitlines()):
                yield first.lineno + offset, line


def figures(path: Path) -> list[tuple[int, str, str]]:
    """(line, figure, text) of each measured-looking figure in ``path``'s comments and
    docstrings."""
    source = path.read_text(encoding="utf-8")
    found = []
    for line, text in [*_comments(source), *_docstrings(source)]:
        for match in FIGURE.finditer(_QUOTED.sub("", text)):
            found.append((line, match.group(0).strip(), text.strip()))
    return sorted(found)


def test_the_pattern_finds_measurements_and_passes_over_the_rest() -> None:
    measured = [
        "took 1.3 s",
        "120 ms of SQL",
        "15 MB peak",
        "14 µs each",
        "3x faster",
        "2.5 times slower",
        "0.16-0.25 s at 100k",
        "a 4.8 MB bundle",
        "peak 300 MiB",
    ]
    for text in measured:
        assert FIGURE.search(text), text
    other = [
        "HTTP 404s",
        "304s are free",
        "0x<hex>",
        "4 x 100k tests",
        "the last 4 bytes",
        "5xx answers",
        "a 20x loop",
        "100k tests",
        "test_a_50_mb_message",
    ]
    for text in other:
        assert not FIGURE.search(text), text
    assert not FIGURE.search(_QUOTED.sub("", 'reads "0.3 s" or ``3 minutes ago``'))


def test_comments_and_docstrings_quote_no_measured_figures() -> None:
    hits = []
    for path in SCANNED:
        name = path.relative_to(ROOT).as_posix()
        allowed = {figure for tail, figure, _why in ALLOWED if _named(name, tail)}
        for line, figure, text in figures(path):
            if figure not in allowed:
                hits.append(f"{name}:{line}: {figure!r} in {text!r}")
    assert not hits, (
        "measured figures belong in bench/README.md; keep the reason in words:\n" + "\n".join(hits)
    )


@pytest.mark.parametrize("tail, figure, why", sorted(ALLOWED))
def test_each_allowed_figure_is_still_there(tail: str, figure: str, why: str) -> None:
    """An allowance whose figure is gone would let the next one in unread."""
    files = [path for path in SCANNED if _named(path.relative_to(ROOT).as_posix(), tail)]
    assert len(files) == 1, (tail, files)
    assert figure in [found for _line, found, _text in figures(files[0])], (tail, why)
