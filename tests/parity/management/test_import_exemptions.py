"""``import_exemptions``: parity's own format and PyTorch's disabled-test dicts, all or none."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from parity.models import Triage

FILES = Path(__file__).resolve().parents[1] / "fixtures" / "exemptions"


def imported(project) -> list[tuple]:
    triages = Triage.objects.filter(project=project).prefetch_related("backends").order_by("match")
    return [
        (t.match, t.kind, sorted(b.name for b in t.backends.all()), t.note, t.expires_on)
        for t in triages.select_related("issue")
    ]


def test_a_list_is_imported_once_however_often_it_is_run(project, capsys):
    call_command("import_exemptions", project.slug, FILES / "exemptions.yaml")
    call_command("import_exemptions", project.slug, FILES / "exemptions.yaml")

    rows = imported(project)
    assert [(m, k, b) for m, k, b, _n, _e in rows] == [
        ("test/spmd/**", "intended", ["neuron"]),
        ("test/test_ops.py::TestOps::test_*_complex64", "tracked", ["tpu"]),
        ("test/test_view_ops.py::TestViewOps::test_view_float32", "quarantine", []),
    ]
    assert str(rows[1][4]) == "2099-03-01"
    assert "0 exemption(s) imported into pytorch-xla; 3 already there." in capsys.readouterr().out


def test_a_bad_entry_imports_nothing_and_says_which(project):
    with pytest.raises(CommandError, match="Entry 2: A tracked triage needs an 'issue_url'"):
        call_command("import_exemptions", project.slug, FILES / "broken.yaml")

    assert not Triage.objects.exists()


def test_pytorch_disabled_dicts_become_one_entry_per_test_and_reason(project, capsys):
    project.backends.filter(name="gpu").update(aliases=["cuda"])

    call_command(
        "import_exemptions", project.slug, FILES / "disabled_torch_tests.json", "--pytorch-disabled"
    )

    assert [(m, k, b, n) for m, k, b, n, _e in imported(project)] == [
        (
            "**::TestTorchDeviceType::test_clamp_propagates_nans",
            "intended",
            ["cpu"],
            "Disabled for this backend",
        ),
        (
            "**::TestViewOps::test_view_float32",
            "intended",
            ["cpu", "gpu", "tpu"],
            "XLA tensors do not have storage",
        ),
    ]
    assert "not imported: TPU TestViewOpsXLA.test_.*_complex: a regex" in capsys.readouterr().err


def test_an_unknown_project_or_unreadable_file_is_named(project, tmp_path):
    with pytest.raises(CommandError, match="Unknown project 'nope'"):
        call_command("import_exemptions", "nope", FILES / "exemptions.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- match: [unclosed\n")
    with pytest.raises(CommandError, match="Neither YAML nor JSON"):
        call_command("import_exemptions", project.slug, bad)
