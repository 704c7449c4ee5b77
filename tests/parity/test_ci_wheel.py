"""``parity.ci_wheel`` builds the wheel of the CI files: read here as pip and importlib read one
(the zip's RECORD checked file by file; the metadata and entry points through
``importlib.metadata``)."""

import base64
import csv
import hashlib
import importlib.metadata
import io
import re
import zipfile

import pytest

from parity.ci_files import CLIENTS_DIR
from parity.ci_wheel import wheel_build, wheel_filename

VERSION = "1.4.0"
DIST_INFO = f"parity_dashboard_ci-{VERSION}.dist-info"
MODULES = {path.name: path.read_bytes() for path in sorted(CLIENTS_DIR.glob("parity_*.py"))}
# The wheel filename convention (PEP 427): name-version(-build)?-python-abi-platform.whl
WHEEL_NAME = re.compile(r"(?P<name>[^\s-]+?)-(?P<version>[^\s-]+?)(-\d[^-]*)?-py3-none-any\.whl")


@pytest.fixture(scope="module")
def wheel() -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(wheel_build(modules=MODULES, version=VERSION)))


def test_the_modules_are_the_files_as_kept_at_the_top_level(wheel):
    modules = {name: wheel.read(name) for name in wheel.namelist() if "/" not in name}

    assert modules == MODULES
    assert set(MODULES) == {
        "parity_ci.py",
        "parity_mcp.py",
        "parity_pytest.py",
        "parity_unittest.py",
    }
    assert all(info.external_attr >> 16 == 0o100644 for info in wheel.infolist())


def test_record_lists_every_file_with_its_sha256_and_size(wheel):
    rows = list(csv.reader(io.StringIO(wheel.read(f"{DIST_INFO}/RECORD").decode())))

    assert sorted(row[0] for row in rows) == sorted(wheel.namelist())
    for name, digest, size in rows:
        if name == f"{DIST_INFO}/RECORD":
            assert (digest, size) == ("", "")
            continue
        data = wheel.read(name)
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        assert (digest, int(size)) == (f"sha256={expected.decode()}", len(data)), name


def test_the_wheel_file_says_pure_python_for_any_python_3(wheel):
    fields = dict(
        line.split(": ", 1) for line in wheel.read(f"{DIST_INFO}/WHEEL").decode().splitlines()
    )

    assert fields["Wheel-Version"] == "1.0"
    assert fields["Root-Is-Purelib"] == "true"
    assert fields["Tag"] == "py3-none-any"


def test_metadata_and_entry_points_read_as_installed(wheel, tmp_path):
    wheel.extractall(tmp_path)  # the layout of site-packages once pip has installed it

    [dist] = importlib.metadata.distributions(path=[str(tmp_path)])

    assert (dist.name, dist.version) == ("parity-dashboard-ci", VERSION)
    assert dist.metadata["Requires-Python"] == ">=3.8"
    # Nothing to install beside it (pytest is the user's own), but for `parity-dashboard-ci[mcp]`.
    assert dist.requires == ['mcp~=2.3; python_version >= "3.10" and extra == "mcp"']
    assert dist.metadata.get_all("Provides-Extra") == ["mcp"]
    entry_points = {(ep.group, ep.name): ep.value for ep in dist.entry_points}
    assert entry_points == {
        ("console_scripts", "parity-ci"): "parity_ci:main",
        # named as the module, so `-p parity_pytest` and the entry point are one plugin
        ("pytest11", "parity_pytest"): "parity_pytest",
    }


def test_the_filename_is_one_pip_accepts_and_names_the_metadata_s_version(wheel):
    match = WHEEL_NAME.fullmatch(wheel_filename(VERSION))

    assert match is not None
    assert (match["name"], match["version"]) == ("parity_dashboard_ci", VERSION)
    assert f"{DIST_INFO}/METADATA" in wheel.namelist()


def test_the_same_files_build_the_same_bytes():
    # Every server process builds its own, and they serve one ETag.
    assert wheel_build(modules=MODULES, version=VERSION) == wheel_build(
        modules=dict(reversed(MODULES.items())), version=VERSION
    )


@pytest.mark.parametrize("version", ["1.0-dev", "", "v1", "1.0 beta"])
def test_a_version_that_cannot_name_a_wheel_is_refused(version):
    with pytest.raises(ValueError, match="not a wheel version"):
        wheel_filename(version)
