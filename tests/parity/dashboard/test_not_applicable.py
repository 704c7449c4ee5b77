"""Tests declared not applicable on a backend: out of its gaps and score, listed apart with their
source on the Not applicable page, and set aside (or restored) by a maintainer there."""

import pytest

from parity.models import Snapshot, Triage
from parity.services.triage import TriageRequest, triage_create
from tests.parity.dashboard.conftest import text
from tests.parity.dashboard_scenario import B

URL = "/p/pytorch-xla/"


def neuron_numbers() -> tuple[int, int, int]:
    snapshot = Snapshot.objects.filter(backend__name="neuron").latest("at")
    return snapshot.not_applicable, snapshot.missing + snapshot.skipped, snapshot.reference_passing


@pytest.fixture
def declared(xla, runs, maintainer) -> Triage:
    # Neuron has no kernel for test_b's ops: on day 2 it skipped b1 and lacked b2-b4.
    return triage_create(
        project=xla,
        request=TriageRequest(
            kind="not_applicable",
            backend="neuron",
            match=B,
            note="no neuron lowering for these ops",
            source="import:intel-na",
        ),
        user=maintainer.user,
    )


@pytest.mark.django_db
def test_a_declaration_takes_its_tests_out_of_the_gaps_and_the_score(xla, runs, api, declared):
    gaps = api.get("/api/v1/projects/pytorch-xla/gaps/?backend=neuron").json()["results"]
    assert not [g for g in gaps if g["test"].startswith(B)]
    listed = api.get("/api/v1/projects/pytorch-xla/gaps/?backend=neuron&not_applicable=true")
    rows = listed.json()["results"]
    assert sorted(g["test"].rsplit("_", 1)[1] for g in rows) == ["b1", "b2", "b3", "b4"]
    assert {(g["not_applicable"], g["source"]) for g in rows} == {(True, "import:intel-na")}
    assert neuron_numbers() == (4, 0, 6)  # 10 tests the CPU passes, 4 of them not applicable


@pytest.mark.django_db
def test_the_page_lists_each_declaration_with_its_source_and_tests(client, declared):
    page = text(client.get(f"{URL}not-applicable/"))
    assert "import:intel-na" in page and "neuron: 4" in page
    assert "no neuron lowering for these ops" in page
    assert "Set aside" not in page  # only maintainers override


@pytest.mark.django_db
def test_a_maintainer_sets_a_declaration_aside_and_restores_it(maintainer, viewer, declared):
    override = f"{URL}not-applicable/{declared.pk}/override/"
    assert viewer.post(override, {"overridden": "1"}).status_code == 403
    assert neuron_numbers()[0] == 4

    answer = maintainer.post(override, {"overridden": "1"}, follow=True)
    assert "set aside" in text(answer)
    assert neuron_numbers() == (0, 4, 10)  # its 4 tests are gaps again
    assert "overridden" in text(maintainer.get(f"{URL}not-applicable/"))

    maintainer.post(override, {"overridden": "0"})
    assert neuron_numbers() == (4, 0, 6)
