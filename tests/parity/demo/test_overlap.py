"""The demo, uploaded through the API, reproduces PyTorch/XLA's real file-level overlap: the
share of CPU's test files that also run on TPU and on Neuron, and the reverse, as the shared
data (``backends.json``) records them at its head commit.

Only the first two days of the 28-day demo are loaded: later in the window the scenario drops a
file from Neuron's list on purpose (a coverage drop), which would change its share.
"""

import datetime
import itertools
import json

import pytest

from parity.demo import build_fixture
from parity.demo.scenario import demo_uploads
from parity.management.commands.load_demo import FIXTURE
from parity.selectors import backend_files
from tests.shared_data import PYTORCH_XLA_DIR, needs_pytorch_xla

END = datetime.date(2026, 4, 23)
DAYS = 28
LOADED_DAYS = 2
SHARE_KEYS = ("size_a", "size_b", "intersection", "a_also_run_on_b", "b_also_run_on_a")
PAIRS = {("cpu", "tpu"): "CPU|TPU_all_scripts", ("cpu", "neuron"): "CPU|NEURON"}


@pytest.fixture
def demo_files(xla, ingest, eager_errors_propagate) -> dict[str, set[str]]:
    """Files with results in each backend's current run, after the demo's first days."""
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    first = END - datetime.timedelta(days=DAYS - 1)
    uploads = itertools.takewhile(
        lambda u: (u.day - first).days < LOADED_DAYS, demo_uploads(fixture, days=DAYS, end=END)
    )
    for upload in uploads:
        response = ingest(
            (upload.filename, upload.content),
            backend=upload.backend,
            commit=upload.commit,
            branch=upload.branch,
            run=upload.run_key,
            complete="true" if upload.complete else "false",
            timestamp=f"{upload.day.isoformat()}T12:00:00Z",
        )
        assert response.status_code == 202, response.content
    return {
        backend: build_fixture.overlap_files(files)
        for backend, files in backend_files(project=xla).items()
    }


def _pair(a: set[str], b: set[str]) -> dict:
    both = len(a & b)
    return {
        "size_a": len(a),
        "size_b": len(b),
        "intersection": both,
        "a_also_run_on_b": round(both / len(a), 3),
        "b_also_run_on_a": round(both / len(b), 3),
    }


@needs_pytorch_xla
def test_demo_reproduces_the_real_cpu_tpu_and_cpu_neuron_overlap(demo_files):
    data = json.loads((PYTORCH_XLA_DIR / "backends.json").read_text(encoding="utf-8"))
    head = data["overlap"]["head"]["pairs"]

    for (a, b), name in PAIRS.items():
        real = {key: head[name][key] for key in SHARE_KEYS}
        assert _pair(demo_files[a], demo_files[b]) == real, name
    # The README's headline: 0.586 of CPU's test files also run on Neuron, 0.907 the reverse.
    assert _pair(demo_files["cpu"], demo_files["neuron"])["a_also_run_on_b"] == 0.586


def test_demo_file_sets_are_the_fixtures(demo_files):
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))

    assert {b: len(files) for b, files in demo_files.items()} == fixture["expected_overlap"][
        "sizes"
    ]
