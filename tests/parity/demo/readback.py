"""The window of demo days the tests generate, and its uploads read back with the standard
library only, so the scenario's tests do not trust its own bookkeeping: every case of a run,
keyed by (file, class, test), with its outcome."""

from __future__ import annotations

import datetime
import io
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from parity.demo import build_fixture
from parity.demo.scenario import DemoUpload

FIXTURE_PATH = Path(build_fixture.__file__).with_name("fixture.json")
END = datetime.date(2026, 4, 23)
DAYS = 28
REPORTS_DIR = "test-reports/python-unittest/"
# Wrappers the scenario puts around a real reason on some days (pytest-style locations).
NOISE = re.compile(r"^(?:[\w./-]+\.py:\d+: )?(?:Skipped: )?(?P<reason>.*)$", re.DOTALL)

Key = tuple[str, str, str]  # file, class, test


@dataclass(frozen=True)
class Seen:
    status: str  # passed | skipped | failed | error
    message: str | None


def documents(upload: DemoUpload) -> Iterator[tuple[str | None, ET.Element]]:
    """(file hint from the xmlrunner folder, root element) of every XML in the upload."""
    if upload.filename.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(upload.content)) as archive:
            for name in archive.namelist():
                folder = name.removeprefix(REPORTS_DIR).split("/")[0]
                yield folder.replace(".", "/") + ".py", ET.fromstring(archive.read(name))
    else:
        yield None, ET.fromstring(upload.content)


def cases(upload: DemoUpload) -> Iterator[tuple[Key, Seen]]:
    for hint, root in documents(upload):
        for case in root.iter("testcase"):
            file = case.get("file") or hint
            assert file, "a case with neither a file attribute nor a folder hint"
            # __main__.TestFoo (absl) and test_x.TestFoo (python -m unittest) name the same class.
            cls = case.get("classname", "").rpartition(".")[2]
            yield (file, cls, case.get("name", "")), _seen(case)


def _seen(case: ET.Element) -> Seen:
    for tag, status in (("error", "error"), ("failure", "failed"), ("skipped", "skipped")):
        child = case.find(tag)
        if child is not None:
            return Seen(status, child.get("message"))
    if case.get("status") == "notrun":  # absltest: a skip is an attribute, with no reason
        return Seen("skipped", None)
    return Seen("passed", None)


def passed(run: dict[Key, Seen], key: Key) -> bool:
    return key in run and run[key].status == "passed"


def reason(result: Seen) -> str | None:
    """A skip's reason without the pytest-style wording some days add."""
    return NOISE.match(result.message)["reason"] if result.message else None
