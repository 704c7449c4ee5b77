"""What a week's digest lists, read from the engine's tables after runs uploaded through the API."""

import json

import pytest

from parity.digest.render import digest_context, digest_render
from parity.digest.services import digest_week_plan
from parity.models import Gap, ReasonLinksRecord
from parity.selectors.digest import digest_content
from parity.selectors.reason_links import IssueLink
from parity.services.triage import TriageRequest, triage_create
from tests.digest import scenario as s
from tests.parity.conftest import run_xml

W16 = s.W13.next.next.next


@pytest.fixture
def three_weeks(xla, upload_run, api):
    s.upload_week13(upload_run)
    s.upload_week14(upload_run)
    digest_week_plan(week=s.W14)  # records the links the W15 digest starts from
    s.relink_reasons(api)
    s.upload_week15(upload_run)
    return xla


def _new(content) -> list[tuple]:
    return [
        (b.backend, g.state, row.test.rsplit("_", 1)[1], row.tracking)
        for b in content.new_gaps
        for g in b.groups
        for row in g.gaps
    ]


def test_a_week_is_read_the_same_after_later_weeks_changed_things(three_weeks):
    """W14's t3 gap closed in W15: W14 still lists it as new (open at its end), not fixed."""
    content = digest_content(project=three_weeks, week=s.W14)

    assert _new(content) == [
        ("neuron", "error", "7", "untracked"),
        ("neuron", "missing", "6", "untracked"),
        ("tpu", "failed", "3", "untracked"),
        ("tpu", "skipped", "4", "untracked"),  # its reason lost its issue since
    ]
    assert content.fixed == []
    assert [r.reason for r in content.new_reasons] == [s.WITH_ISSUE]
    assert content.link_changes is None  # nothing recorded the links at W14's start


def test_scores_and_changes(three_weeks):
    scores = digest_content(project=three_weeks, week=s.W15).scores

    assert [(r.backend, r.score, r.before, r.open_gaps, r.untracked) for r in scores] == [
        ("gpu", None, None, 0, 0),
        ("neuron", 6 / 7, 5 / 7, 1, 1),
        ("tpu", 4 / 7, 4 / 7, 3, 2),
    ]


def test_the_score_leaves_intended_gaps_out(three_weeks):
    gap = Gap.objects.filter(backend__name="tpu", is_open=True, tracked=False).first()
    request = TriageRequest(kind="intended", gap=gap.pk, note="by design on tpu")
    triage_create(project=three_weeks, request=request)

    (tpu,) = digest_content(project=three_weeks, week=s.W15, backends=["tpu"]).scores
    assert (tpu.score, tpu.open_gaps) == (4 / 6, 3)  # 4 of the 6 tests meant to run there


def test_a_backend_filter_narrows_every_list(three_weeks):
    content = digest_content(project=three_weeks, week=s.W15, backends=["neuron"])

    assert [r.backend for r in content.scores] == ["neuron"]
    assert _new(content) == []
    assert [(g.backend, g.test.rsplit("_", 1)[1]) for g in content.fixed] == [("neuron", "6")]
    assert content.new_reasons == []  # bf16 is a TPU reason
    assert content.link_changes == []  # both relinked reasons are TPU's
    links = digest_context(content, unsubscribe_url=None)["links"]
    assert links.new_gaps.endswith("/p/pytorch-xla/gaps/?since=2026-04-06&backend=neuron")
    assert links.fixed_gaps == links.new_gaps + "#fixed-gaps"


def test_a_gap_opened_and_fixed_within_the_week_is_listed_as_fixed_only(xla, upload_run):
    upload_run("cpu", s.CPU, day="2026-04-06")
    upload_run("tpu", {**s.CPU, s.T[1]: ("failed", "boom")}, day="2026-04-06")
    upload_run("tpu", s.CPU, day="2026-04-07")

    content = digest_content(project=xla, week=s.W15)

    assert _new(content) == []
    assert [(g.backend, g.state, g.test) for g in content.fixed] == [("tpu", "failed", s.T[1])]


def test_long_lists_are_cut_with_a_count_of_the_rest(xla, upload_run, settings):
    settings.PARITY_DIGEST_MAX_GAPS = 2
    upload_run("cpu", s.CPU, day="2026-04-06")
    upload_run("tpu", {s.T[1]: "passed"}, day="2026-04-06")  # t2-t7 missing

    content = digest_content(project=xla, week=s.W15)
    (tpu,) = content.new_gaps
    (missing,) = tpu.groups
    assert (missing.state, missing.total, len(missing.gaps), missing.more) == ("missing", 6, 2, 4)
    text = digest_render(content).text
    assert "  ... and 4 more on the gaps page\n" in text
    assert text.count("  - [untracked] ") == 2


def test_a_crashed_file_is_listed_as_crashed_before_what_the_backend_never_had(xla, ingest):
    run = {
        "commit": "c" * 40,
        "branch": "master",
        "complete": "true",
        "timestamp": "2026-04-06T12:00:00Z",
    }
    ingest(("cpu.xml", run_xml(dict.fromkeys(s.CPU, "passed"))), backend="cpu", **run)
    # tpu's CI ran test_a.py, which segfaulted; test_b.py it never had in its list.
    manifest = {"files": [{"file": s.T[1].split("::")[0], "signal": "SIGSEGV"}]}
    ingest(backend="tpu", run_manifest=json.dumps(manifest), **run)

    content = digest_content(project=xla, week=s.W15)
    (tpu,) = content.new_gaps
    assert [(g.state, g.total) for g in tpu.groups] == [("crashed", 4), ("missing", 4)]
    assert "tpu, crashed: 4 (4 untracked)" in digest_render(content).text


def test_a_quiet_week_says_so_in_one_line(three_weeks):
    digest_week_plan(week=s.W15)
    content = digest_content(project=three_weeks, week=W16)
    rendered = digest_render(content)

    assert content.quiet
    assert rendered.subject == "[parity] pytorch-xla 2026-W16: quiet week"
    assert rendered.text == (
        "Parity digest of pytorch-xla, week 2026-W16 (13 Apr to 19 Apr 2026)\n"
        "\n"
        "Quiet week: no gaps opened or fixed, no new skip reasons, no issue link changes.\n"
        "\n"
        "Parity scores against cpu (the reference backend; intended gaps not counted), "
        "change over the week:\n"
        "  gpu      no run yet\n"
        "  neuron    85.7%  no change   1 open gap, 1 untracked\n"
        "  tpu       57.1%  no change   3 open gaps, 2 untracked\n"
        "\n"
        "Dashboard: https://parity.example.org/p/pytorch-xla/\n"
    )
    assert "<table" in rendered.html and "New gaps" not in rendered.html


def test_issue_links_compare_the_records_at_the_week_start_and_end(three_weeks):
    assert digest_content(project=three_weeks, week=s.W15).link_changes is not None
    # Recorded once, at the start of the week after the digest's; never overwritten.
    digest_week_plan(week=s.W15)
    digest_week_plan(week=s.W15)
    assert list(ReasonLinksRecord.objects.values_list("week", flat=True)) == [
        s.W15.monday,
        W16.monday,
    ]
    # A digest of an older week sent late records nothing: the links now are not its.
    digest_week_plan(week=s.W13)
    assert ReasonLinksRecord.objects.count() == 2
    changes = digest_content(project=three_weeks, week=s.W15).link_changes
    assert [(c.reason, c.gained, c.lost) for c in changes] == [
        (s.WITH_ISSUE, [], [IssueLink("pytorch/xla#1234", s.ISSUE_URL)]),
        (s.PLAIN, [IssueLink("pytorch/xla#777", s.TRIAGE_URL)], []),
    ]


def test_a_digest_reads_a_fixed_number_of_queries(three_weeks, django_assert_max_num_queries):
    # Set-based reads (backends, two snapshot sets, new and fixed gaps with their reasons'
    # issues, new reasons, link records and the links now, gaps tracked by closed issues,
    # exemptions that pass now, skips and gaps per category, the week's version transitions,
    # the targets, the tests that entered or left flaky, the suites' tier moves, whether any
    # test has a suite, the compare views): none per gap, reason, backend, transition, target,
    # flaky test, move or view.
    with django_assert_max_num_queries(25):
        digest_content(project=three_weeks, week=s.W15)


def test_gaps_tracked_only_by_closed_issues_are_counted_with_when_they_closed(
    xla, upload_run, fake_tracker, settings
):
    import datetime

    from parity.services.issue_sync import issues_sync
    from tests.fake_tracker import github_issue

    settings.PARITY_TRACKER_SYNC_SECONDS = settings.PARITY_TRACKER_SYNC_TICK_SECONDS  # all at once

    closed = {"state": "closed", "closed_at": "2026-03-02T10:00:00Z"}
    fake_tracker.add_github("pytorch/xla", github_issue(9017, "XLA has no complex64", **closed))
    later = {"state": "closed", "closed_at": "2026-04-20T10:00:00Z"}  # after W15 ended
    fake_tracker.add_github("pytorch/xla", github_issue(9018, "Lower nonzero", **later))
    fake_tracker.add_github("pytorch/xla", github_issue(9019, "Still open"))
    upload_run("cpu", s.passing(1, 2, 3, 4, 5), day="2026-04-08")
    tpu_run = {
        s.T[1]: ("skipped", "complex64, see #9017"),
        s.T[2]: ("skipped", "complex64, see #9017"),
        s.T[3]: ("skipped", "nonzero, see #9018"),
        s.T[4]: ("skipped", "see #9019"),
        **s.passing(5),
    }
    upload_run("tpu", tpu_run, day="2026-04-08")
    issues_sync()

    content = digest_content(project=xla, week=s.W15)

    (tpu,) = content.closed_tracking
    since = datetime.datetime(2026, 3, 2, 10, tzinfo=datetime.UTC)
    assert (tpu.backend, tpu.total, tpu.noun, tpu.since) == ("tpu", 2, "skips", since)
    assert [(e.issue.key, e.gaps) for e in tpu.issues] == [("#9017", 2)]
    rendered = digest_render(content)
    assert "2 tpu skips cite issues closed since 2 Mar 2026" in rendered.text
    line = "#9017 XLA has no complex64 (closed), closed 2 Mar 2026: 2 gaps"
    assert line in rendered.text
    assert "/p/pytorch-xla/gaps/?open=1&tracked=closed" in rendered.text
    assert "issue: #9019 Still open (open) https://github.com/pytorch/xla/issues/9019" in (
        rendered.text
    )
    # A week that ended after #9018 closed counts it too.
    (later_tpu,) = digest_content(project=xla, week=s.W15.next.next).closed_tracking
    assert later_tpu.total == 3


def test_exemptions_that_pass_in_a_probe_are_listed_to_remove(xla, upload_run, ingest, api):
    upload_run("cpu", s.CPU, day="2026-04-06")
    exempted = {n: ("skipped", "Exempted: a known issue") for n in (2, 3, 4, 5)}
    upload_run("tpu", {**s.CPU, **{s.T[n]: o for n, o in exempted.items()}}, day="2026-04-06")
    for n in (2, 3, 4, 5):
        body = {"kind": "tracked", "match": s.T[n], "backends": ["tpu"], "issue_url": s.ISSUE_URL}
        assert (
            api.post("/api/v1/projects/pytorch-xla/triage/", body, format="json").status_code == 201
        )
    # The week's probe: t2-t4 pass now, t5 still fails.
    probe = {**s.CPU, s.T[5]: ("failed", s.CLOSE)}
    response = ingest(
        ("probe.xml", run_xml(probe)),
        backend="tpu",
        commit="d" * 40,
        complete="true",
        probe="true",
        timestamp="2026-04-09T03:00:00Z",
    )
    assert response.status_code == 202, response.content

    content = digest_content(project=xla, week=s.W15)

    (tpu,) = content.passes_now
    assert (tpu.backend, tpu.total, tpu.matches) == ("tpu", 3, [s.T[2], s.T[3], s.T[4]])
    rendered = digest_render(content)
    assert "3 tpu exemptions pass now: remove them (probe run of 9 Apr 2026)" in rendered.text
    assert f"    - {s.T[2]}\n" in rendered.text and s.T[5] not in rendered.text.split("PASS NOW")[1]
    assert "/p/pytorch-xla/exemptions/?probe=passes" in rendered.text
    assert "3 tpu exemptions pass now: remove them" in rendered.html
    # Not a week before the probe ran.
    assert digest_content(project=xla, week=s.W14).passes_now == []


def test_a_family_reads_as_its_variants_and_the_scores_by_the_project_s_name(
    three_weeks, upload_run
):
    """rocm has no run of its own: its line names its variants, never "no run yet"; the heading
    names the project's agreement score, not "parity"."""
    from parity.models import Backend
    from parity.services.projects import project_score_set

    rocm = Backend.objects.create(project=three_weeks, name="rocm")
    Backend.objects.create(project=three_weeks, name="rocm-gfx942", family=rocm)
    project_score_set(project=three_weeks, definition="agree_any", counts_intended=True)
    three_weeks.refresh_from_db()

    rendered = digest_render(digest_content(project=three_weeks, week=s.W15))

    assert "  rocm         a family, no run of its own: its variants rocm-gfx942\n" in (
        rendered.text
    )
    assert "  rocm-gfx942  no run yet\n" in rendered.text
    assert (
        "Agreement scores (any difference) against cpu (the reference backend; intended gaps "
        "counted), change over the week:"
    ) in rendered.text
    assert "Parity scores" not in rendered.text and "Parity scores" not in rendered.html
    assert "its variants rocm-gfx942</td>" in rendered.html
