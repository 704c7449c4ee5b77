"""The dated score trend (``parity.selectors.trends``), from runs uploaded through the API: a
variant's score each day it ran, dated, with the ROCm upgrade and the coverage drop marked
where they happened; numbers counted here from the uploads, not read back from the engine."""

import datetime
import json

import pytest
from django.utils import timezone

from parity import selectors
from parity.models import Backend
from parity.selectors.trends import ATTRIBUTES, COVERAGE_DROP
from tests.parity.conftest import commit_of, run_xml

TESTS = [f"test/test_ops.py::TestOps::test_{n}" for n in range(10)]
TODAY = timezone.now().date()
DAYS = [str(TODAY - datetime.timedelta(days=n)) for n in (5, 4, 3, 2)]
# Per day: the variant's rocm release, and which of the ten tests it ran and passed.
VARIANT_DAYS = [
    ("7.13", TESTS, TESTS[:8]),
    ("7.13", TESTS, TESTS[:9]),
    ("7.14", TESTS, TESTS),
    ("7.14", TESTS[:5], TESTS[:5]),  # half the tests gone: a coverage drop
]


@pytest.fixture
def history(xla, ingest, eager_errors_propagate):
    family = Backend.objects.create(project=xla, name="rocm")
    Backend.objects.create(project=xla, name="rocm-gfx942", family=family)
    for day, (release, ran, passed) in zip(DAYS, VARIANT_DAYS, strict=True):
        for backend, cases, attributes, time in (
            ("cpu", dict.fromkeys(TESTS, "passed"), {}, "10:00"),
            (
                "rocm-gfx942",
                {t: "passed" if t in passed else ("failed", "boom") for t in ran},
                {"arch": "gfx942", "rocm": release},
                "12:00",
            ),
        ):
            reply = ingest(
                ("results.xml", run_xml(cases)),
                backend=backend,
                commit=commit_of(day),
                branch="master",
                run=f"{day}-{backend}",
                complete="true",
                timestamp=f"{day}T{time}:00Z",
                attributes=json.dumps(attributes),
            )
            assert reply.status_code in (200, 202), reply.content
    xla.refresh_from_db()
    return xla


def test_a_variant_s_score_is_dated_and_its_upgrade_and_coverage_drop_marked(
    history, django_assert_num_queries
):
    backends = selectors.trend_backends(project=history, name="rocm")  # the family: its variant
    since = timezone.now() - datetime.timedelta(days=90)

    with django_assert_num_queries(4):
        (line,) = selectors.score_history(project=history, backends=backends, since=since)

    assert line.backend == "rocm-gfx942"
    by_hand = [len(passed) / len(TESTS) for _, _, passed in VARIANT_DAYS]
    assert [(str(p.at.date()), p.score) for p in line.points] == list(
        zip(DAYS, by_hand, strict=True)
    )
    assert [(p.passing, p.compared, p.tests) for p in line.points][-1] == (5, 10, 5)
    assert [(str(m.at.date()), m.kind, m.text) for m in line.marks] == [
        (DAYS[2], ATTRIBUTES, "rocm 7.13 → 7.14"),
        (DAYS[3], COVERAGE_DROP, "coverage dropped to 5 tests"),
    ]


def test_the_trend_draws_every_backend_but_the_reference_and_none_for_an_unknown_name(history):
    names = [b.name for b in selectors.trend_backends(project=history, name=None)]

    assert "cpu" not in names and {"rocm", "rocm-gfx942", "tpu"} <= set(names)
    assert selectors.trend_backends(project=history, name="nope") == []


def test_the_trend_page_dates_the_marks_and_the_overview_s_sparkline_links_to_it(history, client):
    page = client.get("/p/pytorch-xla/trend/?backend=rocm&days=30")
    html = page.content.decode()

    assert page.status_code == 200
    assert 'data-backend="rocm-gfx942"' in html
    assert f"{DAYS[2]}: rocm 7.13 → 7.14" in html
    assert f"{DAYS[3]}: coverage dropped to 5 tests" in html
    assert "80 % on " + DAYS[0] in html and "<strong>50 %</strong> on " + DAYS[3] in html
    assert 'id="trend-data" type="application/json"' in html
    assert "<script>" not in html and "onclick" not in html and 'style="' not in html
    assert client.get("/p/pytorch-xla/trend/?backend=nope").status_code == 404
    overview = client.get("/").content.decode()
    assert 'href="/p/pytorch-xla/trend/?backend=rocm-gfx942"><svg class="spark"' in overview
