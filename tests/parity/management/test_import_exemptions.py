"""``import_exemptions``: parity's own format and PyTorch's disabled-test dicts, all or none."""

import logging
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


LISTS = Path(__file__).resolve().parents[2] / "fixtures" / "lists"


def test_a_list_format_is_imported_with_a_report_and_a_dry_run_first(project, capsys):
    args = ["import_exemptions", project.slug, LISTS / "not_applicable.txt", "--format", "na-list"]

    call_command(*args, "--backend", "tpu", "--dry-run")
    assert not Triage.objects.exists()
    dry = capsys.readouterr()
    call_command(*args, "--backend", "tpu")
    real = capsys.readouterr()
    call_command(*args, "--backend", "tpu")
    again = capsys.readouterr()

    assert "import:na-list:" in dry.out and "3 would be created" in dry.out
    assert "3 created, 0 updated, 0 unchanged, 0 not imported, 0 no longer listed" in real.out
    assert "0 created, 0 updated, 3 unchanged" in again.out
    # The project has stored no test yet: every entry is imported, and said to match nothing.
    assert real.err.count("matches no stored test") == 3
    assert (
        Triage.objects.filter(kind="not_applicable", source__startswith="import:na-list:").count()
        == 3
    )


def test_set_test_configs_imports_under_the_files_source(project):
    call_command(
        "import_exemptions", project.slug, LISTS / "set_test_configs.py.txt",
        "--format", "set-test-configs", "--backend", "neuron",
    )  # fmt: skip

    triage = Triage.objects.get(match="**::TestCUDAGraphs::*")
    # Relative to the repository the file is in, never this machine's absolute path.
    assert triage.source == "set_test_configs:tests/fixtures/lists/set_test_configs.py.txt"
    assert [b.name for b in triage.backends.all()] == ["neuron"]


def test_a_list_s_source_is_its_path_in_its_repository(project, tmp_path, capsys):
    repo = tmp_path / "pytorch"
    (repo / ".git").mkdir(parents=True)
    conf = repo / "test" / "xpu" / "conf.py"
    conf.parent.mkdir(parents=True)
    conf.write_text((LISTS / "set_test_configs.py.txt").read_text())
    loose = tmp_path / "elsewhere" / "conf.py"
    loose.parent.mkdir()
    loose.write_text(conf.read_text())
    args = ["--format", "set-test-configs", "--backend", "neuron"]

    call_command("import_exemptions", project.slug, conf, *args)
    call_command("import_exemptions", project.slug, loose, *args, "--repo-root", tmp_path)
    call_command("import_exemptions", project.slug, loose, *args, "--dry-run")

    sources = set(Triage.objects.values_list("source", flat=True))
    assert sources == {"set_test_configs:test/xpu/conf.py", "set_test_configs:elsewhere/conf.py"}
    assert "set_test_configs:conf.py into" in capsys.readouterr().out  # no repository: its name
    with pytest.raises(CommandError, match="is not inside the repository"):
        call_command("import_exemptions", project.slug, loose, *args, "--repo-root", repo)


def test_a_file_that_is_not_its_format_imports_nothing_and_says_why(project):
    with pytest.raises(CommandError, match="deselect.txt: Not Python: line 1"):
        call_command(
            "import_exemptions", project.slug, LISTS / "deselect.txt", "--format", "skip-dict"
        )
    known = "Unknown backend 'ipu' \\(known: cpu, gpu, neuron, tpu\\)"
    with pytest.raises(CommandError, match=known):
        call_command(
            "import_exemptions", project.slug, LISTS / "deselect.txt", "--format", "deselect",
            "--backend", "ipu",
        )  # fmt: skip
    assert not Triage.objects.exists()


def test_export_writes_what_was_imported(project, tmp_path, capsys):
    sample = LISTS / "skip_list_arc.py.txt"
    call_command(
        "import_exemptions", project.slug, sample, "--format", "skip-dict", "--backend", "tpu",
        "--condition", "arch == arc", "--source", "import:skip-dict:arc",
    )  # fmt: skip
    capsys.readouterr()

    call_command(
        "export_exemptions", project.slug, "--format", "skip-dict", "--backend", "tpu",
        "--source", "import:skip-dict:arc",
    )  # fmt: skip
    assert capsys.readouterr().out == sample.read_text()
    out = tmp_path / "deselect.txt"
    call_command("export_exemptions", project.slug, "--format", "deselect", "--output", str(out))
    # A -k term is no node ID: named, and the whole file is written.
    assert out.read_text() == "test_sparse_xpu.py  # no sparse kernels on ARC\n"
    assert capsys.readouterr().err.count("not written:") == 4


def test_a_sheet_row_not_read_is_counted_as_not_imported(project, tmp_path, capsys):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(
        "test_file,test_class,test_name,skip_reason,issue,assignee\n"
        "test/test_a.py,TestA,test_1,no kernel,,ann\n"
        "test/test_a.py,TestA,test_2,,,bea\n"
    )

    call_command("import_exemptions", project.slug, sheet, "--format", "amd-csv")

    out, err = capsys.readouterr()
    assert "1 created, 0 updated, 0 unchanged, 1 not imported" in out
    assert "not read: line 3: no skip_reason or issue: it declares nothing" in err


def test_the_command_says_its_summary_and_report_and_logs_nothing(project, caplog, capsys):
    args = ["import_exemptions", project.slug, LISTS / "not_applicable.txt", "--format", "na-list"]

    with caplog.at_level(logging.INFO):
        call_command(*args, "--backend", "tpu")
    quiet = [r.getMessage() for r in caplog.records]
    caplog.clear()
    with caplog.at_level(logging.INFO):
        call_command(*args, "--backend", "gpu", "--source", "import:na-list:gpu", "-v", "2")

    assert quiet == []
    assert any("3 created" in r.getMessage() for r in caplog.records)  # -v 2: the service's
    out, err = capsys.readouterr()
    assert out.count("\n") == 2 and out.count(" created, ") == 2  # one summary line each
    assert all(line.startswith("created: line ") for line in err.splitlines())
