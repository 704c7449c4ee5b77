"""The version transitions pages: the list, newest first, and one transition's report, whose
four lists link each test the uploads say moved that way (``transitions_scenario``); the run
that made it links its report, on the runs list and on its page."""

import re
from html import unescape

import pytest
from django.test import Client

from parity.models import TestCase, Transition
from tests.parity.dashboard.conftest import text
from tests.parity.transitions_scenario import expected, history, upgrade_upload

P = "/p/pytorch-xla"


@pytest.fixture
def upgraded(xla, ingest, eager_errors_propagate):
    runs = history()
    return runs, upgrade_upload(xla, ingest, runs), Transition.objects.get()


def plain(response) -> str:
    """A page's text: ``text`` without its tags."""
    assert response.status_code == 200, response.status_code
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def _section(html: str, kind: str) -> str:
    return re.search(rf'<section class="card moved" id="{kind}">(.*?)</section>', html, re.S)[1]


def test_the_report_links_each_test_of_each_kind(xla, upgraded):
    runs, _, transition = upgraded
    page = Client().get(f"{P}/transitions/{transition.pk}/")
    html = page.content.decode()
    keys = dict(TestCase.objects.filter(project=xla).values_list("pk", "key"))
    for kind, tests in expected(runs["day2"], runs["day3"]).items():
        linked = re.findall(rf'href="{P}/tests/(\d+)/"', _section(html, kind))
        assert {keys[int(pk)] for pk in linked} == tests, kind
        assert len(linked) == len(tests)
    body = plain(page)
    assert "rocm-gfx942: rocm 7.1 → 7.14" in body, body
    assert "rocm < 7.14 stopped holding" in body and "rocm >= 7.14 started holding" in body
    assert "{%" not in body and "{{" not in body


def test_a_list_pages_by_its_own_parameter(upgraded, monkeypatch):
    runs, _, transition = upgraded
    monkeypatch.setattr("parity.dashboard.transition_views.TESTS_PER_PAGE", 3)
    truth = expected(runs["day2"], runs["day3"])
    html = Client().get(f"{P}/transitions/{transition.pk}/?new=2").content.decode()
    new = _section(html, "new")
    assert len(re.findall(r'href="/p/pytorch-xla/tests/', new)) == min(3, len(truth["new"]) - 3)
    assert f"page 2 of {-(-len(truth['new']) // 3)}" in new
    assert 'href="?new=3#new"' in new and 'href="?new=1#new"' in new
    kept = Client().get(f"{P}/transitions/{transition.pk}/?gone=2&new=2").content.decode()
    assert 'href="?gone=2&amp;new=3#new"' in _section(kept, "new")  # the other list keeps its page


def test_the_list_and_the_runs_link_the_report(upgraded):
    _, uploaded, transition = upgraded
    listed = plain(Client().get(f"{P}/transitions/"))
    assert f"{P}/transitions/{transition.pk}/" in Client().get(f"{P}/transitions/").content.decode()
    assert "rocm-gfx942" in listed and "rocm 7.1 → 7.14" in listed
    report = f'href="{P}/transitions/{transition.pk}/"'
    runs_page = Client().get(f"{P}/runs/").content.decode()
    assert runs_page.count(report) == 1
    assert re.search(rf'id="run-{uploaded["day3"].pk}".*?{re.escape(report)}', runs_page, re.S)
    run_page = plain(Client().get(f"{P}/runs/{uploaded['day3'].pk}/"))
    assert "A version transition: rocm 7.1 → 7.14 since run" in run_page
    assert "The transition report" not in text(Client().get(f"{P}/runs/{uploaded['day2'].pk}/"))


def test_an_unknown_transition_is_404(xla):
    assert Client().get(f"{P}/transitions/999/").status_code == 404
    assert "No version transitions yet" in text(Client().get(f"{P}/transitions/"))


def test_a_page_past_the_end_is_an_empty_page_not_an_error(upgraded):
    _, _, transition = upgraded
    huge = "9" * 30
    page = Client().get(f"{P}/transitions/{transition.pk}/?new={huge}&gone=x&fail_to_pass=-2")
    assert page.status_code == 200
    assert Client().get(f"{P}/transitions/?page={huge}").status_code == 200
