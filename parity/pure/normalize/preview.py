"""Which pasted test names of two backends join under a set of identity rules.

A user pastes names as one backend's report writes them and another's, one a line, and sees
each name's canonical ID, the backend token the rules dropped, and whether the other side has a
name with the same ID. Three spellings are read:

* ``classname::name``: a JUnit ``<testcase>``'s attributes, as ingest reads them
  (``test.dialect.test_suite.ComponentReflectionTest_sqlite+pysqlite_3_45::test_get``);
* a pytest node ID, told by a file before its first ``::`` (a ``/`` or ``.py`` in it):
  ``test/test_ops.py::TestOpsCUDA::test_add_cuda_float32``;
* a unittest ID, with no ``::``: ``test.test_ops.TestOpsCUDA.test_add_cuda_float32``.

Blank lines and lines starting with ``#`` are left out. A line that names no test is reported
with its side and number, and the others are still shown.
"""

from dataclasses import dataclass

from parity.pure.normalize.ids import SEP, backend_of, display_id, test_identity
from parity.pure.normalize.rules import Rules
from parity.pure.normalize.runner_ids import MAX_ID_CHARS, RunnerIdError, runner_fields

MAX_LINES = 2_000  # per side: a preview is for a sample, not a whole report


@dataclass(frozen=True)
class PreviewName:
    line: int
    text: str
    backend: str | None  # the token the rules dropped, if any


@dataclass(frozen=True)
class PreviewRow:
    key: str
    test_id: str  # the canonical ID as people read it (``display_id``)
    left: tuple[PreviewName, ...]
    right: tuple[PreviewName, ...]

    @property
    def joins(self) -> bool:
        return bool(self.left and self.right)

    @property
    def merges(self) -> bool:
        """Two names of one backend became one test: a rule broader than meant, or reruns."""
        return len(self.left) > 1 or len(self.right) > 1


@dataclass(frozen=True)
class PreviewError:
    side: str  # "left" or "right"
    line: int
    text: str
    problem: str


@dataclass(frozen=True)
class IdentityPreview:
    rows: tuple[PreviewRow, ...]  # joined first, then the left's alone, then the right's
    errors: tuple[PreviewError, ...]

    @property
    def joined(self) -> int:
        return sum(row.joins for row in self.rows)

    @property
    def left_only(self) -> int:
        return sum(bool(row.left and not row.right) for row in self.rows)

    @property
    def right_only(self) -> int:
        return sum(bool(row.right and not row.left) for row in self.rows)

    @property
    def merged(self) -> int:
        return sum(row.merges for row in self.rows)


def identity_preview(*, left: str, right: str, rules: Rules) -> IdentityPreview:
    """The canonical IDs of both sides' names under ``rules``, matched."""
    rows: dict[str, tuple[str, list[PreviewName], list[PreviewName]]] = {}
    errors: list[PreviewError] = []
    for side, text in (("left", left), ("right", right)):
        for number, line in _lines(text, side, errors):
            try:
                classname, name, file = name_fields(line)
            except RunnerIdError as exc:
                errors.append(PreviewError(side, number, line[:200], str(exc)))
                continue
            identity = test_identity(
                classname=classname, name=name, file=file, folder_hint=None, rules=rules
            )
            backend = backend_of(
                classname=classname, name=name, file=file, folder_hint=None, rules=rules
            )
            shown = display_id(identity.file, identity.class_name, identity.name)
            row = rows.setdefault(identity.key, (shown, [], []))
            row[1 if side == "left" else 2].append(PreviewName(number, line, backend))
    built = [
        PreviewRow(key, shown, tuple(lefts), tuple(rights))
        for key, (shown, lefts, rights) in rows.items()
    ]
    built.sort(key=lambda row: (not row.joins, not row.left, row.test_id))
    return IdentityPreview(tuple(built), tuple(errors))


def _lines(text: str, side: str, errors: list[PreviewError]):
    count = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        count += 1
        if count > MAX_LINES:
            errors.append(
                PreviewError(side, number, line[:200], f"only the first {MAX_LINES} names are read")
            )
            return
        yield number, line


def name_fields(line: str) -> tuple[str, str, str | None]:
    """(classname, name, file) of one pasted line (see the module docstring)."""
    head, sep, rest = line.partition(SEP)
    if not sep or "/" in head or head.endswith(".py"):
        return runner_fields(line)
    if len(line) > MAX_ID_CHARS:
        raise RunnerIdError(f"A test ID has at most {MAX_ID_CHARS} characters.")
    if not rest.strip():
        raise RunnerIdError(f"'{head}::' names a class but no test after the '::'.")
    return head, rest, None
