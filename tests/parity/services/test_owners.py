"""Importing code owners (``owners_import``, ``import_owners``) and the roll-up it writes: every
test file's owners, matched in SQL, equal to the pure matcher's (``parity.pure.codeowners``),
paths cleaned the same; a file a new run brings gets its owners at that run's recompute."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from parity.models import FileOwners, OwnerRule, OwnersSource, TestCase
from parity.pure.codeowners import codeowners_parse, owners_of
from parity.services.owners import OwnersRejected, owners_import
from tests.parity.dashboard_scenario import A, B, C, passing, upload_history

FIXTURE = Path(__file__).parents[1] / "fixtures" / "owners" / "CODEOWNERS"

SCENARIO_OWNERS = (FIXTURE.parent / "scenario.CODEOWNERS").read_text()


def roll_up(project) -> dict[str, list[str]]:
    return dict(FileOwners.objects.filter(project=project).values_list("file", "owners"))


@pytest.fixture
def odd_paths(xla) -> list[str]:
    """Tests whose files are spelled as other tools write paths (ingest would have cleaned
    most of them; rows written some other way, or before a rule, need not be)."""
    files = [
        "test/functorch/test_ops.py",
        "./test/functorch/test_vmap.py",
        "/test/onnx/internal/test_registry.py",
        "test\\distributed\\a\\test_c10d_gloo.py",
        "test//nested/test_sparse_csr.py",
        "docs/source/conf.py",
        "docs/conf.py",
        "",
    ]
    for n, file in enumerate(files):
        TestCase.objects.create(project=xla, key=f"{file}::T::t{n}", file=file, name=f"t{n}")
    return files


def test_sql_gives_each_file_the_owners_the_pure_matcher_gives(xla, odd_paths):
    text = FIXTURE.read_text()

    imported = owners_import(project=xla, text=text, name="CODEOWNERS")

    rules = codeowners_parse(text).rules
    expected = {}
    for file in odd_paths:
        rule = owners_of(rules, file)
        expected[file] = list(rule.owners) if rule else []
    assert roll_up(xla) == expected
    assert expected["./test/functorch/test_vmap.py"] == ["@zou3519", "@chillee"]
    assert expected["/test/onnx/internal/test_registry.py"] == []  # un-owned
    assert expected["test\\distributed\\a\\test_c10d_gloo.py"] == ["@d4l3k", "@fduwjj"]
    assert (imported.rules, imported.files, imported.owned) == (11, 8, 6)
    assert [s.line for s in imported.skipped] == [18, 19]


def test_a_root_places_parity_paths_inside_the_repository(xla):
    TestCase.objects.create(project=xla, key="test_ops.py::T::t", file="test_ops.py", name="t")

    owners_import(project=xla, text=FIXTURE.read_text(), name="CODEOWNERS", root="/test/functorch/")

    assert roll_up(xla) == {"test_ops.py": ["@zou3519", "@chillee", "@kshitij12345"]}
    assert OwnersSource.objects.get(project=xla).root == "test/functorch"


def test_files_a_new_run_brings_get_owners_at_its_recompute(xla, upload_run):
    owners_import(project=xla, text=SCENARIO_OWNERS, name="CODEOWNERS")
    assert roll_up(xla) == {}  # no test yet

    upload_history(upload_run)

    assert roll_up(xla) == {A: ["@ops-team"], B: ["@bee", "@ops-team"], C: []}
    upload_run("cpu", passing("test/ops/test_new.py", 1), day="2099-01-01")
    assert roll_up(xla)["test/ops/test_new.py"] == ["@ops-team"]


def test_a_new_import_replaces_the_rules_and_every_files_owners(xla, upload_run):
    upload_history(upload_run)
    owners_import(project=xla, text=SCENARIO_OWNERS, name="CODEOWNERS")

    owners_import(project=xla, text='/test/: ["@someone"]\n', name="owners.yaml")

    assert roll_up(xla) == {A: ["@someone"], B: ["@someone"], C: ["@someone"]}
    assert list(OwnerRule.objects.filter(project=xla).values_list("pattern", flat=True)) == [
        "/test/"
    ]


def test_a_file_without_a_rule_changes_nothing(xla, upload_run):
    upload_history(upload_run)
    owners_import(project=xla, text=SCENARIO_OWNERS, name="CODEOWNERS")

    with pytest.raises(OwnersRejected, match="line 1: Negation"):
        owners_import(project=xla, text="!/test/ @x\n# only a comment\n", name="CODEOWNERS")

    assert roll_up(xla)[B] == ["@bee", "@ops-team"]
    assert OwnerRule.objects.filter(project=xla).count() == 4


def test_the_command_imports_and_says_what_it_skipped(xla, upload_run, tmp_path, capsys):
    upload_history(upload_run)
    path = tmp_path / "CODEOWNERS"
    path.write_text(SCENARIO_OWNERS + "[abc].py @nobody\n")

    call_command("import_owners", xla.slug, str(path))

    out, err = capsys.readouterr()
    assert "4 rule(s) imported into pytorch-xla: 2 of 3 test file(s) have owners." in out
    assert "line 8 skipped: Character classes" in err
    assert roll_up(xla)[A] == ["@ops-team"]
    path.write_text("# nothing\n")
    with pytest.raises(CommandError, match="no rule parity can read.*Nothing was imported"):
        call_command("import_owners", xla.slug, str(path))
    assert roll_up(xla)[A] == ["@ops-team"]


def test_the_command_refuses_an_unknown_project(db, tmp_path):
    (tmp_path / "CODEOWNERS").write_text("* @a\n")

    with pytest.raises(CommandError, match="Unknown project 'nope'"):
        call_command("import_owners", "nope", str(tmp_path / "CODEOWNERS"))
