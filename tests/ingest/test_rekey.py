"""A re-key of stored tests: its plan counts what the re-key then does, on stored uploads, and a
merge keeps results and triages on the one test."""

import pytest

from ingest.rekey import rekey_plan_compute
from ingest.services import RekeyRejected, rekey_request, rekey_start
from parity.models import Gap, Rekey, RekeyStatus, Result, TestCase, Triage
from parity.pure.normalize import validate_rules
from parity.pure.normalize.presets import preset_rules
from parity.services.projects import project_rules_update
from parity.services.triage import TriageRequest, triage_create
from tests.junit_builder import Case, junit_xml

SUITE = "test.dialect.test_suite"
POSTGRES, SQLITE = "_postgresql+psycopg2_15_20", "_sqlite+pysqlite_3_45"


def _report(database: str, *, skipped: str = "") -> bytes:
    return junit_xml(
        Case(f"{SUITE}.ComponentReflectionTest{database}", "test_get_multi_columns"),
        Case(
            f"{SUITE}.ComponentReflectionTest{database}",
            "test_get_indexes",
            "skipped" if skipped else "passed",
            skipped,
        ),
        Case(f"{SUITE}.ExpandingBoundInTest{database}", "test_empty_list"),
        Case("test.orm.test_query.QueryTest", "test_get"),
    )


@pytest.fixture
def stored(project, ingest):
    """Four runs keyed under plain rules: sqlite (the reference, cpu) and postgres (gpu), two
    commits each; postgres skips one test, which a triage tracks."""
    project_rules_update(project=project, rules=preset_rules("plain"))
    for commit in ("1" * 40, "2" * 40):
        ingest(("cpu.xml", _report(SQLITE)), backend="cpu", commit=commit, complete="true")
        ingest(
            ("gpu.xml", _report(POSTGRES, skipped="Not supported on PostgreSQL")),
            backend="gpu",
            commit=commit,
            complete="true",
        )
    skipped = TestCase.objects.get(key__contains=f"ComponentReflectionTest{POSTGRES}::test_get_in")
    triage = triage_create(
        project=project,
        request=TriageRequest(kind="intended", test=skipped.pk, backend="gpu", note="no indexes"),
    )
    return triage


def _keys_by_upload() -> dict[int, set[str]]:
    by_upload: dict[int, set[str]] = {}
    for upload, key in Result.objects.values_list("upload_id", "test__key"):
        by_upload.setdefault(upload, set()).add(key)
    return by_upload


def test_the_plan_counts_what_the_rekey_does(project, stored, django_capture_on_commit_callbacks):
    before = set(TestCase.objects.values_list("key", flat=True))
    results_before = Result.objects.count()
    by_upload_before = _keys_by_upload()
    rules = preset_rules("sqlalchemy")

    with django_capture_on_commit_callbacks(execute=True):
        rekey = rekey_request(project=project, rules=rules)
    rekey.refresh_from_db()
    assert rekey.status == RekeyStatus.PLANNED
    plan = rekey.plan
    assert project.normalization_rules == preset_rules("plain")  # nothing changed yet
    assert (plan["runs"], plan["uploads"], plan["tests"]) == (4, 4, 7)
    assert plan["changed"] == 6  # three classes on two databases each; QueryTest stays
    assert (plan["merged_into"], plan["merging"], plan["split"], plan["unmatched"]) == (3, 6, 0, 0)
    merged = "test/dialect/test_suite.py::ComponentReflectionTest::test_get_indexes"
    olds = [f"{merged.replace('Test::', f'Test{db}::')}" for db in (POSTGRES, SQLITE)]
    assert [merged, olds] in plan["merges"]

    with django_capture_on_commit_callbacks(execute=True):
        rekey_start(rekey=rekey)
    rekey.refresh_from_db()
    assert rekey.status == RekeyStatus.DONE, rekey.message
    after = set(TestCase.objects.values_list("key", flat=True))

    # What the plan said: six keys went, three new ones took them, one stayed.
    assert len(before - after) == plan["changed"]
    assert len(after - before) == plan["merged_into"]
    assert len(before & after) == plan["tests"] - plan["changed"]
    assert rekey.summary["tests_deleted"] == plan["changed"]
    # Case by case: each upload's results are under the keys the plan mapped its old ones to.
    project.refresh_from_db()
    assert project.normalization_rules == rules
    old_to_new = {
        old: TestCase.objects.get(key=key).key
        for old in before
        for key in [old.replace(POSTGRES, "").replace(SQLITE, "")]
    }
    for upload, keys in by_upload_before.items():
        assert _keys_by_upload()[upload] == {old_to_new[key] for key in keys}
    assert Result.objects.count() == results_before
    # Planned again under the rules now saved, nothing moves: every stored key is theirs.
    again, _ = rekey_plan_compute(project=project, rules=validate_rules(rules))
    assert (again.tests, again.changed, again.unmatched) == (4, 0, 0)


def test_a_merge_keeps_the_triage_on_the_one_test(
    project, stored, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        rekey = rekey_request(project=project, rules=preset_rules("sqlalchemy"))
    with django_capture_on_commit_callbacks(execute=True):
        rekey_start(rekey=rekey)
    rekey.refresh_from_db()
    assert rekey.summary["triages_moved"] == 1

    triage = Triage.objects.get(pk=stored.pk)
    assert (
        triage.test.key == "test/dialect/test_suite.py::ComponentReflectionTest::test_get_indexes"
    )
    # The one test passes on sqlite and is skipped on postgres: one gap, and the triage holds it.
    gap = Gap.objects.get(test=triage.test, is_open=True)
    assert (gap.backend.name, gap.state, gap.triage_id, gap.intended) == (
        "gpu",
        "skipped",
        triage.pk,
        True,
    )
    results = Result.objects.filter(test=triage.test).values_list("run__backend__name", flat=True)
    assert sorted(results) == ["cpu", "cpu", "gpu", "gpu"]


def test_bad_rules_are_refused_before_anything_is_stored(project):
    with pytest.raises(RekeyRejected, match="backend_pattern.class: .* no group named 'backend'"):
        rekey_request(project=project, rules={"backend_pattern": {"class": "_pg$"}})
    assert not Rekey.objects.exists()


def test_a_plan_made_before_the_rules_changed_does_not_run(
    project, stored, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        rekey = rekey_request(project=project, rules=preset_rules("sqlalchemy"))
    project_rules_update(project=project, rules=preset_rules("django"))
    keys = set(TestCase.objects.values_list("key", flat=True))

    with django_capture_on_commit_callbacks(execute=True):
        rekey_start(rekey=rekey)
    rekey.refresh_from_db()
    assert rekey.status == RekeyStatus.FAILED
    assert "rules changed after this plan" in rekey.message
    assert set(TestCase.objects.values_list("key", flat=True)) == keys
    with pytest.raises(RekeyRejected, match="is failed, not planned"):
        rekey_start(rekey=rekey)
