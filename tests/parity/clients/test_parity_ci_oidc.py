"""The CI client's ``--oidc`` without a parity server: the ID token GitHub Actions gives (from a
fake of its token request endpoint), what a fork's pull request gets (nothing: say so, fall back
or stop), on Python 3.8 too; and docs/oidc.md's workflow snippets are valid and call the client
with flags it takes. The exchange with a live server is in tests/e2e/test_oidc.py."""

import re
import shlex
import subprocess
from pathlib import Path

import jwt
import parity_ci
import pytest
import yaml

from tests.oidc_issuer import FakeIssuer
from tests.parity.clients.conftest import CLIENTS_DIR, clean_environment, client_run, python38

DOCS = CLIENTS_DIR.parents[1] / "docs" / "oidc.md"


@pytest.fixture(scope="module")
def issuer():
    with FakeIssuer() as fake:
        yield fake


def audience_of(token: str) -> str:
    return jwt.decode(token, options={"verify_signature": False})["aud"]


def test_github_is_asked_for_a_token_of_the_default_audience(issuer):
    token = parity_ci.oidc_id_token(issuer.github_env(), parity_ci.OIDC_AUDIENCE)

    assert audience_of(token) == "parity"
    assert issuer.audiences_requested[-1] == "parity"


def test_the_audience_is_configurable_and_sent_encoded(issuer):
    env = clean_environment(**issuer.github_env(), PARITY_OIDC_AUDIENCE="https://parity.x.org")
    args = parity_ci._parser(env).parse_args(["files", "--oidc", "--backend", "tpu"])

    token = parity_ci.oidc_id_token(env, args.oidc_audience)

    assert args.oidc_audience == "https://parity.x.org"
    assert audience_of(token) == "https://parity.x.org"


def test_a_token_given_in_the_environment_is_used_as_is(issuer):
    """GitLab's ``id_tokens:`` and Buildkite's ``oidc request-token`` hand the job a token."""
    env = {"PARITY_OIDC_TOKEN": "a.b.c", **issuer.github_env()}

    assert parity_ci.oidc_id_token(env, "parity") == "a.b.c"


def test_a_job_without_the_variables_has_no_token():
    assert parity_ci.oidc_id_token(clean_environment(), "parity") is None


def test_a_refused_token_request_says_so(issuer):
    env = {**issuer.github_env(), "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "wrong"}

    with pytest.raises(parity_ci.AuthError) as refused:
        parity_ci.oidc_id_token(env, "parity", retries=0)

    assert (
        str(refused.value)
        == "GitHub refused the OIDC token request (HTTP 401: message: Bad credentials)"
    )


def test_a_fork_without_a_fallback_token_stops_with_a_clear_error():
    env = clean_environment(PARITY_URL="http://127.0.0.1:9", PARITY_PROJECT="pytorch-xla")

    done = client_run("manifest", "--backend", "tpu", "--oidc", env=env)

    assert done.returncode == parity_ci.EXIT_USAGE
    assert done.stderr.strip() == (
        "parity: --oidc: no OIDC token here: ACTIONS_ID_TOKEN_REQUEST_URL is not set (GitHub "
        "gives no OIDC token to pull requests from forks, nor to a job without 'permissions: "
        "id-token: write'); and no PARITY_TOKEN to fall back on"
    )


def test_oidc_runs_on_python_3_8(issuer):
    python = python38()
    if python is None:
        pytest.skip("no Python 3.8 here (python3.8, ~/.pyenv/versions/3.8*, PARITY_TEST_PYTHON38)")
    script = "import parity_ci, os; print(parity_ci.oidc_id_token(os.environ, 'parity-38'))"

    done = subprocess.run(
        [python, "-c", script],
        cwd=CLIENTS_DIR,
        env=clean_environment(**issuer.github_env()),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert audience_of(done.stdout.strip()) == "parity-38"


# --- docs/oidc.md's snippets -------------------------------------------------------------------


def doc_blocks(language: str) -> list[str]:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    return [re.sub(r"\$\{\{[^}]*\}\}", "tpu", block) for block in blocks]


def test_the_docs_workflows_are_valid_yaml_and_ask_for_an_id_token():
    documents = [yaml.safe_load(block) for block in doc_blocks("yaml")]
    github = [d for d in documents if isinstance(d, dict) and "jobs" in d]
    gitlab = [d for d in documents if isinstance(d, dict) and "jobs" not in d]

    assert github and gitlab
    for workflow in github:
        assert workflow["permissions"]["id-token"] == "write"
        steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
        for script in (step["run"] for step in steps if "run" in step):
            checked = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True)
            assert checked.returncode == 0, f"{script}\n{checked.stderr}"
    jobs = [job for doc in gitlab for job in doc.values() if isinstance(job, dict)]
    assert any("PARITY_OIDC_TOKEN" in job.get("id_tokens", {}) for job in jobs)


def test_the_docs_call_the_client_with_oidc_and_flags_it_takes():
    parser = parity_ci._parser({})
    commands = []
    for block in doc_blocks("yaml") + doc_blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            found = re.search(r"parity_ci\.py +((?:upload|files|manifest)\b[^|;>]*)", line)
            if found:
                commands.append(shlex.split(found.group(1)))

    assert commands and all("--oidc" in argv for argv in commands)
    for argv in commands:
        parser.parse_args(argv)


def test_the_docs_name_every_oidc_setting_with_its_default():
    from parity.settings import base

    text = DOCS.read_text(encoding="utf-8")
    names = [name for name in vars(base) if name.startswith("PARITY_OIDC_")]
    env_example = (Path(CLIENTS_DIR.parents[1]) / ".env.example").read_text()

    assert len(names) == 6
    for name in names:
        assert name in text and name in env_example, name
