"""Pages of a backend whose CI was told to run a file that then crashed, timed out, ran no
test or never started: the heatmap, the gaps list, the file and test pages say which, how the
file's process ended and where its CI run is, not "missing"."""

import json
import re

import pytest

from parity.models import Gap
from tests.junit_builder import Case, junit_xml
from tests.parity.dashboard.conftest import text

P = "/p/pytorch-xla"
CI_URL = "https://ci.example.org/runs/42"
CASES = [
    Case("TestA", "test_one", file="test/test_a.py"),
    Case("TestA", "test_two", file="test/test_a.py"),
    Case("TestB", "test_one", file="test/test_b.py"),
    Case("TestC", "test_one", file="test/test_c.py"),
]


@pytest.fixture
def crashed(ingest):
    """cpu runs every file; tpu's run crashes in test_a.py (SIGSEGV), test_c.py never starts."""
    ingest(("cpu.xml", junit_xml(*CASES)), backend="cpu", run="cpu-1", complete="true")
    manifest = {
        "files": [
            {"file": "test/test_a.py", "signal": "SIGSEGV", "duration": 3.0},
            {"file": "test/test_b.py", "exit_code": 0, "report": True, "tests": 1},
            {"file": "test/test_c.py", "started": False},
        ]
    }
    ingest(
        ("tpu.xml", junit_xml(CASES[2])),
        backend="tpu",
        run="tpu-1",
        ci_url=CI_URL,
        run_manifest=json.dumps(manifest),
        complete="true",
    )
    states = dict(Gap.objects.filter(backend__name="tpu").values_list("test__key", "state"))
    assert states == {
        "test/test_a.py::TestA::test_one": "crashed",
        "test/test_a.py::TestA::test_two": "crashed",
        "test/test_c.py::TestC::test_one": "not_run",
    }


def test_the_heatmap_labels_a_crashed_file_crashed_not_missing(client, crashed):
    html = text(client.get(f"{P}/"))
    cell = html.split('data-backend="tpu" data-run-state="crashed"', 1)[1].split("</td>", 1)[0]
    assert ">crashed · 2</a>" in cell
    assert "the file crashed (SIGSEGV)" in cell
    assert 'data-run-state="not_run"' in html and "not started · 1" in html
    assert ">missing · " not in html  # no cell's label


def words(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_the_gaps_list_says_how_the_file_ended_with_its_ci_run(client, crashed):
    html = text(client.get(f"{P}/gaps/?open=1&backend=tpu"))
    assert words(html).count("the file crashed (SIGSEGV) · CI run") == 2
    assert words(html).count("the file never started · CI run") == 1
    assert f'href="{CI_URL}"' in html


def test_the_file_and_test_pages_say_it_too(client, crashed):
    html = words(text(client.get(f"{P}/file/?path=test/test_a.py&backend=tpu")))
    assert "On tpu, the file crashed (SIGSEGV) · CI run crashed 2" in html
    test = Gap.objects.get(test__key="test/test_a.py::TestA::test_one").test_id
    html = words(text(client.get(f"{P}/tests/{test}/")))
    # Lost to infrastructure: run health's, no gap of tpu's to triage (issue 45).
    assert "tpu – lost to infrastructure rerun its file" in html
    assert "the file crashed (SIGSEGV) · CI run" in html and "untracked" not in html
