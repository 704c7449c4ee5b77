"""manage.py update_project: a new default branch or reference rebuilds the project's parity."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from parity.models import Gap, Project


def run(*args) -> str:
    out = StringIO()
    call_command("update_project", *args, stdout=out)
    return out.getvalue()


def open_gaps() -> list[tuple[str, str]]:
    return sorted(Gap.objects.filter(closed_at__isnull=True).values_list("backend__name", "state"))


def test_a_new_default_branch_rebuilds_parity_from_its_runs(runs_on_master):
    assert open_gaps() == []

    said = run("pytorch-xla", "--default-branch", "master")

    assert said == "pytorch-xla compares branch master against cpu: rebuilt parity.\n"
    assert open_gaps() == [("tpu", "failed")]


def test_a_new_reference_rebuilds_parity_against_it(runs_on_master):
    run("pytorch-xla", "--default-branch", "master")

    said = run("pytorch-xla", "--reference", "TPU")  # by name or alias, in any case

    assert said == "pytorch-xla compares branch master against tpu: rebuilt parity.\n"
    assert open_gaps() == []  # cpu passes every test tpu passes
    assert run("pytorch-xla", "--reference", "tpu").endswith(": nothing changed.\n")


def test_an_unknown_reference_is_refused_with_the_backends_named(runs_on_master):
    with pytest.raises(CommandError, match="No backend 'xpu' in pytorch-xla: cpu, gpu, neuron"):
        run("pytorch-xla", "--reference", "xpu")
    with pytest.raises(CommandError, match="default branch cannot be blank"):
        run("pytorch-xla", "--default-branch", " ")
    assert Project.objects.get().default_branch == "main"


def test_the_score_definition_and_variant_keys_are_set_here(runs_on_master):
    said = run(
        "pytorch-xla",
        "--score-definition",
        "agree_any",
        "--score-counts-intended",
        "--variant-keys",
        "arch, os",
    )

    project = Project.objects.get()
    assert (project.score_definition, project.score_counts_intended) == ("agree_any", True)
    assert project.variant_keys == ["arch", "os"]
    assert said.endswith(
        "pytorch-xla scores the agreement (any difference); intended gaps counted; variant "
        "keys: arch, os.\n"
    )
    run("pytorch-xla", "--no-score-counts-intended", "--variant-keys", "")
    project.refresh_from_db()
    assert (project.score_definition, project.score_counts_intended) == ("agree_any", False)
    assert project.variant_keys == []
    with pytest.raises(CommandError, match="A list of attribute names"):
        run("pytorch-xla", "--variant-keys", "arch,not a key")
    with pytest.raises(CommandError, match="invalid choice: 'agree'"):
        run("pytorch-xla", "--score-definition", "agree")


@pytest.mark.django_db
def test_create_project_takes_the_score_definition_and_variant_keys():
    out = StringIO()
    call_command(
        "create_project",
        "rocm-parity",
        "--backends",
        "cuda,rocm",
        "--reference",
        "cuda",
        "--score-definition",
        "agree_reference_passed",
        "--score-counts-not-applicable",
        "--variant-keys",
        "arch,rocm",
        stdout=out,
    )

    project = Project.objects.get(slug="rocm-parity")
    assert project.score_definition == "agree_reference_passed"
    assert (project.score_counts_intended, project.score_counts_not_applicable) == (False, True)
    assert project.variant_keys == ["arch", "rocm"]
    assert "variant keys: arch, rocm" in out.getvalue()
