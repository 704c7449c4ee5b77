"""Targets (docs/targets.md) over runs uploaded through the API: a burn-down of one more
passing test a day on tpu, a target set on it through the API (its denominator the tests
expected then), its forecast on the trend page and in the JSON equal to the formula counted here
from the uploads; tests added later leave the steering figure alone; a target at risk is one
webhook event per entry, with hysteresis; maintainers only set one."""

import datetime
import re

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from parity import selectors, tasks
from parity.digest.render import digest_render
from parity.models import Target, WebhookEndpoint, WebhookNotice
from parity.pure.weeks import Week
from parity.selectors.digest import digest_content
from tests.parity.dashboard.conftest import member

TODAY = timezone.now().date()
DAYS = [TODAY - datetime.timedelta(days=n) for n in (4, 3, 2, 1, 0)]
TESTS = [f"test/t.py::TestT::test_{n:02}" for n in range(20)]
URL = "/api/v1/projects/pytorch-xla/targets/"


def _tpu(passing: int, tests=TESTS) -> dict:
    return {t: "passed" if i < passing else ("failed", "boom") for i, t in enumerate(tests)}


@pytest.fixture
def burn_down(upload_run):
    """cpu passes all 20; tpu passes 10, 11, 12, 13, 14 over the last five days."""
    for n, day in enumerate(DAYS):
        upload_run("cpu", dict.fromkeys(TESTS, "passed"), day=str(day), time="00:10")
        upload_run("tpu", _tpu(10 + n), day=str(day), time="00:20")


def _set(api, **body) -> dict:
    response = api.post(URL, {"backend": "tpu", "score": 0.9, **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_the_forecast_is_today_plus_remaining_over_the_rate(burn_down, api, xla):
    due = TODAY + datetime.timedelta(days=30)
    made = _set(api, due=str(due), note="Q1 gate")
    # Counted from the uploads: 20 expected, a goal of 18, 14 pass today, one more a day.
    assert (made["denominator"], made["goal"], made["passing"]) == (20, 18, 14)
    assert (made["remaining"], made["rate_per_day"]) == (4, pytest.approx(1.0))
    assert made["forecast"] == str(TODAY + datetime.timedelta(days=4))
    assert (made["published"], made["steering"]) == (0.7, 0.7)
    assert not made["at_risk"] and not made["no_progress"]
    [listed] = api.get(URL).json()
    assert listed == made

    page = member(xla, "viewer").get("/p/pytorch-xla/trend/?backend=tpu")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'id="trend-targets"' in body and "90 % by " + str(due) in body
    assert f"forecast {TODAY + datetime.timedelta(days=4)} (1.0 tests a day)" in body
    chart = page.context["chart"]["targets"]
    assert chart == [
        {
            "backend": "tpu",
            "score": 90.0,
            "due": str(due),
            "forecast": str(TODAY + datetime.timedelta(days=4)),
            "drawn": True,
            "at_risk": False,
            "hover": f"forecast {TODAY + datetime.timedelta(days=4)} (1.0 tests a day)",
        }
    ]


def test_new_tests_move_the_published_figure_not_the_steering_one(burn_down, api, upload_run):
    _set(api, due=str(TODAY + datetime.timedelta(days=30)))
    more = TESTS + [f"test/u.py::TestU::test_{n:02}" for n in range(20)]  # 20 more, failing
    upload_run("cpu", dict.fromkeys(more, "passed"), day=str(TODAY), time="01:10", run="late-cpu")
    upload_run("tpu", _tpu(15, more), day=str(TODAY), time="01:20", run="late-tpu")
    [row] = api.get(URL).json()
    assert row["denominator"] == 20  # fixed when it was set
    assert (row["published"], row["steering"]) == (15 / 40, 15 / 20)
    assert row["remaining"] == 3


def test_a_flat_history_is_no_progress_and_at_risk(upload_run, api):
    for day in DAYS:
        upload_run("cpu", dict.fromkeys(TESTS, "passed"), day=str(day), time="00:10")
        upload_run("tpu", _tpu(12), day=str(day), time="00:20")
    row = _set(api, due=str(TODAY + datetime.timedelta(days=300)))
    assert row["no_progress"] and row["forecast"] is None and row["at_risk"]
    assert row["rate_per_day"] == pytest.approx(0.0)


def test_a_target_at_risk_is_a_digest_line(upload_run, api, xla):
    for day in DAYS:
        upload_run("cpu", dict.fromkeys(TESTS, "passed"), day=str(day), time="00:10")
        upload_run("tpu", _tpu(12), day=str(day), time="00:20")
    due = TODAY + datetime.timedelta(days=300)
    _set(api, due=str(due))
    week = Week.of(TODAY)
    rendered = digest_render(digest_content(project=xla, week=week))
    line = f"tpu: 90.0% by {due}: no progress, 6 tests to go"
    assert "TARGETS AT RISK" in rendered.text and line in rendered.text
    url = f"{settings.SITE_URL}/p/pytorch-xla/trend/?backend=tpu"
    assert url in rendered.text and "1 target at risk" in rendered.subject
    assert digest_content(project=xla, week=week, backends=["cpu"]).targets_at_risk == []


def test_at_risk_is_one_event_per_entry_with_hysteresis(burn_down, api, xla):
    WebhookEndpoint.objects.create(
        project=xla, url="https://hooks.example/p", events=["target_at_risk"]
    )
    target = Target.objects.get(pk=_set(api, due=str(TODAY + datetime.timedelta(days=30)))["id"])

    def assess(due_in: int) -> bool:
        Target.objects.filter(pk=target.pk).update(due=TODAY + datetime.timedelta(days=due_in))
        tasks.targets_assessed(xla.pk)
        return Target.objects.get(pk=target.pk).at_risk

    notices = WebhookNotice.objects.filter(project=xla, event="target_at_risk")
    assert not assess(30) and notices.count() == 0  # forecast in 4 days: on track
    assert assess(2) and notices.count() == 1  # due before the forecast: at risk
    payload = notices.get().payload
    assert (payload["backend"], payload["remaining"], payload["no_progress"]) == ("tpu", 4, False)
    assert payload["forecast"] == str(TODAY + datetime.timedelta(days=4))
    assert assess(3) and assess(8) and notices.count() == 1  # inside the margin: stays, silent
    assert not assess(12)  # forecast more than 7 days before the date: leaves
    assert assess(3) and notices.count() == 2  # a second entry, a second event


def test_only_maintainers_set_or_remove_a_target(burn_down, api, xla):
    viewer = member(xla, "viewer")
    body = {"backend": "tpu", "score": 0.9, "due": str(TODAY)}
    assert viewer.post(URL, body, content_type="application/json").status_code == 403
    made = _set(api, due=str(TODAY))
    assert viewer.delete(f"{URL}{made['id']}/").status_code == 403
    assert viewer.get(URL).status_code == 200
    assert api.post(URL, {**body, "backend": "cpu"}, format="json").status_code == 400  # reference
    assert api.post(URL, {**body, "score": 95}, format="json").status_code == 400  # not a share
    assert api.delete(f"{URL}{made['id']}/").status_code == 204
    assert api.get(URL).json() == []


def test_targets_read_in_three_queries(burn_down, api, xla, django_assert_num_queries):
    _set(api, due=str(TODAY))
    with django_assert_num_queries(3):
        selectors.targets_progress(project=xla)


def test_the_trend_page_reads_as_many_queries_for_one_target_as_for_five(burn_down, api, xla):
    viewer = member(xla, "viewer")

    def page_queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert viewer.get("/p/pytorch-xla/trend/").status_code == 200
        return len(captured)

    _set(api, due=str(TODAY))
    one = page_queries()
    for days in range(1, 5):
        _set(api, due=str(TODAY + datetime.timedelta(days=days)))
    assert page_queries() == one


# --- The trend page's form (maintainers) ---------------------------------------------------------

TREND = "/p/pytorch-xla/trend/"


def test_a_maintainer_sets_a_target_on_the_trend_page_and_reads_it(burn_down, xla):
    maintainer = member(xla, "maintainer")
    assert 'id="target-form"' in maintainer.get(TREND).content.decode()
    due = TODAY + datetime.timedelta(days=30)
    form = {"backend": "tpu", "score": "90", "due": str(due), "note": "Q1 gate"}
    page = maintainer.post(f"{TREND}?backend=tpu", form, follow=True)
    assert page.redirect_chain == [(f"{TREND}?backend=tpu#trend-targets", 302)]
    target = Target.objects.get()
    assert (target.backend.name, target.score, target.due) == ("tpu", 0.9, due)
    assert target.denominator == 20  # the tests tpu's score counts today, as the API fixes it
    body = page.content.decode()
    assert f'data-target="{target.pk}"' in body and f"90 % by {due}" in body
    assert f"forecast {TODAY + datetime.timedelta(days=4)} (1.0 tests a day)" in body


def test_a_reader_sees_no_target_form_and_may_not_post_one(burn_down, xla, client):
    viewer = member(xla, "viewer")
    assert 'id="target-form"' not in viewer.get(TREND).content.decode()
    assert 'id="target-form"' not in client.get(TREND).content.decode()  # anonymous, public
    form = {"backend": "tpu", "score": "90", "due": str(TODAY)}
    assert viewer.post(TREND, form).status_code == 403
    assert client.post(TREND, form).status_code == 403
    assert not Target.objects.exists()


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({"backend": "gpu", "score": "90"}, "gpu has no score yet"),  # the service refuses
        ({"backend": "tpu", "score": "95", "due": "2027-13-45"}, "Enter a valid date"),
        ({"backend": "tpu", "score": "120"}, "less than or equal to 100"),
        ({"backend": "cpu", "score": "90"}, "Select a valid choice"),  # the reference
        (  # a date that has passed: the service refuses it, on the date's field
            {"backend": "tpu", "score": "90", "due": str(TODAY - datetime.timedelta(days=1))},
            "has passed",
        ),
    ],
)
def test_a_refused_target_is_a_form_error_that_keeps_the_input(burn_down, xla, form, error):
    maintainer = member(xla, "maintainer")
    form = {"due": str(TODAY + datetime.timedelta(days=30)), "note": "kept note", **form}
    page = maintainer.post(TREND, form)
    assert page.status_code == 200
    body = page.content.decode()
    assert error in body and 'value="kept note"' in body
    assert not Target.objects.exists()


def test_a_maintainer_removes_a_target_from_the_table(burn_down, api, xla):
    made = _set(api, due=str(TODAY + datetime.timedelta(days=30)))
    remove = f"/p/pytorch-xla/trend/targets/{made['id']}/remove/"
    viewer = member(xla, "viewer")
    assert viewer.post(remove).status_code == 403
    assert viewer.get(remove).status_code == 405
    maintainer = member(xla, "maintainer")
    assert f'action="{remove}"' in maintainer.get(TREND).content.decode()
    page = maintainer.post(remove, {"next": f"{TREND}?backend=tpu"}, follow=True)
    assert page.redirect_chain == [(f"{TREND}?backend=tpu", 302)]
    assert not Target.objects.exists()
    assert "No target yet." in page.content.decode()
    assert maintainer.post(remove).status_code == 404


def test_a_maintainer_changes_a_target_and_its_denominator_stays(burn_down, api, xla, upload_run):
    made = _set(api, due=str(TODAY + datetime.timedelta(days=30)))
    more = TESTS + [f"test/u.py::TestU::test_{n:02}" for n in range(20)]
    upload_run("cpu", dict.fromkeys(more, "passed"), day=str(TODAY), time="01:10", run="late-cpu")
    maintainer = member(xla, "maintainer")
    p = f"t{made['id']}-"
    assert f'name="{p}score" value="90.0"' in maintainer.get(TREND).content.decode()
    due = TODAY + datetime.timedelta(days=60)
    form = {"edit": made["id"], f"{p}target": made["id"], f"{p}score": "80", f"{p}due": str(due)}
    page = maintainer.post(TREND, form, follow=True)
    assert page.redirect_chain == [(f"{TREND}#trend-targets", 302)]
    target = Target.objects.get()
    assert (target.score, target.due, target.denominator) == (0.8, due, 20)
    assert f"80 % by {due}" in page.content.decode()

    bad = maintainer.post(TREND, {**form, f"{p}score": "0", f"{p}note": "kept"})
    assert bad.status_code == 200 and "greater than or equal to 0.01" in bad.content.decode()
    assert 'value="kept"' in bad.content.decode()
    assert Target.objects.get().score == 0.8
    assert member(xla, "viewer").post(TREND, form).status_code == 403


def test_a_target_dated_in_the_past_is_refused_and_an_old_one_keeps_its_date(burn_down, api, xla):
    yesterday = TODAY - datetime.timedelta(days=1)
    refused = api.post(URL, {"backend": "tpu", "score": 0.9, "due": str(yesterday)}, format="json")
    assert refused.status_code == 400
    assert refused.json()["detail"] == (
        f"A target's date is today or later (UTC): {yesterday} has passed."
    )
    assert not Target.objects.exists()
    # A target whose date has passed since keeps it when its note changes; moving it to
    # another past date is refused as setting one is.
    made = _set(api, due=str(TODAY))
    Target.objects.filter(pk=made["id"]).update(due=yesterday)
    maintainer = member(xla, "maintainer")
    p = f"t{made['id']}-"
    form = {"edit": made["id"], f"{p}target": made["id"], f"{p}score": "90"}
    kept = maintainer.post(TREND, {**form, f"{p}due": str(yesterday), f"{p}note": "late"})
    assert kept.status_code == 302
    assert (Target.objects.get().due, Target.objects.get().note) == (yesterday, "late")
    earlier = str(yesterday - datetime.timedelta(days=1))
    moved = maintainer.post(TREND, {**form, f"{p}due": earlier})
    assert moved.status_code == 200 and "has passed" in moved.content.decode()
    assert Target.objects.get().due == yesterday


def test_a_target_on_a_family_is_refused_with_why(burn_down, api, xla):
    from parity.models import Backend

    family = Backend.objects.create(project=xla, name="rocm")
    Backend.objects.create(project=xla, name="rocm-gfx942", family=family)
    due = str(TODAY + datetime.timedelta(days=30))
    refused = api.post(URL, {"backend": "rocm", "score": 0.9, "due": due}, format="json")
    assert refused.status_code == 400
    assert refused.json()["detail"] == "rocm is a family: set a target on each of its variants."
    assert not Target.objects.exists()


def test_the_trend_page_lights_its_own_tab(burn_down, client):
    html = client.get(TREND).content.decode()
    tabs = html.split('<nav class="tabs"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'aria-current="page"[^>]*>([^<]+)<', tabs) == ["Trend"]
