"""``/ci/<file>`` serves the CI client and the runner integrations as kept in the repository,
one by one and as one wheel; ``/ci/`` links them for pip's ``--find-links``."""

import io
import zipfile
from html.parser import HTMLParser

import pytest

from parity import __version__
from parity.ci_files import CLIENTS_DIR

SERVED = ["parity_ci.py", "parity_mcp.py", "parity_pytest.py", "parity_unittest.py"]
WHEEL = f"parity_dashboard_ci-{__version__}-py3-none-any.whl"


@pytest.mark.parametrize("name", SERVED)
def test_each_client_file_is_served_as_kept(client, name):
    response = client.get(f"/ci/{name}")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/x-python; charset=utf-8"
    assert response.content == (CLIENTS_DIR / name).read_bytes()
    assert client.get(f"/ci/{name}", HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304


def test_the_wheel_holds_the_same_files_at_the_server_s_version(client):
    response = client.get(f"/ci/{WHEEL}")

    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{WHEEL}"'
    wheel = zipfile.ZipFile(io.BytesIO(response.content))
    assert {name: wheel.read(name) for name in SERVED} == {
        name: (CLIENTS_DIR / name).read_bytes() for name in SERVED
    }
    metadata = wheel.read(f"parity_dashboard_ci-{__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {__version__}\n" in metadata
    assert client.get(f"/ci/{WHEEL}", HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304


def test_the_wheel_s_short_name_redirects_to_its_full_name(client):
    # pip takes the version from the URL, so it installs only the full name.
    response = client.get("/ci/parity_ci.whl")

    assert response.status_code == 302
    assert response["Location"] == f"/ci/{WHEEL}"


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.append(dict(attrs)["href"])


def test_the_index_links_every_file_for_pip_find_links(client):
    response = client.get("/ci/")
    links = _Links()
    links.feed(response.content.decode())

    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert sorted(links.hrefs) == sorted([*SERVED, WHEEL])  # relative to /ci/


@pytest.mark.parametrize(
    "name",
    [
        "nope.py",
        "__init__.py",
        "..%2Fsettings.py",
        "parity_ci",
        "parity_dashboard_ci-0.0.0-py3-none-any.whl",  # another version than the server's
    ],
)
def test_anything_else_is_not_found(client, name):
    assert client.get(f"/ci/{name}").status_code == 404
