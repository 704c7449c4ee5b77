"""``/ci/<file>`` serves the CI client and the runner integrations as kept in the repository."""

import pytest

from parity.ci_files import CLIENTS_DIR

SERVED = ["parity_ci.py", "parity_pytest.py", "parity_unittest.py"]


@pytest.mark.parametrize("name", SERVED)
def test_each_client_file_is_served_as_kept(client, name):
    response = client.get(f"/ci/{name}")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/x-python; charset=utf-8"
    assert response.content == (CLIENTS_DIR / name).read_bytes()
    assert client.get(f"/ci/{name}", HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304


@pytest.mark.parametrize("name", ["nope.py", "__init__.py", "..%2Fsettings.py", "parity_ci"])
def test_anything_else_is_not_found(client, name):
    assert client.get(f"/ci/{name}").status_code == 404
