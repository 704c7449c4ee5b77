"""``parity-ci mcp``, the MCP server for bots, driven as a bot's host drives it: the MCP SDK's
stdio client starts ``parity_ci.py mcp`` as a subprocess and speaks the protocol to it, against
the live stack, on data the client uploaded. Its reads answer the documents ``query --json``
prints (docs/query.md); a maintainer's token proposes an exemption that then applies, a
viewer's and a bad proposal are refused with the server's reason and change nothing."""

import datetime
import json
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import parity_ci
import pytest
from django.contrib.auth import get_user_model
from mcp import ClientSession, StdioServerParameters, stdio_client

from parity.models import Membership, Role, Run, Triage
from parity.services.projects import user_token_create
from parity.services.targets import TargetRequest, target_create
from tests.parity.clients.conftest import CLIENTS_DIR, clean_environment
from tests.parity.clients.test_parity_ci_live import ISSUE, commit_of
from tests.parity.clients.test_query import (
    T,
    compare_view_seeded,
    documented,
    gaps_on_tpu,
    query,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
__all__ = ["gaps_on_tpu"]  # the fixture, shared with test_query

READS = {"gaps", "exemptions", "verdict", "tests", "targets", "suites", "compare", "transitions"}
MCP_SECONDS = 120
# A target's date: ahead of today, as a target must be (docs/targets.md).
DUE = datetime.date.today() + datetime.timedelta(days=90)


def mcp_session(
    env: Mapping[str, str], steps: Callable[[ClientSession], Awaitable[Any]], errlog
) -> Any:
    """Start ``parity_ci.py mcp`` with ``env`` as an MCP host does, run ``steps`` in its
    initialized session, and return what they return."""

    async def main() -> Any:
        server = StdioServerParameters(
            command=sys.executable, args=[str(CLIENTS_DIR / "parity_ci.py"), "mcp"], env=dict(env)
        )
        with anyio.fail_after(MCP_SECONDS):
            async with (
                stdio_client(server, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await steps(session)

    return anyio.run(main)


@pytest.fixture
def mcp(client_env, tmp_path):
    """``mcp(steps, token=...)``: a session with the client's settings (another token if
    given); the server's standard error goes to a file a failing assertion can show."""
    errlog_path = tmp_path / "mcp-stderr.log"

    def run(steps, **settings: str) -> Any:
        with errlog_path.open("a") as errlog:
            return mcp_session({**client_env, **settings}, steps, errlog)

    run.log = errlog_path
    return run


def user_token(project, username: str, role: str) -> str:
    user = get_user_model().objects.create_user(username, password="x" * 12)
    Membership.objects.create(user=user, project=project, role=role)
    return user_token_create(user=user, label="bot")


def structured(result) -> dict:
    assert not result.is_error, result.content
    (text,) = result.content
    assert json.loads(text.text) == result.structured_content  # hosts that read only text
    return result.structured_content


def test_the_reads_answer_query_s_documents(mcp, parity_ci_run, gaps_on_tpu):
    run = Run.objects.get(backend__name="tpu", commit=commit_of("tpu1"))
    target_create(
        project=run.project,
        request=TargetRequest(backend="tpu", score=0.9, due=DUE),
    )
    view = compare_view_seeded(run.project)

    async def steps(session: ClientSession):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        calls = {
            "gaps": {"backend": "tpu"},
            "untracked": {"untracked": True, "state": "failed"},
            "exemptions": {"state": "intended"},
            "verdict": {"run": run.pk, "limit": 2},
            "tests": {"q": "test_q.py::TestQ", "limit": 3},
            "targets": {"backend": "tpu"},
            "suites": {"backend": "tpu"},
            "compare": {"name": view, "state": "missing_sample"},
            "views": {},
            "transitions": {"backend": "tpu"},
        }
        answers = {}
        for name, arguments in calls.items():
            tool = {"untracked": "gaps", "views": "compare"}.get(name, name)
            answers[name] = await session.call_tool(tool, arguments)
        return session.initialize_result.server_info, tools, answers

    server, tools, answers = mcp(steps)

    assert (server.name, server.version) == ("parity", parity_ci.__version__)  # one version

    assert set(tools) == READS | {"exemption_propose"}
    assert all(tools[name].annotations.read_only_hint for name in READS)
    assert tools["exemption_propose"].annotations.read_only_hint is False
    assert tools["verdict"].input_schema["required"] == ["run"]
    assert answers.keys() == READS | {"untracked", "views"}
    gaps = structured(answers["gaps"])
    assert gaps == query(parity_ci_run, "gaps", "--backend", "tpu")
    assert (gaps["kind"], gaps["project"], gaps["count"], gaps["truncated"]) == (
        "gaps",
        "pytorch-xla",
        5,
        False,
    )
    assert set(gaps["items"][0]) == documented("### `gaps` items")
    untracked = structured(answers["untracked"])
    assert sorted(g["test"] for g in untracked["items"]) == [T.format(n) for n in "bef"]
    exemptions = structured(answers["exemptions"])
    assert exemptions == query(parity_ci_run, "exemptions", "--state", "intended")
    assert [e["id"] for e in exemptions["items"]] == [gaps_on_tpu["d"]]
    assert set(exemptions["items"][0]) == documented("### `exemptions` items")
    verdict = structured(answers["verdict"])
    assert verdict == query(parity_ci_run, "verdict", "--run", str(run.pk), "--limit", "2")
    assert (verdict["run"], verdict["backend"], verdict["ok"]) == (run.pk, "tpu", False)
    assert (verdict["count"], verdict["truncated"]) == (2, True)
    tests = structured(answers["tests"])
    assert (tests["count"], tests["total"], tests["truncated"]) == (3, 7, True)
    assert set(tests["items"][0]) == documented("### `tests` items")
    targets = structured(answers["targets"])
    assert targets == query(parity_ci_run, "targets", "--backend", "tpu")
    [target] = targets["items"]
    assert (target["backend"], target["due"]) == ("tpu", DUE.isoformat())
    assert target["remaining"] == target["goal"] - target["passing"] > 0
    assert set(target) == documented("### `targets` items")
    suites = structured(answers["suites"])
    assert suites == query(parity_ci_run, "suites", "--backend", "tpu")
    assert suites["kind"] == "suites"  # its items: test_query's suites test
    compare = structured(answers["compare"])
    assert compare == query(parity_ci_run, "compare", view, "--state", "missing_sample")
    assert compare["view"]["name"] == view
    assert [(t["test"], t["state"]) for t in compare["items"]] == [
        (T.format("d"), "missing_sample")
    ]
    assert structured(answers["views"]) == query(parity_ci_run, "compare")
    # No transition here: its items, test_query's transitions test.
    transitions = structured(answers["transitions"])
    assert transitions == query(parity_ci_run, "transitions", "--backend", "tpu")
    assert (transitions["kind"], transitions["items"]) == ("transitions", [])


def test_a_maintainer_proposes_an_exemption_a_viewer_is_refused(
    mcp, gaps_on_tpu, project, client_env
):
    maintainer = user_token(project, "triager", Role.MAINTAINER)
    viewer = user_token(project, "reader", Role.VIEWER)
    before = set(Triage.objects.values_list("pk", flat=True))

    async def find_gap(session: ClientSession) -> dict:
        answer = structured(await session.call_tool("gaps", {"q": "test_b", "untracked": True}))
        (gap,) = answer["items"]
        return gap

    gap = mcp(find_gap, PARITY_TOKEN=viewer)  # a viewer reads
    proposal = {
        "kind": "tracked",
        "gap": gap["id"],
        "issue": ISSUE,
        "reason": "b fails on tpu since the XLA pin moved",
    }

    async def refused(session: ClientSession):
        return await session.call_tool("exemption_propose", proposal)

    denied = mcp(refused, PARITY_TOKEN=viewer)

    assert denied.is_error
    (said,) = denied.content
    assert "HTTP 403" in said.text and "Only maintainers of 'pytorch-xla'" in said.text
    assert set(Triage.objects.values_list("pk", flat=True)) == before

    async def propose(session: ClientSession):
        bad = await session.call_tool("exemption_propose", {**proposal, "issue": None})
        script = {**proposal, "issue": "JaVaScRiPt:alert(document.domain)//://x"}
        scripted = await session.call_tool("exemption_propose", script)
        ftp = await session.call_tool("exemption_propose", {**proposal, "issue": "ftp://x.test/1"})
        made = await session.call_tool("exemption_propose", proposal)
        listed = await session.call_tool("exemptions", {"q": "XLA pin"})
        after = await session.call_tool("gaps", {"q": "test_b"})
        return bad, (scripted, ftp), made, listed, after

    bad, not_links, made, listed, after = mcp(propose, PARITY_TOKEN=maintainer)

    assert bad.is_error
    assert "needs an 'issue_url'" in bad.content[0].text and "HTTP 400" in bad.content[0].text
    for refused in not_links:  # an issue URL is http(s) only (parity.pure.web_urls)
        assert refused.is_error and "HTTP 400" in refused.content[0].text
    exemption = structured(made)
    assert set(exemption) == documented("### `exemptions` items") | {"created_by"}
    assert (exemption["kind"], exemption["pattern"], exemption["backends"]) == (
        "tracked",
        T.format("b"),
        ["tpu"],
    )
    assert (exemption["issue"], exemption["reason"]) == (ISSUE, proposal["reason"])
    assert exemption["created_by"] == "triager"
    (created,) = set(Triage.objects.values_list("pk", flat=True)) - before
    assert created == exemption["id"]
    assert Triage.objects.get(pk=created).created_by.username == "triager"
    assert [e["id"] for e in structured(listed)["items"]] == [created]
    (tracked,) = structured(after)["items"]
    assert (tracked["tracking"], tracked["issues"]) == ("tracked", [ISSUE])  # applies at once


def test_a_refused_token_is_a_tool_error_not_a_crash(mcp, live):
    async def steps(session: ClientSession):
        return await session.call_tool("tests", {"q": "x"})

    refused = mcp(steps, PARITY_TOKEN="not-a-token")

    assert refused.is_error
    assert "HTTP 401" in refused.content[0].text
    assert "raised an unexpected" not in mcp.log.read_text()


def test_without_the_sdk_or_its_module_it_says_how_to_install(tmp_path):
    env = clean_environment(PARITY_URL="http://127.0.0.1:9", PARITY_PROJECT="p")
    # -S: no site-packages, so no MCP SDK: the client itself needs none.
    no_sdk = subprocess.run(
        [sys.executable, "-S", str(CLIENTS_DIR / "parity_ci.py"), "mcp"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    alone = tmp_path / "parity_ci.py"  # fetched alone, without parity_mcp.py beside it
    shutil.copy(CLIENTS_DIR / "parity_ci.py", alone)
    no_module = subprocess.run(
        [sys.executable, str(alone), "mcp"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert (no_sdk.returncode, no_sdk.stdout) == (parity_ci.EXIT_USAGE, "")
    assert "pip install 'mcp~=2.3'" in no_sdk.stderr
    assert "Python 3.10" in no_sdk.stderr
    assert (no_module.returncode, no_module.stdout) == (parity_ci.EXIT_USAGE, "")
    assert "http://127.0.0.1:9/ci/parity_mcp.py" in no_module.stderr
