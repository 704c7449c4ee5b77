"""A test that one report ran in several suites: one test per suite, named by its suite label.

The canonical key leaves suites out: many reporters put text in suite names that changes from
run to run or backend to backend (unittest-xml-reporting's ``TestFoo-20240101120000``, a host
or backend name), and the same test must keep one key across runs and backends. Only when one
document of an upload holds the same key under two suite labels (``parity.pure.junit.suites``:
Selenium's per-browser suites, Playwright's browser projects, one class run by two nested
suites) is each occurrence a test of its own, its name carrying its label:
``testFilterByNull with data set #1 [suite: FiltersTest / FiltersTest: chrome / …]``. Reports
without such a repeat keep their keys exactly.

The label goes into the name, so the test page, the file page and the API show it wherever they
show the name, and the key is rebuilt from the parts as any key is (``make_key``), so key and
parts agree. A runner ID naming the qualified name (``{"classname": …, "name": "test_x [suite:
chrome]"}``) resolves to the same key.
"""

import re

from parity.pure.normalize.ids import TestIdentity, make_key

_NO_SUITE = "no suite"
_QUALIFIED = re.compile(r"(?s)(.*) \[(?:suite: (.*)|no suite)\]\Z")


def suite_qualified(identity: TestIdentity, label: str) -> TestIdentity:
    """The identity of ``identity``'s test as run in the suite labelled ``label``."""
    name = f"{identity.name} [suite: {label}]" if label else f"{identity.name} [{_NO_SUITE}]"
    return TestIdentity(
        make_key(identity.file, identity.class_name, name), identity.file, identity.class_name, name
    )


def suite_of(name: str) -> tuple[str, str | None]:
    """(the name as its runner knows it, its suite label) of a test's name; the label is None
    for a name ``suite_qualified`` did not make, ``""`` for a case outside every suite."""
    match = _QUALIFIED.fullmatch(name)
    if match is None:
        return name, None
    return match[1], match[2] or ""
