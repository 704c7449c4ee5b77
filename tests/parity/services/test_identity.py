"""A project picks a shipped identity preset through its service: a copy to edit from there."""

import pytest

from parity.pure.normalize.presets import preset_named
from parity.services.identity import project_rules_preset


def test_a_preset_becomes_the_projects_own_rules(project):
    project_rules_preset(project=project, preset="sqlalchemy")

    project.refresh_from_db()
    assert project.normalization_rules == preset_named("sqlalchemy").rules
    project.normalization_rules["backend_pattern"]["class"] = r"_(?P<backend>oracle\+\w+)$"
    project.save()
    assert "postgresql" in preset_named("sqlalchemy").rules["backend_pattern"]["class"]


def test_an_unknown_preset_changes_nothing(project):
    with pytest.raises(KeyError, match="presets: pytorch, sqlalchemy, django"):
        project_rules_preset(project=project, preset="rspec")
    project.refresh_from_db()
    assert project.normalization_rules == {}
