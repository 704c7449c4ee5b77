"""Test IDs as test runners name them before a run (for CI to ask which are exempted), read
into the <testcase> fields ingest sees after it, so both get the same canonical identity.

Three dialects:

* a pytest node ID: ``test/test_ops.py::TestOpsXLA::test_add_xla_float32`` (``path::name`` for a
  function, ``path::Outer::Inner::name`` for nested classes, ``[params]`` possibly holding ``::``);
* a unittest ID: ``test.test_ops.TestOpsXLA.test_add_xla_float32`` (``module.Class.method``);
* a JUnit-style mapping: ``{"classname": "__main__.TestOpsXLA", "name": "…", "file": "…"}``.
"""

from collections.abc import Mapping

from parity.pure.normalize.ids import SEP, TestIdentity, test_identity
from parity.pure.normalize.rules import DEFAULT_RULES, Rules

MAX_ID_CHARS = 10_000


class RunnerIdError(ValueError):
    """An item that names no test; the message says why."""


def runner_identity(item: object, rules: Rules = DEFAULT_RULES) -> TestIdentity:
    """The canonical identity of one test as a runner names it (see the module docstring)."""
    classname, name, file = runner_fields(item)
    return test_identity(classname=classname, name=name, file=file, folder_hint=None, rules=rules)


def runner_fields(item: object) -> tuple[str, str, str | None]:
    """(classname, name, file) of a runner's test ID, as a JUnit report would spell them."""
    if isinstance(item, Mapping):
        return _junit_fields(item)
    if not isinstance(item, str):
        raise RunnerIdError("A test is a string (pytest or unittest ID) or an object.")
    if not item.strip():
        raise RunnerIdError("A test ID cannot be empty.")
    if len(item) > MAX_ID_CHARS:
        raise RunnerIdError(f"A test ID has at most {MAX_ID_CHARS} characters.")
    head, bracket, params = item.partition("[")
    if SEP in head:
        file, *scopes = head.split(SEP)
        return ".".join(scopes[:-1]), scopes[-1] + bracket + params, file
    module_class, dot, method = head.rpartition(".")
    if not dot:
        return "", item, None
    return module_class, method + bracket + params, None


def _junit_fields(item: Mapping) -> tuple[str, str, str | None]:
    fields = {key: item.get(key) for key in ("classname", "name", "file")}
    for key, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise RunnerIdError(f"'{key}' must be a string.")
        if value is not None and len(value) > MAX_ID_CHARS:
            raise RunnerIdError(f"'{key}' has at most {MAX_ID_CHARS} characters.")
    if not fields["name"]:
        raise RunnerIdError("A test object needs a 'name'.")
    return fields["classname"] or "", fields["name"], fields["file"] or None
