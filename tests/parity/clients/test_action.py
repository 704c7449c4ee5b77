"""The GitHub Action (``action.yml``) and the GitLab CI template (``.gitlab/parity.gitlab-ci.yml``)
run here as their CI runs them, against the live stack (gunicorn and a Celery worker over Redis)
trusting a local fake OIDC issuer:

- the action's steps with bash (``bash --noprofile --norc -eo pipefail``, GitHub's ``shell:
  bash``), its ``${{ inputs.x }}`` and ``${{ steps.id.outputs.x }}`` filled in as GitHub fills
  them, ``$GITHUB_OUTPUT`` and ``$GITHUB_STEP_SUMMARY`` as files: it installs the client the
  server serves into a virtualenv, uploads with the job's OIDC token (or the token input, as a
  fork's pull request must), writes the verdict to the summary and exits on the gate;
- the template's ``script:`` lines in one POSIX shell (``sh -e``, as GitLab runs them), with
  its ``variables:`` and the ID token its ``id_tokens:`` asks for.
"""

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from parity import __version__
from parity.models import BackendState, Run, Upload
from parity.oidc.exchange import trust_rule_create
from parity.services.projects import upload_token_create
from tests.e2e.conftest import stack_trusting
from tests.junit_builder import Case, junit_xml
from tests.oidc_issuer import FakeIssuer
from tests.parity.clients.conftest import clean_environment, python38

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

REPO_DIR = Path(__file__).resolve().parents[3]
ACTION = REPO_DIR / "action.yml"
GITLAB_TEMPLATE = REPO_DIR / ".gitlab" / "parity.gitlab-ci.yml"
STEP_SECONDS = 180
RECOMPUTE_SECONDS = 60
# Variables of this test run that would change what the steps' Python or pip do.
_NOT_PASSED = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE", "PIP_")
A = "test/test_x.py::TestX::test_a"
B = "test/test_x.py::TestX::test_b"
C = "test/test_x.py::TestX::test_c"


# --- Running the action as GitHub does -----------------------------------------------------

# ${{ <context>.<name>... }}: the only expressions the action may use, so this test fills in
# every one of them as GitHub would (an unknown form fails the test, not the action in CI).
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
PROPERTY = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+\Z")


def expanded(text: str, contexts: dict) -> str:
    def value(match: re.Match) -> str:
        expression = match.group(1)
        assert PROPERTY.match(expression), f"an expression this test cannot fill: {expression}"
        head, *names = expression.split(".")
        assert head in contexts, f"a context this test does not give: {expression}"
        node = contexts[head]
        for name in names:  # GitHub: a missing property is null, which a string shows empty
            node = node.get(name, "") if isinstance(node, dict) else ""
        return str(node)

    return EXPRESSION.sub(value, text)


def outputs_read(path: Path) -> dict[str, str]:
    """``$GITHUB_OUTPUT``'s ``name=value`` lines (and ``name<<DELIMITER`` blocks)."""
    outputs, lines = {}, iter(path.read_text().splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            outputs[name] = "\n".join(iter(lambda: next(lines), delimiter))
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


@dataclass
class ActionRun:
    returncode: int
    outputs: dict[str, str]
    log: str


def action_run(inputs: dict[str, str], *, env: dict[str, str], workdir: Path) -> ActionRun:
    """The composite action's steps, one after another until one fails, as GitHub runs them."""
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    unknown = set(inputs) - set(action["inputs"])
    assert not unknown, f"not inputs of action.yml: {unknown}"
    given = {
        name: str(inputs.get(name, spec.get("default", "")))
        for name, spec in action["inputs"].items()
    }
    temp = workdir / "runner-temp"
    temp.mkdir(exist_ok=True)
    steps: dict[str, dict] = {}
    log = []
    for index, step in enumerate(action["runs"]["steps"]):
        assert step["shell"] == "bash" and not {"if", "uses"} & set(step), step
        contexts = {"inputs": given, "steps": steps}
        output = temp / f"output-{index}"
        output.touch()
        script = temp / f"step-{index}.sh"
        script.write_text(expanded(step["run"], contexts))
        step_env = {
            **env,
            "RUNNER_TEMP": str(temp),
            "GITHUB_OUTPUT": str(output),
            **{name: expanded(str(v), contexts) for name, v in step.get("env", {}).items()},
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            env=step_env,
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=STEP_SECONDS,
            check=False,
        )
        log.append(f"--- {step['name']}: exit {done.returncode}\n{done.stdout}{done.stderr}")
        if "id" in step:
            steps[step["id"]] = {"outputs": outputs_read(output)}
        if done.returncode:
            return ActionRun(done.returncode, {}, "\n".join(log))
    outputs = {
        name: expanded(spec["value"], {"steps": steps}) for name, spec in action["outputs"].items()
    }
    return ActionRun(0, outputs, "\n".join(log))


def runner_environment(**settings: str) -> dict[str, str]:
    """A runner's environment: this process's without CI, parity, Python or pip settings."""
    env = {k: v for k, v in clean_environment().items() if not k.startswith(_NOT_PASSED)}
    return {**env, **settings}


# --- Fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def issuer():
    with FakeIssuer() as fake:
        yield fake


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, issuer):
    """This module's stack (the ``live`` fixture serves it): it trusts the fake issuer."""
    yield from stack_trusting(tmp_path_factory, issuer)


@pytest.fixture
def github(issuer, tmp_path):
    """A push to main of pytorch/xla: GitHub's variables, the OIDC request endpoint of a job
    with ``id-token: write``, and an empty step summary."""
    issuer.github_claims = {}
    summary = tmp_path / "step-summary.md"
    summary.touch()
    yield runner_environment(
        GITHUB_ACTIONS="true",
        GITHUB_SHA=commit_of("push"),
        GITHUB_REF_NAME="main",
        GITHUB_RUN_ID="777",
        GITHUB_SERVER_URL="https://github.com",
        GITHUB_REPOSITORY="pytorch/xla",
        GITHUB_EVENT_NAME="push",
        GITHUB_STEP_SUMMARY=str(summary),
        **issuer.github_env(),
    )
    issuer.github_claims = {}


@pytest.fixture
def trusted(project, issuer):
    return trust_rule_create(
        project=project, issuer=issuer.url, repository="pytorch/xla", ref="refs/heads/main"
    )


def commit_of(name: str) -> str:
    return name.encode().hex().ljust(40, "0")[:40]


def reports_written(folder: Path, results: dict[str, str]) -> Path:
    cases = []
    for test_id, outcome in results.items():
        file, cls, name = test_id.split("::")
        cases.append(Case(cls, name, outcome, "" if outcome == "passed" else "boom", file=file))
    folder.mkdir(parents=True)
    (folder / "TEST-results.xml").write_bytes(junit_xml(*cases))
    return folder


def inputs_for(live, project, backend: str, **more: str) -> dict[str, str]:
    return {
        "url": live.base_url,
        "project": project.slug,
        "backend": backend,
        "python": sys.executable,
        **more,
    }


def current_run_wait(live, *, backend: str) -> None:
    run_id = Run.objects.get(backend__name=backend).pk
    deadline = time.monotonic() + RECOMPUTE_SECONDS
    while not BackendState.objects.filter(backend__name=backend, current_run_id=run_id).exists():
        live.assert_worker_alive()
        assert time.monotonic() < deadline, f"run {run_id} not current after the recompute"
        time.sleep(0.2)


# --- The action -----------------------------------------------------------------------------


def test_the_action_uploads_with_oidc_and_writes_the_verdict_to_the_summary(
    live, project, github, trusted, tmp_path
):
    reports_written(tmp_path / "test-reports", {A: "passed", B: "passed"})

    done = action_run(
        inputs_for(live, project, "cpu", version=__version__), env=github, workdir=tmp_path
    )

    assert done.returncode == 0, done.log
    assert f"parity_ci {__version__}" in done.log  # installed from the server, pinned
    assert f"OIDC: trust rule {trusted.pk} of pytorch-xla matched" in done.log
    upload = Upload.objects.get()
    run = upload.run
    assert (upload.status, upload.counts["total"]) == ("done", 2)
    assert (run.key, run.backend.name, run.complete) == ("777-cpu", "cpu", True)
    assert (run.commit, run.branch) == (commit_of("push"), "main")
    summary = Path(github["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.startswith("### parity: cpu run") and "✅ ok" in summary
    assert Path(done.outputs["summary-file"]).read_text() == summary
    assert done.outputs["run-url"] == f"{live.base_url}/p/pytorch-xla/runs/{run.pk}/"


def test_the_gate_fails_the_step_on_an_untracked_gap_unless_it_is_off(
    live, project, github, trusted, tmp_path
):
    reports_written(tmp_path / "cpu", {A: "passed", B: "passed", C: "passed"})
    reference = action_run(
        inputs_for(live, project, "cpu", paths="cpu"), env=github, workdir=tmp_path
    )
    assert reference.returncode == 0, reference.log
    current_run_wait(live, backend="cpu")
    reports_written(tmp_path / "tpu-b", {A: "passed", B: "failed", C: "passed"})
    reports_written(tmp_path / "tpu-c", {A: "passed", B: "failed", C: "failed"})

    not_gated = action_run(
        inputs_for(live, project, "tpu", paths="tpu-b", gate="false", summary="false"),
        env={**github, "GITHUB_RUN_ID": "778"},
        workdir=tmp_path,
    )
    gated = action_run(
        inputs_for(live, project, "tpu", paths="tpu-c/*.xml"), env=github, workdir=tmp_path
    )

    assert not_gated.returncode == 0, not_gated.log
    assert "NOT OK (opens untracked gaps); opened 1 untracked" in not_gated.log
    assert "❌ not ok" in Path(not_gated.outputs["summary-file"]).read_text()
    assert gated.returncode == 1, gated.log
    assert "NOT OK (opens untracked gaps); opened 1 untracked" in gated.log
    summary = Path(github["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.count("### parity: ") == 2  # cpu's and the gated tpu's: summary false wrote none
    assert "❌ not ok" in summary
    assert Run.objects.filter(backend__name="tpu").count() == 2


def test_a_fork_pull_request_without_oidc_uploads_with_the_token_input(
    live, project, github, tmp_path
):
    """GitHub gives a fork's pull request no OIDC token: the client says so and uses the token
    input (here as a workflow_run job passes it, with the pull request's commit and branch)."""
    fork = {k: v for k, v in github.items() if not k.startswith("ACTIONS_ID_TOKEN")}
    reports_written(tmp_path / "test-reports", {A: "passed"})

    done = action_run(
        inputs_for(
            live,
            project,
            "cpu",
            token=upload_token_create(project=project),
            commit=commit_of("fork"),
            branch="someone/xla:main",
            **{"ci-url": "https://github.com/pytorch/xla/actions/runs/700"},
        ),
        env={**fork, "GITHUB_EVENT_NAME": "workflow_run"},
        workdir=tmp_path,
    )

    assert done.returncode == 0, done.log
    assert "--oidc: no OIDC token here" in done.log and "using PARITY_TOKEN" in done.log
    run = Upload.objects.get(status="done").run
    assert (run.commit, run.branch) == (commit_of("fork"), "someone/xla:main")
    assert run.ci_url == "https://github.com/pytorch/xla/actions/runs/700"


def test_a_shard_uploads_its_part_and_leaves_the_run_open(live, project, github, trusted, tmp_path):
    reports_written(tmp_path / "test-reports" / "shard-2", {B: "passed"})

    # The client's oldest Python, where this machine has it: the action installs into its venv.
    python = {"python": python38()} if python38() else {}

    done = action_run(
        inputs_for(live, project, "cpu", shard="2/4", paths="test-reports/**/*.xml", **python),
        env=github,
        workdir=tmp_path,
    )

    assert done.returncode == 0, done.log
    upload = Upload.objects.get(status="done")
    run = upload.run
    assert (run.key, run.complete) == ("777-cpu", False)
    # The client is told the shard (--shard 2/4): the server knows the run's four shards, and
    # the verdict names this one when its files must run again.
    assert upload.shard == "2/4"
    assert done.outputs["summary-file"].endswith("parity-summary-cpu-shard-2-of-4.md")
    if python:
        assert (tmp_path / "runner-temp" / "parity-ci" / "lib" / "python3.8").is_dir()


def test_a_version_the_server_does_not_serve_fails_the_install_naming_the_served_one(
    live, project, github, tmp_path
):
    reports_written(tmp_path / "test-reports", {A: "passed"})

    done = action_run(
        inputs_for(live, project, "cpu", version="9.9.9"), env=github, workdir=tmp_path
    )

    assert done.returncode != 0
    assert "parity-dashboard-ci==9.9.9" in done.log
    assert f"(from versions: {__version__})" in done.log
    assert "--- Upload" not in done.log
    assert not Upload.objects.exists()


def test_paths_that_match_nothing_fail_before_any_upload(live, project, github, tmp_path):
    done = action_run(
        inputs_for(live, project, "cpu", paths="missing/**/*.xml"), env=github, workdir=tmp_path
    )

    assert done.returncode == 2, done.log
    assert "::warning::parity: nothing matches 'missing/**/*.xml'" in done.log
    assert "::error::parity: no JUnit XML to upload" in done.log
    assert not Upload.objects.exists()


def test_a_line_break_in_an_input_is_no_command_and_no_output_line(live, project, github, tmp_path):
    reports_written(tmp_path / "test-reports", {A: "passed"})
    backend = "cpu\nrun-url=https://evil.example.org/\n::error::owned"

    done = action_run(
        inputs_for(live, project, backend, paths="test-reports\n::warning::x"),
        env=github,
        workdir=tmp_path,
    )

    assert done.returncode == 2, done.log
    assert "the backend input holds a line break" in done.log
    assert "cpu%0Arun-url=https://evil.example.org/%0A::error::owned" in done.log
    commands = [line for line in done.log.splitlines() if line.startswith("::")]
    assert len(commands) == 1 and commands[0].startswith("::error::parity: the backend"), done.log
    assert "evil" not in (tmp_path / "runner-temp" / "output-1").read_text()
    assert not Upload.objects.exists()

    nothing = action_run(
        inputs_for(live, project, "cpu", paths="missing\n::error::owned"),
        env=github,
        workdir=tmp_path,
    )
    assert nothing.returncode == 2, nothing.log
    assert "(paths: missing%0A::error::owned)" in nothing.log
    assert not [line for line in nothing.log.splitlines() if line.startswith("::error::owned")]


def test_the_outputs_are_blocks_a_value_cannot_break(live, project, github, trusted, tmp_path):
    reports_written(tmp_path / "test-reports", {A: "passed"})

    done = action_run(inputs_for(live, project, "cpu"), env=github, workdir=tmp_path)

    assert done.returncode == 0, done.log
    written = (tmp_path / "runner-temp" / "output-1").read_text()
    assert re.match(r"summary-file<<parity_[0-9a-f]{32}\n", written), written
    assert done.outputs["summary-file"].endswith("parity-summary-cpu.md")
    assert done.outputs["run-url"].startswith(live.base_url)


# --- The GitLab CI template -----------------------------------------------------------------


@pytest.fixture
def gitlab_job() -> dict:
    return yaml.safe_load(GITLAB_TEMPLATE.read_text())[".parity-upload"]


def gitlab_run(
    job: dict, issuer, workdir: Path, *, pipeline: str, **variables: str
) -> subprocess.CompletedProcess:
    """The template's script lines in one ``sh -e``, as GitLab runs them: its variables under the
    job's, GitLab's own variables, and the ID token its ``id_tokens:`` asks for (GitLab's
    claims, not GitHub's)."""
    id_token = issuer.token(
        aud=job["id_tokens"]["PARITY_OIDC_TOKEN"]["aud"],
        sub="project_path:pytorch/xla:ref_type:branch:ref:main",
        project_path="pytorch/xla",
        project_id="42",
        ref="main",
        ref_type="branch",
        repository=None,
        repository_id=None,
        repository_owner=None,
        workflow=None,
    )
    env = runner_environment(**{name: str(value) for name, value in job["variables"].items()})
    env.update(
        PARITY_CI_VENV=str(workdir / "parity-ci"),
        PARITY_OIDC_TOKEN=id_token,
        GITLAB_CI="true",
        CI_COMMIT_SHA=commit_of(f"gitlab-{pipeline}"),
        CI_COMMIT_BRANCH="main",
        CI_PIPELINE_ID=pipeline,
        CI_PIPELINE_URL=f"https://gitlab.example.org/pytorch/xla/-/pipelines/{pipeline}",
        CI_PROJECT_DIR=str(workdir),
        **variables,
    )
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        ["sh", "-e", "-c", "\n".join(job["script"])],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=STEP_SECONDS,
        check=False,
    )


def test_the_gitlab_template_uploads_with_its_id_token_and_keeps_the_verdict(
    live, project, issuer, trusted, gitlab_job, tmp_path
):
    reports_written(tmp_path / "test-reports", {A: "passed", B: "passed"})
    server = {"PARITY_URL": live.base_url, "PARITY_PROJECT": project.slug}

    done = gitlab_run(gitlab_job, issuer, tmp_path, pipeline="888", PARITY_BACKEND="cpu", **server)

    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert f"OIDC: trust rule {trusted.pk} of pytorch-xla matched" in done.stderr
    run = Upload.objects.get(status="done").run
    assert (run.key, run.commit, run.complete) == ("888-cpu", commit_of("gitlab-888"), True)
    assert run.ci_url == "https://gitlab.example.org/pytorch/xla/-/pipelines/888"
    for kept in gitlab_job["artifacts"]["paths"]:
        assert "✅ ok" in (tmp_path / kept).read_text()


def test_the_gitlab_template_gates_and_uploads_a_shard_without_completing(
    live, project, issuer, trusted, gitlab_job, tmp_path
):
    server = {"PARITY_URL": live.base_url, "PARITY_PROJECT": project.slug}
    reports_written(tmp_path / "cpu", {A: "passed", B: "passed"})
    reference = gitlab_run(
        gitlab_job,
        issuer,
        tmp_path,
        pipeline="1",
        PARITY_BACKEND="cpu",
        PARITY_PATHS="cpu",
        **server,
    )
    assert reference.returncode == 0, f"{reference.stdout}\n{reference.stderr}"
    current_run_wait(live, backend="cpu")
    reports_written(tmp_path / "tpu", {A: "passed", B: "failed"})

    shard = gitlab_run(
        gitlab_job,
        issuer,
        tmp_path,
        pipeline="2",
        PARITY_BACKEND="tpu",
        PARITY_PATHS="tpu/*.xml",
        PARITY_SHARD="1/2",
        PARITY_GATE="false",
        PARITY_CLIENT_VERSION=__version__,
        **server,
    )
    gated = gitlab_run(
        gitlab_job,
        issuer,
        tmp_path,
        pipeline="3",
        PARITY_BACKEND="tpu",
        PARITY_PATHS="tpu",
        **server,
    )

    assert shard.returncode == 0, f"{shard.stdout}\n{shard.stderr}"
    assert "NOT OK (opens untracked gaps)" in shard.stdout
    assert Run.objects.get(key="2-tpu").complete is False
    assert Upload.objects.get(run__key="2-tpu").shard == "1/2"  # the template passed --shard
    assert gated.returncode == 1, f"{gated.stdout}\n{gated.stderr}"
    assert Run.objects.get(key="3-tpu").complete is True
    assert "❌ not ok" in (tmp_path / "parity-summary.md").read_text()


# --- The documentation says what the files do -----------------------------------------------

DOCS = REPO_DIR / "docs" / "github-action.md"
YAML_BLOCK = re.compile(r"^( *)```yaml\n(.*?)^\1```", re.M | re.S)


def table(page: Path, header: str) -> dict[str, str]:
    """The table under ``header``: each name in backquotes of a row's first cell -> its second."""
    lines = page.read_text(encoding="utf-8").splitlines()
    rows = {}
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows.update(dict.fromkeys(re.findall(r"`([^`]+)`", cells[0]), cells[1]))
    return rows


def shown(spec: dict) -> str:
    if spec.get("required"):
        return "(required)"
    return f"`{spec['default']}`" if spec.get("default") else "empty"


def test_the_docs_table_every_input_and_output_with_its_default():
    action = yaml.safe_load(ACTION.read_text())

    inputs = table(DOCS, "| input | default | meaning |")
    outputs = table(DOCS, "| output | value |")

    assert inputs == {name: shown(spec) for name, spec in action["inputs"].items()}
    assert set(outputs) == set(action["outputs"])


def test_the_docs_table_every_variable_of_the_gitlab_template():
    job = yaml.safe_load(GITLAB_TEMPLATE.read_text())[".parity-upload"]

    variables = table(DOCS, "| variable | default | meaning |")

    required = {"PARITY_URL", "PARITY_PROJECT", "PARITY_BACKEND"}
    assert variables == {
        **dict.fromkeys(required, "(required)"),
        **{name: f"`{v}`" if v else "empty" for name, v in job["variables"].items()},
    }


def _action_steps(node):
    if isinstance(node, dict):
        if "/parity@" in str(node.get("uses", "")):
            yield node
        for value in node.values():
            yield from _action_steps(value)
    elif isinstance(node, list):
        for value in node:
            yield from _action_steps(value)


def test_the_docs_use_the_action_with_its_inputs_at_the_one_version():
    action = yaml.safe_load(ACTION.read_text())
    required = {name for name, spec in action["inputs"].items() if spec.get("required")}
    steps = [
        step
        for page in (DOCS, REPO_DIR / "docs" / "ci.md")
        for indent, block in YAML_BLOCK.findall(page.read_text(encoding="utf-8"))
        for step in _action_steps(yaml.safe_load(re.sub(f"(?m)^{indent}", "", block)))
    ]

    assert len(steps) >= 5
    for step in steps:
        assert step["uses"].endswith(f"/parity@v{__version__}")
        assert required <= set(step["with"]) <= set(action["inputs"]), step
        assert str(step["with"]["version"]) == __version__
