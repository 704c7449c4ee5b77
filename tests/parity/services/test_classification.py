"""Skip-reason classification end to end: runs uploaded through the API, reasons classified at
run completion by the project's rules, re-classified by a rules change without a re-ingest
(the rules' YAML import, the admin's edit)."""

import io

import pytest
from django.core.management import CommandError, call_command

from parity.models import Gap, Reason, Result, SkipRule, Upload
from parity.pure.skip_rules import skip_rules_default, skip_rules_parse
from parity.selectors import triage_queue
from parity.selectors.classification import skip_categories_current, skip_rules_current
from parity.services.classification import reasons_classify, skip_rules_replace

DAY1, DAY2 = "2026-04-01", "2026-04-02"
A = "test/test_a.py::TestA"
HARDWARE = "This test only works on TPU."
DEVICES = "Multiple devices required"
ODD = "the moon is in the wrong phase"


@pytest.fixture
def skips(upload_run, xla):
    """cpu passes three tests; tpu skips them, each with its own message."""
    upload_run("cpu", {f"{A}::test_{n}": "passed" for n in (1, 2, 3)}, day=DAY1)
    upload_run("tpu", TPU, day=DAY1)
    return xla


TPU = {
    f"{A}::test_1": ("skipped", HARDWARE),
    f"{A}::test_2": ("skipped", DEVICES),
    f"{A}::test_3": ("skipped", ODD),
}


def categories(project) -> dict[str, tuple[str, str, str]]:
    return {
        r.text: (r.category, r.disposition, r.rules_version)
        for r in Reason.objects.filter(project=project)
    }


def test_a_new_project_has_the_default_rules_and_run_completion_classifies(skips):
    rules = skip_rules_current(project=skips)
    assert rules.version == skip_rules_default().version
    assert SkipRule.objects.filter(project=skips).count() == len(skip_rules_default().rules)
    version = rules.version
    assert categories(skips) == {
        HARDWARE: ("not on this hardware", "intended", version),
        DEVICES: ("needs more devices", "infra", version),
        ODD: ("", "unknown", version),  # no rule says: uncategorized, but classified
    }


def test_new_rules_reclassify_without_a_reingest(skips, client):
    results, uploads = Result.objects.count(), Upload.objects.count()
    reasons = set(Reason.objects.values_list("pk", flat=True))
    rules = skip_rules_parse(
        """
        categories: {astronomy: intended, devices: infra}
        rules:
          - {category: astronomy, message: 'moon'}
          - {category: devices, message: 'devices'}
        """
    )

    changed = skip_rules_replace(project=skips, rules=rules)

    # ODD and DEVICES changed; HARDWARE has no rule now: uncategorized.
    assert changed == 3
    assert categories(skips) == {
        HARDWARE: ("", "unknown", rules.version),
        DEVICES: ("devices", "infra", rules.version),
        ODD: ("astronomy", "intended", rules.version),
    }
    # Nothing was ingested again: the same results, uploads and reasons.
    assert (Result.objects.count(), Upload.objects.count()) == (results, uploads)
    assert set(Reason.objects.values_list("pk", flat=True)) == reasons
    # The pages read the new categories at once.
    html = client.get("/p/pytorch-xla/skip-reasons/").content.decode()
    assert 'data-category="astronomy"' in html and 'data-category="devices"' in html
    counts = {c.label: (c.tests, c.gaps) for c in skip_categories_current(project=skips)}
    assert counts == {"astronomy": (1, 1), "devices": (1, 1), "uncategorized": (1, 1)}


def test_a_pass_reads_only_reasons_of_another_version(skips, django_assert_max_num_queries):
    assert reasons_classify(project=skips) == 0  # classified at run completion already
    Reason.objects.filter(text=DEVICES).update(category="stale", rules_version="old")
    # Savepoint, lock, rules, stale reasons, one UPDATE, release: not one per reason.
    with django_assert_max_num_queries(6):
        assert reasons_classify(project=skips) == 1
    assert categories(skips)[DEVICES][0] == "needs more devices"


def test_reasons_new_since_the_rules_changed_are_classified_at_run_completion(skips, upload_run):
    rules = skip_rules_parse("rules: [{category: moon, disposition: infra, message: moon}]")
    skip_rules_replace(project=skips, rules=rules)
    upload_run("tpu", {f"{A}::test_4": ("skipped", "a new moon rises")}, day=DAY2)
    assert categories(skips)["a new moon rises"] == ("moon", "infra", rules.version)


def test_import_skip_rules_reads_yaml_and_refuses_bad_rules(skips, tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - {category: devices, disposition: infra, message: devices}\n")
    out = io.StringIO()
    call_command("import_skip_rules", "pytorch-xla", str(path), stdout=out)
    assert "1 skip rules of pytorch-xla" in out.getvalue()
    # DEVICES is "devices" now, HARDWARE uncategorized; ODD stays uncategorized.
    assert "2 reasons changed category" in out.getvalue()
    assert categories(skips)[DEVICES][0] == "devices"

    path.write_text("rules:\n  - {category: x, disposition: infra, message: '('}\n")
    with pytest.raises(CommandError, match="rule 1: message is not a regular expression"):
        call_command("import_skip_rules", "pytorch-xla", str(path))
    assert categories(skips)[DEVICES][0] == "devices"  # refused: nothing changed

    call_command("import_skip_rules", "pytorch-xla", "--default", stdout=io.StringIO())
    assert categories(skips)[DEVICES][0] == "needs more devices"


def test_a_rule_edited_in_the_admin_reclassifies(skips, admin_client):
    rule = SkipRule.objects.get(project=skips, category="needs more devices")
    url = f"/admin/parity/skiprule/{rule.pk}/change/"
    form = {
        "project": skips.pk,
        "position": rule.position,
        "category": "more chips",
        "disposition": "needs_work",
        "message": rule.message,
        "file": "",
        "klass": "",
        "name": "",
        "note": "",
    }
    refused = admin_client.post(url, {**form, "message": "(unclosed"})
    assert refused.status_code == 200 and b"is not a regular expression" in refused.content
    assert categories(skips)[DEVICES][0] == "needs more devices"

    assert admin_client.post(url, form).status_code == 302
    category, disposition, version = categories(skips)[DEVICES]
    assert (category, disposition) == ("more chips", "needs_work")
    assert version == skip_rules_current(project=skips).version

    admin_client.post(f"/admin/parity/skiprule/{rule.pk}/delete/", {"post": "yes"})
    assert categories(skips)[DEVICES][0] == ""  # no rule for it now


def test_the_queue_shows_each_groups_category(skips, upload_run, client):
    pallas = "test/test_pallas.py::PallasTest::test_flash"
    cpu = {f"{A}::test_{n}": "passed" for n in (1, 2, 3)}
    upload_run("cpu", {**cpu, pallas: "passed"}, day=DAY2)  # a file tpu's next run lacks
    upload_run("tpu", TPU, day=DAY2)  # before it, the file's test is pending there, no gap

    queue = triage_queue(project=skips)
    by_reason = {g.reason: (g.category, g.disposition) for g in queue.by_reason.groups}
    assert by_reason == {
        HARDWARE: ("not on this hardware", "intended"),
        DEVICES: ("needs more devices", "infra"),
        ODD: ("", "unknown"),
    }
    # Tests never run have no message: the default set's file rule says why.
    by_file = {g.file: g.category for g in queue.by_file.groups}
    assert by_file == {"test/test_pallas.py": "not on this hardware", "test/test_a.py": ""}
    html = client.get("/p/pytorch-xla/queue/").content.decode()
    assert html.count('<div class="category" data-category="not on this hardware">') == 2


def test_rules_that_do_not_compile_never_stop_a_recompute(skips, upload_run):
    # Written past the service's and the admin's checks (a shell, a raw UPDATE).
    SkipRule.objects.filter(project=skips).update(message="(unclosed")
    upload_run("cpu", {f"{A}::test_{n}": "passed" for n in (1, 2, 3, 9)}, day=DAY2)
    upload_run("tpu", TPU, day=DAY2)
    # The runs are current all the same: the recompute ran, the new test is a gap on tpu.
    assert Gap.objects.filter(project=skips, test__name="test_9", is_open=True).exists()


def test_the_admin_imports_yaml_rules(skips, admin_client):
    assert b"Import YAML" in admin_client.get("/admin/parity/skiprule/").content
    url = "/admin/parity/skiprule/import/"
    bad = admin_client.post(url, {"project": skips.pk, "rules": "rules: [{category: x}]"})
    assert bad.status_code == 200 and b"rule 1: disposition must be one of" in bad.content
    assert categories(skips)[DEVICES][0] == "needs more devices"

    yaml = "rules:\n  - {category: more chips, disposition: infra, message: devices}\n"
    response = admin_client.post(url, {"project": skips.pk, "rules": yaml}, follow=True)
    assert b"1 skip rules of pytorch-xla" in response.content
    assert categories(skips)[DEVICES][0] == "more chips"

    admin_client.post(url, {"project": skips.pk, "default": "on"})
    assert categories(skips)[DEVICES][0] == "needs more devices"
