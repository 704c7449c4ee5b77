"""Parity's own list file, and PyTorch's per-backend disabled-test dicts, read into the entries
``parity.services.triage.exemptions_import`` writes (``import_exemptions --format yaml``, all
or none; the other formats of the lists teams keep go through ``parity.services.list_imports``).

Parity's format, YAML or JSON, a list of entries (or ``{"exemptions": [...]}``, which is what
``GET …/manifest/`` answers, so a manifest can be imported into another project)::

    - match: test/test_ops.py::TestOps::test_*_complex64   # a test ID, a file, or a glob
      backends: [tpu, neuron]                              # absent or empty: every backend
      kind: tracked                            # tracked | intended | quarantine | not_applicable
      reason: XLA has no complex64
      issue: https://github.com/pytorch/xla/issues/9017    # tracked and quarantine need one
      expires: 2027-03-01                                  # optional
      condition: arch in (gfx942, gfx90a) and rocm < 7.14  # optional (parity.pure.attributes)

PyTorch/XLA's ``DISABLED_TORCH_TESTS`` (``test/pytorch_test_base.py``) maps a hardware key to
test classes and the names disabled in them, each with a reason::

    {"TPU": {"TestViewOpsXLA": {"test_view_xla_float32": "reason", ...}}, "CPU": {...}}

A class may also map to a plain list of names. The names are the runner's (device-suffixed);
``disabled_dict_entries`` gives each its canonical ID with the project's rules, so one entry
per test carries every backend that disables it for the same reason. Regular-expression
entries (names holding regex syntax) cannot be carried over as globs and are reported.

Pure: no Django, no database (a project is read through its two methods named above).
"""

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import yaml

from parity.pure.attributes import ConditionError, condition_parse
from parity.pure.normalize.runner_ids import runner_identity
from parity.pure.nul import nul_message

KINDS = ("tracked", "intended", "quarantine", "not_applicable")
_REGEX_SYNTAX = re.compile(r"[\\^$()|+{}]|\.\*|\[[^\]]*-[^\]]*\]")


class ExemptionFileError(ValueError):
    """A file or entry that cannot be imported; the message names where."""


@dataclass(frozen=True)
class ExemptionEntry:
    match: str
    kind: str
    backends: tuple[str, ...] = ()
    reason: str = ""
    issue: str = ""
    expires: datetime.date | None = None
    condition: str = ""


@dataclass
class Converted:
    entries: list[ExemptionEntry] = field(default_factory=list)
    unconverted: list[str] = field(default_factory=list)  # what could not be carried over, why


def document_load(text: str) -> object:
    """A YAML or JSON document (YAML is a superset of JSON)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ExemptionFileError(f"Neither YAML nor JSON: {exc}") from None
    problem = nul_message(data)
    if problem is not None:
        raise ExemptionFileError(f"The document {problem}")
    return data


def exemptions_parse(data: object) -> list[ExemptionEntry]:
    """Entries of parity's format, from a loaded document."""
    if isinstance(data, Mapping) and "exemptions" in data:
        data = data["exemptions"]
    if not isinstance(data, list):
        raise ExemptionFileError("Expected a list of exemptions (or {'exemptions': [...]}).")
    return [_entry(item, position) for position, item in enumerate(data, 1)]


def disabled_dict_entries(data: object, *, project, kind: str = "intended") -> Converted:
    """Entries for a loaded PyTorch-style disabled-test dict (see the module docstring), with
    ``project``'s normalization rules and backends (``Project.normalization``,
    ``Project.backend_named``: hardware keys are matched to backend names and aliases)."""
    rules = project.normalization()
    if not isinstance(data, Mapping):
        raise ExemptionFileError("Expected a mapping of hardware keys to disabled classes.")
    if kind not in KINDS:
        raise ExemptionFileError(f"Unknown kind '{kind}': use one of {', '.join(KINDS)}.")
    backends: dict[tuple[str, str], set[str]] = {}
    converted = Converted()
    for hardware, classes in data.items():
        backend = project.backend_named(str(hardware))
        if backend is None:
            converted.unconverted.append(f"{hardware}: no such backend in the project")
            continue
        for classname, name, reason in _disabled_names(hardware, classes):
            if _REGEX_SYNTAX.search(name):
                converted.unconverted.append(f"{hardware} {classname}.{name}: a regex, not a name")
                continue
            key = runner_identity({"classname": classname, "name": name}, rules).key
            backends.setdefault((key, reason), set()).add(backend.name)
    for (key, reason), names in sorted(backends.items()):
        converted.entries.append(
            ExemptionEntry(
                match=_any_file(key), kind=kind, backends=tuple(sorted(names)), reason=reason
            )
        )
    return converted


def _entry(item: object, position: int) -> ExemptionEntry:
    where = f"Entry {position}"
    if not isinstance(item, Mapping):
        raise ExemptionFileError(f"{where}: expected a mapping with at least 'match'.")
    unknown = set(item) - {"match", "backends", "kind", "reason", "issue", "expires", "id"}
    unknown -= {"condition"}
    unknown -= {"message", "file_level"}  # fields of a manifest's exemptions, derived
    if unknown:
        raise ExemptionFileError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}.")
    match = item.get("match")
    if not isinstance(match, str) or not match.strip():
        raise ExemptionFileError(f"{where}: 'match' must be a test ID, a file or a glob.")
    issue = _text(item, "issue", where)
    kind = item.get("kind") or ("tracked" if issue else "intended")
    if kind not in KINDS:
        raise ExemptionFileError(f"{where}: 'kind' must be one of {', '.join(KINDS)}.")
    return ExemptionEntry(
        match=match.strip(),
        kind=kind,
        backends=_backends(item.get("backends"), where),
        reason=_text(item, "reason", where),
        issue=issue,
        expires=_date(item.get("expires"), where),
        condition=_condition(item, where),
    )


def _condition(item: Mapping, where: str) -> str:
    condition = _text(item, "condition", where)
    if condition:
        try:
            condition_parse(condition)
        except ConditionError as exc:
            raise ExemptionFileError(f"{where}: 'condition' {condition!r}: {exc}") from None
    return condition


def _text(item: Mapping, name: str, where: str) -> str:
    value = item.get(name)
    if value is None:
        return ""
    if not isinstance(value, str | int):
        raise ExemptionFileError(f"{where}: '{name}' must be text.")
    return str(value).strip()


def _backends(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ExemptionFileError(f"{where}: 'backends' must be a list of backend names.")
    return tuple(v.strip() for v in value if v.strip())


def _date(value: object, where: str) -> datetime.date | None:
    if value is None or isinstance(value, datetime.date):
        return value
    try:
        return datetime.date.fromisoformat(str(value))
    except ValueError:
        raise ExemptionFileError(f"{where}: 'expires' must be a date, YYYY-MM-DD.") from None


def _disabled_names(hardware: object, classes: object):
    if not isinstance(classes, Mapping):
        raise ExemptionFileError(f"{hardware}: expected a mapping of test classes to names.")
    for classname, names in classes.items():
        if isinstance(names, Mapping):
            pairs = [(str(n), str(r or "")) for n, r in names.items()]
        elif isinstance(names, list):
            pairs = [(str(n), "") for n in names]
        else:
            raise ExemptionFileError(f"{hardware} {classname}: expected names (to reasons).")
        for name, reason in pairs:
            yield str(classname), name, reason or "Disabled for this backend"


def _any_file(key: str) -> str:
    """A pattern for the file-less ``key`` (``Class::name``) in whatever file defines it: a
    disabled dict names classes, not files."""
    return f"**::{key}"
