"""load_demo: the demo project's backends come with the commands their runners use, and its
first day already holds a tracked gap: a real skip message citing its issue."""

import io

from django.core.management import call_command

from parity.management.commands.load_demo import DEMO_REPRODUCE, DEMO_SLUG
from parity.models import Gap, Project, TestCase, UploadToken
from parity.models.projects import token_digest
from parity.pure.reproduce import reproduce_command, template_errors


def test_each_demo_backend_says_how_to_run_one_of_its_tests(
    db, django_capture_on_commit_callbacks, eager_errors_propagate
):
    with django_capture_on_commit_callbacks(execute=True):  # the uploads' ingest tasks
        call_command("load_demo", "--days", "1", stdout=io.StringIO())
    project = Project.objects.get(slug=DEMO_SLUG)

    commands = dict(project.backends.values_list("name", "reproduce_command"))
    assert commands == DEMO_REPRODUCE
    assert all(template_errors(command) == [] for command in commands.values())
    # A real test of PyTorch/XLA's, as TPU's runner would start it.
    test = TestCase.objects.get(
        project=project,
        file="test/ds/test_dynamic_shape_models.py",
        name="test_backward_pass_with_dynamic_input",
    )
    command = reproduce_command(
        commands["tpu"], file=test.file, class_name=test.class_name, name=test.name
    )
    assert command == (
        "PJRT_DEVICE=TPU python3 test/ds/test_dynamic_shape_models.py "
        "TestDynamicShapeModels.test_backward_pass_with_dynamic_input"
    )


def test_the_demo_has_gaps_tracked_by_the_issue_their_skip_cites(
    db, django_capture_on_commit_callbacks, eager_errors_propagate
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", "--days", "1", stdout=io.StringIO())
    project = Project.objects.get(slug=DEMO_SLUG)

    tracked = Gap.objects.filter(project=project, is_open=True, tracked=True, reason__isnull=False)
    cited = {
        (gap.backend.name, gap.test.name, gap.reason.text, issue.url)
        for gap in tracked.select_related("backend", "test", "reason")
        for issue in gap.reason.issues.all()
    }
    assert (
        "tpu",
        "test_assume_pure_complex_module",
        "Bug: https://github.com/pytorch/xla/issues/8974",
        "https://github.com/pytorch/xla/issues/8974",
    ) in cited


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_load_shows_one_progress_line(
    db, django_capture_on_commit_callbacks, eager_errors_propagate
):
    terminal, log = _Terminal(), io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", "--days", "1", stdout=terminal)
        call_command("load_demo", "--days", "1", "--reset", stdout=log)

    shown = terminal.getvalue()
    # Every update rewrites the same line, which is blanked before the summary.
    progress = shown[: shown.index("Uploaded ")]
    assert progress.count("\n") == 1  # the exemptions' line only
    assert progress.count("\r") > 4 and "Uploading the runs of " in progress
    assert progress.endswith("\r")
    assert "Uploading" not in log.getvalue()  # a log keeps the summary alone


def test_it_prints_the_served_address_and_the_ci_clients_variables(
    db, settings, django_capture_on_commit_callbacks, eager_errors_propagate
):
    # `make demo PORT=8765` sets SITE_URL from HOST and PORT.
    settings.SITE_URL = "http://127.0.0.1:8765"
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", "--days", "1", stdout=out)

    printed = out.getvalue()
    assert "Dashboard: http://127.0.0.1:8765/  Admin: http://127.0.0.1:8765/admin/" in printed
    assert ":8000" not in printed
    export = next(line for line in printed.splitlines() if line.startswith("export "))
    variables = dict(word.split("=", 1) for word in export.split()[1:])
    assert variables.keys() == {"PARITY_URL", "PARITY_PROJECT", "PARITY_TOKEN"}
    assert variables["PARITY_URL"] == "http://127.0.0.1:8765"
    assert variables["PARITY_PROJECT"] == DEMO_SLUG
    token = UploadToken.objects.get(digest=token_digest(variables["PARITY_TOKEN"]))
    assert (token.project.slug, token.label) == (DEMO_SLUG, "demo")
