"""The digest announces the gaps the week's runs uncovered (issue 45), as their verdicts and the
``untracked_gaps`` webhook do: an exemption that expired since the run before, or that a
maintainer removed since, left a gap untracked though no run opened it."""

import datetime

from parity.digest.render import digest_render
from parity.models import Triage
from parity.pure.weeks import Week
from parity.services.triage import TriageRequest, triage_create, triages_delete, triages_expire

A, B = "test/a.py::TestA::test_a", "test/a.py::TestA::test_b"
WEEK = Week.parse("2026-W19")  # Monday 4 May 2026


def test_the_weeks_uncovered_gaps_are_counted_and_listed_with_why(
    xla, upload_run, client, django_user_model
):
    from parity.result_reads.week_uncovered import week_uncovered
    from parity.selectors.digest import digest_content

    upload_run("cpu", {A: "passed", B: "passed"}, day="2026-05-04")
    expiring, removed = (
        triage_create(
            project=xla,
            request=TriageRequest(
                kind="intended",
                backends=["tpu"],
                match=test,
                note="x",
                expires_on=datetime.date(2099, 1, 1),
            ),
        )  # fmt: skip
        for test in (A, B)
    )
    fails = {A: ("failed", "boom"), B: ("failed", "boom")}
    upload_run("tpu", fails, day="2026-05-04")
    Triage.objects.filter(pk=expiring.pk).update(expires_on=datetime.date(2026, 12, 1))
    triages_expire()
    triages_delete(triages=[removed], user=django_user_model.objects.create(username="alice"))
    upload_run("tpu", fails, day="2026-05-05")

    uncovered = week_uncovered(project=xla, week=WEEK)
    content = digest_content(project=xla, week=WEEK, uncovered=uncovered)
    today = datetime.datetime.now(datetime.UTC).date()
    assert sorted((u.backend, u.test, u.why) for u in content.uncovered) == [
        ("tpu", A, "expired 2026-12-01"),
        ("tpu", B, f"removed by alice on {today}"),
    ]
    rendered = digest_render(content)
    assert "2 uncovered" in rendered.subject
    assert "UNCOVERED" in rendered.text and "expired 2026-12-01" in rendered.text
    assert f"removed by alice on {today}" in rendered.html
    # The preview reads them too, and a week without such runs lists none.
    page = client.get(f"/p/{xla.slug}/digest/?week={WEEK}")
    assert "expired 2026-12-01" in page.content.decode()
    assert week_uncovered(project=xla, week=WEEK.next) == []
