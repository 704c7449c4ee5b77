"""Declarations a test runner sends about the tests it collected, turned into parity's terms.

PyTorch core labels test classes with ``hw_classification`` (``GENERIC`` or ``ACCELERATOR``;
pytorch/pytorch#192913): a GENERIC class exercises no device code, and PyTorch's accelerator
testing guide says it need not run on accelerators. parity's pytest plugin reads the attribute
at collection and sends the labels with the upload (``parity_ci.py`` reads them from the JUnit
report's properties). A GENERIC class becomes a *not applicable* declaration over its tests on
every backend but where it must run (the reference, which is never gapped against itself);
an ACCELERATOR class (or one whose label went away) declares nothing.
"""

import json
from dataclasses import dataclass

from parity.pure.normalize.ids import clean_path, device_generics
from parity.pure.normalize.rules import DEFAULT_RULES, Rules

SOURCE = "hw_classification"
NOT_APPLICABLE_LABELS = frozenset({"GENERIC"})
NOTE = "hw_classification GENERIC: device-generic, need not run on accelerators"
MAX_CLASSES = 20_000
MAX_CHARS = 1_000


class DeclarationsError(ValueError):
    """The declarations sent are not what the plugin writes."""


def classifications_parse(text: str) -> dict[str, str]:
    """``{"<file>::<Class>": "<label>"}`` from the JSON the client sends; raises
    ``DeclarationsError`` naming what is wrong."""
    if not text:
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DeclarationsError(f"hw_classification is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DeclarationsError('hw_classification must be an object: {"<file>::<Class>": label}')
    if len(data) > MAX_CLASSES:
        raise DeclarationsError(f"hw_classification names more than {MAX_CLASSES} classes")
    for where, label in data.items():
        if not isinstance(label, str) or "::" not in where or len(where) > MAX_CHARS:
            raise DeclarationsError(
                f"hw_classification entry {where[:100]!r}: expected '<file>::<Class>' naming "
                "a string label"
            )
    return {where: label.strip().upper() for where, label in data.items()}


@dataclass(frozen=True)
class Declaration:
    """A pattern over canonical test IDs declared not applicable, and why."""

    match: str
    note: str


def class_pattern(where: str, rules: Rules = DEFAULT_RULES) -> str:
    """The match pattern of every test of a class named as pytest does (``test/x.py::TestFooCPU``)
    in canonical terms: the project's path rules, and the class without its device suffix, as
    ingest names its tests."""
    file, _, class_name = where.partition("::")
    class_name = class_name.split("::")[-1]
    generics = device_generics(class_name, rules)
    generic = next(iter(generics.values()), class_name)
    return f"{clean_path(file, rules)}::{generic}::*"


def not_applicable(classes: dict[str, str], rules: Rules = DEFAULT_RULES) -> list[Declaration]:
    """The declarations ``classes`` (``classifications_parse``) make, one per class pattern."""
    patterns = {
        class_pattern(where, rules) for where, label in classes.items()
        if label in NOT_APPLICABLE_LABELS
    }  # fmt: skip
    return [Declaration(match=p, note=NOTE) for p in sorted(patterns)]


def withdrawn(classes: dict[str, str], rules: Rules = DEFAULT_RULES) -> set[str]:
    """Patterns of classes sent with another label (ACCELERATOR): a declaration of them that an
    earlier upload made no longer holds."""
    return {
        class_pattern(where, rules) for where, label in classes.items()
        if label not in NOT_APPLICABLE_LABELS
    }  # fmt: skip
