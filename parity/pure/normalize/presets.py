"""Identity rules parity ships for suites whose runners name one test once per backend.

A project picks one (the admin's project page, its identity page, or ``project_rules_preset``)
and its rules become a copy of the preset's, to edit from there: a later parity that widens a
preset changes no project's IDs behind its back. Each preset carries example names from two
backends that its rules join, which the identity page offers to try and the tests check.
"""

import copy
from dataclasses import dataclass
from typing import Any

from parity.pure.normalize.rules import DEFAULT_RULES, Rules, validate_rules

# SQLAlchemy's dialect names (sqlalchemy.dialects) and Django's database labels.
_SQLALCHEMY_DIALECTS = "postgresql|sqlite|mysql|mariadb|oracle|mssql"
_DJANGO_DATABASES = (
    "postgresql|postgres|pgsql|postgis|sqlite3|sqlite|spatialite|mysql|mariadb|oracle"
)
# Browser names as WebdriverIO's reporter writes them (lower case, no spaces).
_BROWSERS = "chrome|chromium|firefox|msedge|microsoftedge|edge|safari|webkit|internetexplorer|opera"


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    about: str  # what the rules do, one or two sentences for the page
    rules: dict[str, Any]
    # (one backend's names, another's): lines as the preview reads them, each joined pairwise.
    example: tuple[tuple[str, ...], tuple[str, ...]]


PRESETS: tuple[Preset, ...] = (
    Preset(
        name="pytorch",
        title="PyTorch device-type tests",
        about="instantiate_device_type_tests names a class and its tests per device "
        "(TestFooCUDA.test_x_cuda_float32): the device is dropped when class and name both "
        "carry it. These are parity's defaults.",
        rules={
            "device_tokens": list(DEFAULT_RULES.device_tokens),
            "class_suffixes": dict(DEFAULT_RULES.class_suffixes),
        },
        example=(
            (
                "test/test_ops.py::TestCommonCUDA::test_out_add_cuda_float32",
                "test.test_view_ops.TestViewOpsCUDA::test_unsqueeze_cuda",
            ),
            (
                "test/test_ops.py::TestCommonXLA::test_out_add_xla_float32",
                "test.test_view_ops.TestViewOpsXLA::test_unsqueeze_xla",
            ),
        ),
    ),
    Preset(
        name="sqlalchemy",
        title="SQLAlchemy per-database classes",
        about="SQLAlchemy's pytest plugin runs a __backend__ class once per database, as "
        "ComponentReflectionTest_postgresql+psycopg2_15_20: the _<dialect>+<driver>_<version> "
        "suffix is dropped from the classname. PyTorch's device rule is off.",
        rules={
            "device_tokens": [],
            "class_suffixes": {},
            "backend_pattern": {"class": rf"_(?P<backend>(?:{_SQLALCHEMY_DIALECTS})\+\w+)$"},
        },
        example=(
            (
                "test.dialect.test_suite.ComponentReflectionTest_postgresql+psycopg2_15_20"
                "::test_get_multi_columns",
                "test.orm.test_query.QueryTest::test_get",
            ),
            (
                "test.dialect.test_suite.ComponentReflectionTest_sqlite+pysqlite_3_45"
                "::test_get_multi_columns",
                "test.orm.test_query.QueryTest::test_get",
            ),
        ),
    ),
    Preset(
        name="django",
        title="Django, one job per database",
        about="A matrix job labels each database's report by prefixing its classnames "
        "(pytest --junit-prefix=postgresql, or a tox env such as py312-postgresql): the "
        "label is dropped before the classname is read as module.Class. PyTorch's device rule "
        "is off.",
        rules={
            "device_tokens": [],
            "class_suffixes": {},
            "backend_pattern": {
                "class": rf"^(?P<backend>(?:\w+-)*(?:{_DJANGO_DATABASES})(?:-\w+)*)\."
            },
        },
        example=(
            (
                "postgresql.tests.test_models.BookTest::test_str",
                "py312-postgresql.tests.test_views.IndexTest::test_get",
            ),
            (
                "sqlite3.tests.test_models.BookTest::test_str",
                "py312-sqlite3.tests.test_views.IndexTest::test_get",
            ),
        ),
    ),
    Preset(
        name="webdriverio",
        title="WebdriverIO, one run per browser",
        about="WebdriverIO's JUnit reporter starts every classname with the browser's "
        "capabilities, name.version.platform (CucumberJUnitReport-chrome.123_0_6312_59.windows."
        "<feature> under Cucumber): they are dropped, leaving the suite or feature as the class.",
        rules={
            "device_tokens": [],
            "class_suffixes": {},
            "backend_pattern": {
                "class": rf"^(?:CucumberJUnitReport-)?(?P<backend>(?:{_BROWSERS})"
                r"(?:\.[a-z0-9_]+){0,2})(?:-[^.]+)?\."
            },
        },
        example=(
            (
                "CucumberJUnitReport-chrome.123_0_6312_59.windows.CES to WD::User deletes source",
                "chrome.a_test_suite::a_test_case",
            ),
            (
                "CucumberJUnitReport-firefox.124_0.linux.CES to WD::User deletes source",
                "firefox.a_test_suite::a_test_case",
            ),
        ),
    ),
    Preset(
        name="plain",
        title="None: names carry no backend",
        about="Every backend names a test the same way: no device rule, no pattern. Only the "
        "file, class and name are read.",
        rules={"device_tokens": [], "class_suffixes": {}},
        example=(
            ("tests/test_api.py::TestClient::test_get",),
            ("tests/test_api.py::TestClient::test_get",),
        ),
    ),
)

PRESET_NAMES = tuple(preset.name for preset in PRESETS)


def preset_named(name: str) -> Preset:
    """The shipped preset ``name``; ``KeyError`` saying which exist when there is none."""
    for preset in PRESETS:
        if preset.name == name:
            return preset
    raise KeyError(f"no preset {name!r} (presets: {', '.join(PRESET_NAMES)})")


def preset_rules(name: str) -> dict[str, Any]:
    """A fresh copy of the preset's rules, for a project to keep and edit."""
    return copy.deepcopy(preset_named(name).rules)


def preset_matching(rules: Rules) -> str | None:
    """The preset whose rules ``rules`` are, or None once they are edited (or none was picked)."""
    return next((p.name for p in PRESETS if validate_rules(p.rules) == rules), None)
