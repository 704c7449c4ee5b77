"""The CI files of ``parity/clients/`` as a wheel, so CI can ``pip install`` them: the modules
as they are, a ``parity-ci`` command (``parity_ci:main``) and a ``pytest11`` entry point that
loads the pytest plugin without ``-p``.

Built with the standard library (a wheel is a zip with a ``.dist-info`` folder; the wheel
format, PEP 427, and the recording of installed files, PEP 376/RECORD). Pure: bytes in, bytes
out. The same modules and version give the same bytes, so every server process serves one
file under one ETag (no times, owners or random order inside).
"""

import base64
import hashlib
import io
import re
import zipfile
from collections.abc import Mapping

# Not "parity-ci": that name on PyPI is an unrelated project (docs/ci.md#installing-with-pip).
DISTRIBUTION = "parity-dashboard-ci"
TAG = "py3-none-any"
SUMMARY = "parity's CI client (parity-ci), its pytest plugin and its unittest runner"
REQUIRES_PYTHON = ">=3.8"
# The plugin's entry point has the module's own name: pytest skips an entry point whose name is
# already registered, so `-p parity_pytest` (the single-file way) and the installed wheel can
# meet in one run. Under another name pluggy refuses the module registered twice.
ENTRY_POINTS = """\
[console_scripts]
parity-ci = parity_ci:main

[pytest11]
parity_pytest = parity_pytest
"""
# `parity-dashboard-ci[mcp]`: the MCP SDK that `parity-ci mcp` (parity_mcp.py) needs, as
# parity/clients/pyproject.toml declares it, so the served wheel installs it the same way.
MCP_EXTRA = 'mcp~=2.3; python_version >= "3.10" and extra == "mcp"'
# Zip entries carry a date; a fixed one keeps the bytes (and the ETag) those of the content.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_FILE_MODE = 0o100644 << 16  # a regular file, rw-r--r--
# A version as it may stand in a wheel's filename: PEP 440's characters, no `-` (the separator).
_VERSION = re.compile(r"\A[0-9][0-9A-Za-z.+!]*\Z")


def wheel_filename(version: str) -> str:
    """``parity_dashboard_ci-<version>-py3-none-any.whl``: the name pip requires of a wheel's
    URL."""
    if not _VERSION.match(version):
        raise ValueError(f"not a wheel version (PEP 440, public or local): {version!r}")
    return f"{_escaped(DISTRIBUTION)}-{version}-{TAG}.whl"


def wheel_build(*, modules: Mapping[str, bytes], version: str) -> bytes:
    """The wheel of ``modules`` (file name -> content, top-level ``.py`` files) at
    ``version``."""
    dist_info = f"{_escaped(DISTRIBUTION)}-{version}.dist-info"
    entries = [
        *sorted(modules.items()),
        (f"{dist_info}/METADATA", _metadata(version).encode()),
        (f"{dist_info}/WHEEL", _wheel_file().encode()),
        (f"{dist_info}/entry_points.txt", ENTRY_POINTS.encode()),
    ]
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in entries)
    entries.append((f"{dist_info}/RECORD", f"{record}{dist_info}/RECORD,,\n".encode()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = _FILE_MODE
            archive.writestr(info, data)
    return out.getvalue()


def _metadata(version: str) -> str:
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {DISTRIBUTION}\n"
        f"Version: {version}\n"
        f"Summary: {SUMMARY}\n"
        f"Requires-Python: {REQUIRES_PYTHON}\n"
        "Provides-Extra: mcp\n"
        f"Requires-Dist: {MCP_EXTRA}\n"
    )


def _wheel_file() -> str:
    return (
        "Wheel-Version: 1.0\n"
        "Generator: parity (parity/ci_wheel.py)\n"
        "Root-Is-Purelib: true\n"
        f"Tag: {TAG}\n"
    )


def _record_hash(data: bytes) -> str:
    """RECORD's hash of a file: sha256, URL-safe base64 without its ``=`` padding."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def _escaped(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()
