"""load_demo: the demo project's backends come with the commands their runners use."""

import io

from django.core.management import call_command

from parity.management.commands.load_demo import DEMO_REPRODUCE, DEMO_SLUG
from parity.models import Project, TestCase
from parity.reproduce import reproduce_command, template_errors


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
