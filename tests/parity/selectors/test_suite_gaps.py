"""A suite that never ran on a backend is one row of the gaps lists (docs/suites.md, "A suite
that never ran"), at a realistic size: the reference runs ``main`` (20 tests) and ``torch_ops``
(3,412 tests) in one run; tpu runs ``main`` only, and the map excludes ``torch_ops`` on neuron.
The gaps page, its API and its CSV each show one row per (suite, backend) with the count
counted here from the uploads, list none of its 3,412 tests one by one, and list them all with
``suite=``; the gap rows themselves stay (the score counts them)."""

import csv
import datetime
import io

import pytest
from django.utils import timezone

from parity.models import Gap, GapState, ReferenceSuiteTest, WebhookNotice
from parity.services.suites import suite_map_load
from tests.junit_builder import Case, junit_xml
from tests.parity.services.test_webhooks import endpoint, receiver  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

NOW = timezone.now()
DAY = (NOW - datetime.timedelta(hours=2)).isoformat()
OPS = 3412
MAIN = [("test/main.py", "TestMain", f"test_{i:02}") for i in range(20)]
TORCH_OPS = [(f"test/ops/test_op{i // 100:02}.py", "TestOps", f"test_{i:04}") for i in range(OPS)]
REASON = "defined in the runner but never called"
ISSUE = "https://github.com/pytorch/xla/issues/9577"
GAPS = "/p/pytorch-xla/gaps/"


def xml(tests, failing=()) -> tuple[str, bytes]:
    cases = [
        Case(cls, name, "failed" if name in failing else "passed", "boom", file=file)
        for file, cls, name in tests
    ]
    return ("TEST-run.xml", junit_xml(*cases))


def send(ingest, backend, suite, tests, *, complete=True, failing=()):
    response = ingest(
        xml(tests, failing),
        backend=backend,
        commit="a" * 40,
        suite=suite,
        run=f"nightly-{backend}",
        timestamp=DAY,
        complete="true" if complete else "false",
    )
    assert response.status_code in (200, 202), response.content


@pytest.fixture
def never_ran(project, ingest):
    return _uploads(project, ingest)


def _uploads(project, ingest):
    suite_map_load(
        project=project,
        suites={
            "torch_ops": {
                "backends": {"neuron": {"excluded": True, "reason": REASON, "issue_url": ISSUE}}
            }
        },
    )
    send(ingest, "cpu", "main", MAIN, complete=False)
    send(ingest, "cpu", "torch_ops", TORCH_OPS)  # one run of the reference: both suites
    send(ingest, "tpu", "main", MAIN, failing={"test_03"})
    send(ingest, "neuron", "main", MAIN)
    return project


def test_a_suite_never_run_on_a_backend_is_one_row_of_the_gaps_page(never_ran, client):
    # The gap rows stay, one per test: the score counts them.
    missing = Gap.objects.filter(is_open=True, state=GapState.MISSING)
    assert missing.filter(backend__name="tpu").count() == OPS
    assert missing.filter(backend__name="neuron").count() == OPS
    assert ReferenceSuiteTest.objects.filter(suite="torch_ops").count() == OPS

    body = client.get(GAPS, {"open": "1"}).content.decode()
    assert body.count('<li data-backend="') == 2
    assert "suite <code>torch_ops</code> never ran on tpu:" in body
    assert "<strong>3,412 tests missing</strong>" in body
    assert "suite <code>torch_ops</code> is excluded on neuron:" in body
    assert REASON in body and ISSUE in body
    assert 'href="/p/pytorch-xla/suites/"' in body
    # Folded: the new gaps list holds only tpu's failure, not one row per missing test.
    assert body.count('<tr data-backend="') == 1
    assert "test_0001" not in body

    listed = client.get(
        GAPS, {"open": "1", "suite": "torch_ops", "backend": "tpu", "state": "missing"}
    ).content.decode()
    assert 'id="unrun-suites"' not in listed and 'id="suite-filter"' in listed
    assert '<span class="badge">3,412</span>' in listed
    assert 'href="?open=1&amp;suite=torch_ops&amp;backend=tpu&amp;state=missing' in body


def test_the_gaps_api_and_csv_carry_the_row_and_each_gaps_suite(never_ran, client, api):
    url = "/api/v1/projects/pytorch-xla/gaps/"
    body = api.get(url).json()
    assert body["count"] == 1  # tpu's failure of main; the 6,824 missing are two rows
    assert body["results"][0]["suite"] == "main"
    rows = {(s["suite"], s["backend"]): s for s in body["suites"]}
    assert rows == {
        ("torch_ops", "neuron"): {
            "suite": "torch_ops",
            "backend": "neuron",
            "status": "excluded",
            "missing": OPS,
            "reason": REASON,
            "issue_url": ISSUE,
        },
        ("torch_ops", "tpu"): {
            "suite": "torch_ops",
            "backend": "tpu",
            "status": "never_ran",
            "missing": OPS,
            "reason": "",
            "issue_url": "",
        },
    }
    one_by_one = api.get(url, {"suite": "torch_ops", "backend": "tpu", "limit": 5}).json()
    assert one_by_one["count"] == OPS and one_by_one["suites"] == []
    assert {g["suite"] for g in one_by_one["results"]} == {"torch_ops"}

    text = client.get("/p/pytorch-xla/gaps.csv", {"open": "1"}).content.decode()
    lines = list(csv.DictReader(io.StringIO(text)))
    assert len(lines) == 3
    excluded, never, failed = lines
    assert (never["backend"], never["state"], never["suite"], never["test"]) == (
        "tpu",
        "never_ran",
        "torch_ops",
        "",
    )
    assert never["reason"] == "3412 tests missing"
    assert excluded["reason"] == f"3412 tests missing: {REASON}" and excluded["issues"] == ISSUE
    assert (failed["backend"], failed["state"], failed["suite"]) == ("tpu", "failed", "main")


def test_the_digest_counts_a_suite_never_run_as_one_line(never_ran):
    from django.conf import settings

    from parity.digest.render import digest_render
    from parity.pure.weeks import Week
    from parity.selectors.digest import digest_content

    content = digest_content(project=never_ran, week=Week.of(NOW - datetime.timedelta(hours=2)))
    assert [(u.suite, u.backend, u.missing) for u in content.unrun_suites] == [
        ("torch_ops", "neuron", OPS),
        ("torch_ops", "tpu", OPS),
    ]
    assert content.new_total == 1  # tpu's failure; no group holds the folded missing gaps
    rendered = digest_render(content)
    assert "suite torch_ops never ran on tpu: 3,412 tests missing" in rendered.text
    assert f"suite torch_ops is excluded on neuron ({REASON}): 3,412 tests missing" in rendered.text
    url = f"{settings.SITE_URL}/p/pytorch-xla/gaps/?open=1&suite=torch_ops&backend=tpu"
    assert url in rendered.text
    assert "test_0001" not in rendered.text and "test_0001" not in rendered.html
    assert "1 new gap (1 untracked), 2 suites never run" in rendered.subject


def test_the_webhook_announces_a_suite_never_run_as_one_item(
    project,
    ingest,
    endpoint,  # noqa: F811
    receiver,  # noqa: F811
):
    endpoint()
    _uploads(project, ingest)
    events = [g.body["data"] for g in receiver.received if g.body["event"] == "untracked_gaps"]
    tpu = next(e for e in events if e["backend"] == "tpu")
    assert tpu["opened_total"] == 1 and [g["test"] for g in tpu["opened"]] == [
        "test/main.py::TestMain::test_03"
    ]
    assert tpu["suites"] == [
        {"suite": "torch_ops", "status": "never_ran", "opened": OPS, "reason": "", "issue_url": ""}
    ]
    notice = WebhookNotice.objects.get(event="untracked_gaps", payload__backend="tpu")
    title = "suite torch_ops never ran on tpu: 3,412 tests missing"
    assert notice.summary["title"].endswith(title)
    assert len(notice.subjects) == 1 + OPS  # each gap announced once, folded or not


def test_the_rows_cost_no_query_per_test(never_ran, client):
    """The folding reads the stored test -> suite and the matrix (per upload), never per test:
    the page reads as many queries with 3,412 tests folded as with one suite's 20 listed."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as folded:
        assert client.get(GAPS, {"open": "1"}).status_code == 200
    with CaptureQueriesContext(connection) as listed:
        assert client.get(GAPS, {"open": "1", "suite": "main"}).status_code == 200
    # Pinned: the listed page skips the matrix (a suite asked by name folds nothing); the
    # folded one reads it (backends, map, uploads, timed-out files), counts the rows and leaves
    # the folded gaps out of its list, whatever the number of tests.
    assert (len(folded), len(listed)) == (18, 14), [q["sql"][:80] for q in folded.captured_queries]
