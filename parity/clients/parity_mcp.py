"""parity's MCP server for bots: ``parity-ci mcp`` speaks the Model Context Protocol on standard
input and output, and answers with the reads of ``parity-ci query`` (gaps, exemptions, a run's
verdict, tests: the same documents, field by field, docs/query.md) and, for a token that may
triage, proposes an exemption.

    pip install 'mcp~=2.3'              # the MCP SDK; Python 3.10 or newer
    pip install --no-index --find-links "$PARITY_URL/ci/" parity-dashboard-ci
    PARITY_URL=https://parity.example.org PARITY_PROJECT=pytorch-xla PARITY_TOKEN=... \
        parity-ci mcp

The token is a user's (``manage.py create_user_token``: the user's roles decide what it reads
and whether it may triage) or the project's upload token. It talks to parity over HTTP only,
through ``parity_ci.Client``, as every other command does.

This module is served and packed beside ``parity_ci.py`` for Python 3.8 too: the MCP SDK is
imported, and the tools' annotations evaluated, only when the server starts.
"""

import argparse
import datetime
import json
from typing import Any, List, Optional

import parity_ci

SERVER_NAME = "parity"
INSTALL_HINT = (
    "parity-ci mcp needs the MCP Python SDK (Python 3.10 or newer): pip install 'mcp~=2.3'"
)
# A model reads every item it is given: a smaller first page than `query`'s, and `truncated`
# says when to ask for more.
MCP_LIMIT = 100
INSTRUCTIONS = (
    "parity tracks test parity across hardware backends: each backend's gaps (tests that pass "
    "on the reference backend but fail, skip or are missing here), the exemptions (triages) "
    "that track or excuse them, and each CI run's verdict. The tools answer with the documents "
    "of `parity-ci query --json` (docs/query.md); `truncated` true means raise `limit`. "
    "exemption_propose creates an exemption as the token's user: only with the triage role."
)
PROPOSE_KINDS = ("tracked", "intended", "quarantine")


def query_read(client: parity_ci.Client, kind: str, limit: int, **options: Any) -> dict:
    """``parity-ci query <kind> --json``'s document, from the same functions."""
    args = argparse.Namespace(
        kind=kind,
        backend=options.get("backend") or None,
        state=options.get("state") or None,
        q=options.get("q") or None,
        run=options.get("run"),
        untracked=bool(options.get("untracked")),
        history=options.get("history") or None,
        name=options.get("name") or None,
        limit=limit,
        page_size=parity_ci.QUERY_PAGE,
    )
    return parity_ci.query_document(client, args)


def exemption_body(
    *,
    kind: str,
    reason: str,
    issue: Optional[str],
    pattern: Optional[str],
    test_id: Optional[int],
    gap: Optional[int],
    backends: Optional[List[str]],
    expires: Optional[str],
) -> dict:
    """The triage API's request (``POST .../triage/``) for a proposed exemption, in the names
    of the exemptions items; the server checks it as it checks the dashboard's form."""
    if kind not in PROPOSE_KINDS:
        raise parity_ci.ConfigError(f"kind must be one of {', '.join(PROPOSE_KINDS)}")
    if not reason.strip():
        raise parity_ci.ConfigError("say why in 'reason': reviewers read it beside the issue")
    if expires:
        try:
            datetime.date.fromisoformat(expires)
        except ValueError:
            raise parity_ci.ConfigError(
                f"'expires' {expires!r} is not a day (YYYY-MM-DD)"
            ) from None
    body = {
        "kind": kind,
        "match": pattern,
        "test": test_id,
        "gap": gap,
        "backends": list(backends or []),
        "issue_url": issue,
        "note": reason,
        "expires_on": expires,
    }
    return {field: value for field, value in body.items() if value not in (None, "")}


def exemption_create(client: parity_ci.Client, body: dict) -> dict:
    """Create the exemption as the token's principal; the new item as ``exemptions`` lists it,
    with ``created_by``."""
    answer = client.request(
        "POST",
        client._project_path("triage/"),
        body=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json"},
    ).json()
    return {**parity_ci.query_exemption(answer), "created_by": answer.get("created_by")}


def server_build(client: parity_ci.Client) -> Any:
    """The MCP server and its tools, each a thin call of the functions above."""
    try:
        from typing import Annotated, Literal

        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import CallToolResult, TextContent, ToolAnnotations
        from pydantic import Field
    except ImportError:
        raise parity_ci.ConfigError(INSTALL_HINT) from None

    server = MCPServer(SERVER_NAME, version=parity_ci.__version__, instructions=INSTRUCTIONS)
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def answered(read: Any, *args: Any, **options: Any) -> CallToolResult:
        """The document as the structured result, as is (the SDK would wrap a dict in
        ``result``), and as its JSON text for clients that read only text."""
        try:
            document = read(*args, **options)
        except parity_ci.ParityError as exc:  # the model reads the message and may retry
            raise ToolError(str(exc)) from None
        text = json.dumps(document, indent=1)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=document
        )

    Backend = Annotated[Optional[str], Field(description="a backend's name, e.g. tpu")]
    Text = Annotated[Optional[str], Field(description="text the test ID holds (no case)")]
    Limit = Annotated[int, Field(ge=0, description="at most this many items; 0: every one")]

    @server.tool(annotations=reads)
    def gaps(
        backend: Backend = None,
        state: Annotated[
            Optional[str], Field(description="failed, error, skipped, missing, crashed...")
        ] = None,
        untracked: Annotated[
            bool, Field(description="only the gaps no issue tracks and no triage intends")
        ] = False,
        history: Annotated[
            Optional[Literal["flaky", "broken"]],
            Field(
                description="only tests in this state from history on their backend: flaky "
                "(flips over its window of runs) or broken (its newest runs all failed)"
            ),
        ] = None,
        q: Text = None,
        limit: Limit = MCP_LIMIT,
    ) -> CallToolResult:
        """Open gaps: tests that pass on the reference backend but not on a backend, with their
        state, reason, tracking (untracked, tracked, intended, flaky), state from history
        (flaky, broken or empty), issues and code owners."""
        return answered(
            query_read, client, "gaps", limit, backend=backend, state=state, q=q,
            untracked=untracked, history=history,
        )  # fmt: skip

    @server.tool(annotations=reads)
    def exemptions(
        backend: Annotated[
            Optional[str], Field(description="those that apply to this backend")
        ] = None,
        state: Annotated[
            Optional[str], Field(description="of this kind: tracked, intended, quarantine")
        ] = None,
        q: Annotated[
            Optional[str], Field(description="text its pattern, skip reason or note holds")
        ] = None,
        limit: Limit = MCP_LIMIT,
    ) -> CallToolResult:
        """The project's exemptions (triages), newest first: the test or pattern, the kind, why,
        the issue that tracks it, the backends, expiry, and whether it is stale."""
        return answered(query_read, client, "exemptions", limit, backend=backend, state=state, q=q)

    @server.tool(annotations=reads)
    def verdict(
        run: Annotated[int, Field(description="the run's id, as an upload prints it")],
        limit: Limit = MCP_LIMIT,
    ) -> CallToolResult:
        """A CI run's verdict: ok (no untracked gap opened, no coverage drop), its health and
        what to rerun, the gaps it opens (untracked first) and how many it closes."""
        return answered(query_read, client, "verdict", limit, run=run)

    @server.tool(annotations=reads)
    def tests(q: Text = None, limit: Limit = MCP_LIMIT) -> CallToolResult:
        """Tests by canonical ID (the server searches): their id, ID and test file."""
        return answered(query_read, client, "tests", limit, q=q)

    @server.tool(annotations=reads)
    def targets(backend: Backend = None, limit: Limit = MCP_LIMIT) -> CallToolResult:
        """Targets: a score to reach on a backend by a date, with the published and steering
        figures, the tests to go, the rate, the forecast date (null: no progress or met) and
        whether it is at risk."""
        return answered(query_read, client, "targets", limit, backend=backend)

    @server.tool(annotations=reads)
    def suites(backend: Backend = None, limit: Limit = MCP_LIMIT) -> CallToolResult:
        """Suites × backends, one item per cell: whether the suite runs there at all (ran,
        failed_to_run, stale, pending, never_ran, excluded, with the exclusion's reason and
        issue), its tier (blocking, informing, broken), its last run, and the health of its
        last runs (greens, pass rate, timeouts, greens in a row)."""
        return answered(query_read, client, "suites", limit, backend=backend)

    @server.tool(annotations=reads)
    def compare(
        name: Annotated[
            Optional[str], Field(description="a compare view's name; none: the views")
        ] = None,
        state: Annotated[
            Optional[
                Literal[
                    "extreme",
                    "regressed",
                    "missing_sample",
                    "missing_basis",
                    "no_difference",
                    "improved",
                ]
            ],
            Field(description="with name: only the tests in this state"),
        ] = None,
        limit: Limit = MCP_LIMIT,
    ) -> CallToolResult:
        """Compare views: a sample variant's pass rates judged against a basis variant's by
        Fisher's exact test. Without name, the views and their settings; with name, the view's
        report: each test's state (extreme, regressed, missing_sample, missing_basis,
        no_difference, improved), its passes and failures on each side, the p-value and the
        sentence saying why, worst state first."""
        return answered(query_read, client, "compare", limit, name=name, state=state)

    @server.tool(annotations=reads)
    def transitions(backend: Backend = None, limit: Limit = MCP_LIMIT) -> CallToolResult:
        """Version transitions, newest first: each time a backend's current run moved to a run
        of other attributes (e.g. rocm 7.1 -> 7.14), the two runs, what changed, how many tests
        went fail_to_pass, pass_to_fail, new and gone, and the conditioned exemptions whose
        condition stopped or started holding (lapses)."""
        return answered(query_read, client, "transitions", limit, backend=backend)

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False
        )
    )
    def exemption_propose(
        kind: Annotated[
            Literal["tracked", "intended", "quarantine"],
            Field(
                description="tracked: an issue tracks the failure; intended: the backend "
                "differs by design; quarantine: flaky, CI runs it but does not gate on it"
            ),
        ],
        reason: Annotated[str, Field(description="why, in a sentence a reviewer reads")],
        issue: Annotated[
            Optional[str], Field(description="the issue's URL (tracked and quarantine need one)")
        ] = None,
        gap: Annotated[
            Optional[int], Field(description="a gap's id: its test on its backend")
        ] = None,
        test_id: Annotated[Optional[int], Field(description="a test's id")] = None,
        pattern: Annotated[
            Optional[str],
            Field(description="a test ID, a file (test/test_ops.py) or a glob (test/spmd/**)"),
        ] = None,
        backends: Annotated[
            Optional[List[str]], Field(description="backend names; none: every backend")
        ] = None,
        expires: Annotated[
            Optional[str], Field(description="YYYY-MM-DD: after this day it no longer applies")
        ] = None,
    ) -> CallToolResult:
        """Propose an exemption for one gap, test or pattern: it is created at once as the
        token's user, checked as the dashboard checks it, and applies to the next CI runs.
        Only a user with the triage role (a maintainer) may; anyone else is refused."""
        try:
            body = exemption_body(
                kind=kind, reason=reason, issue=issue, pattern=pattern, test_id=test_id,
                gap=gap, backends=backends, expires=expires,
            )  # fmt: skip
        except parity_ci.ParityError as exc:
            raise ToolError(str(exc)) from None
        return answered(exemption_create, client, body)

    return server


def serve(client: parity_ci.Client) -> int:
    """Answer MCP requests on standard input until it closes."""
    server = server_build(client)
    client.log(f"MCP server for {client.project or '?'} at {client.url} on standard input")
    server.run("stdio")
    return parity_ci.EXIT_OK
