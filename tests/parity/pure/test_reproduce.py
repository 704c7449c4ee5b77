"""parity.pure.reproduce: a backend's command template filled in with one test's names."""

import pytest

from parity.pure.reproduce import reproduce_command, template_errors

TEST = {"file": "test/test_ops.py", "class_name": "TestOps", "name": "test_add[a::b]"}


@pytest.mark.parametrize(
    ("template", "command"),
    [
        (
            "PJRT_DEVICE=TPU python3 {file} {class}.{name}",
            "PJRT_DEVICE=TPU python3 test/test_ops.py TestOps.test_add[a::b]",
        ),
        ("pytest '{nodeid}'", "pytest 'test/test_ops.py::TestOps::test_add[a::b]'"),
        # Shell syntax in braces is left alone; so is a placeholder written twice, twice.
        ("cd ${HOME}/xla && {name} {name}", "cd ${HOME}/xla && test_add[a::b] test_add[a::b]"),
        ("  ", ""),
    ],
)
def test_placeholders_take_the_tests_names(template, command):
    assert reproduce_command(template, **TEST) == command


@pytest.mark.parametrize(
    ("template", "command"),
    [
        ("pytest {nodeid}", "pytest t.py::test_x"),
        ("python3 {file} {class}.{name}", "python3 t.py test_x"),
        ("pytest '{file}::{class}::{name}'", "pytest 't.py::test_x'"),
    ],
)
def test_a_test_without_a_class_leaves_no_separator_behind(template, command):
    assert reproduce_command(template, file="t.py", class_name="", name="test_x") == command


def test_unknown_placeholders_are_named_once_each():
    assert template_errors("python3 {file} {klass}.{name} {klass} ${HOME} {nodeid}") == [
        "Unknown placeholder {klass}: use {file}, {class}, {name}, {nodeid}."
    ]
    assert template_errors("PJRT_DEVICE=TPU python3 {file} {class}.{name}") == []


def test_a_test_run_in_several_suites_is_named_as_its_runner_names_it():
    command = reproduce_command(
        "pytest '{nodeid}' && run {name}",
        file="t.py",
        class_name="T",
        name="test_x[a] [suite: FiltersTest / chrome]",
    )

    assert command == "pytest 't.py::T::test_x[a]' && run test_x[a]"
