"""``parity_ci.py query gaps`` and the MCP ``gaps`` tool with states from history
(docs/query.md, docs/history-states.md): ``--history`` asks the server for the gaps of flaky or
broken tests, each item carries its ``history``, and a gap the list reports flaky (its
standing's triage) is tracked as flaky. Against a stand-in for the server: the fields, not the
stack (``test_query`` runs the stack)."""

import argparse
import json

import parity_ci
import pytest


class _Answer:
    def __init__(self, body: dict) -> None:
        self.body = body

    def json(self) -> dict:
        return self.body


class _Server:
    """Answers the gaps list with ``gaps``, and keeps each query it was sent."""

    project = "pytorch-xla"

    def __init__(self, gaps: list[dict]) -> None:
        self.gaps, self.asked = gaps, []

    def _project_path(self, rest: str) -> str:
        return f"/api/v1/projects/{self.project}/{rest}"

    def request(self, method: str, path: str, *, query=None, **_kw) -> _Answer:
        self.asked.append(dict(query or {}))
        wanted = (query or {}).get("history")
        found = [g for g in self.gaps if not wanted or g.get("history") == wanted]
        return _Answer({"count": len(found), "results": found})


def _gap(test: str, history: str, triage: str) -> dict:
    return {
        "id": len(test), "test": test, "test_id": 1, "backend": "tpu", "state": "failed",
        "reason": None, "triage": None, "standing": {"triage": triage}, "history": history,
    }  # fmt: skip


GAPS = [
    _gap("t::broken", "broken", "untracked"),
    _gap("t::flaky", "flaky", "flaky"),
    _gap("t::plain", "", "untracked"),
]


def _args(**options) -> argparse.Namespace:
    base = dict(kind="gaps", backend=None, state=None, q=None, run=None, untracked=False)
    return argparse.Namespace(**{**base, "history": None, "limit": 0, "page_size": 50, **options})


def test_gaps_carry_their_history_and_a_flaky_one_is_tracked_as_flaky():
    document = parity_ci.query_document(_Server(GAPS), _args())
    items = {i["test"]: (i["history"], i["tracking"]) for i in document["items"]}
    assert items == {
        "t::broken": ("broken", "untracked"),  # broken is no triage
        "t::flaky": ("flaky", "flaky"),
        "t::plain": ("", "untracked"),
    }
    lines = parity_ci.query_lines(document)
    assert any("untracked (broken)" in line and "t::broken" in line for line in lines)


@pytest.mark.parametrize("state", ["flaky", "broken"])
def test_history_asks_the_server_for_those_gaps(state):
    server = _Server(GAPS)
    document = parity_ci.query_document(server, _args(history=state))
    assert {q.get("history") for q in server.asked} == {state}
    assert [i["history"] for i in document["items"]] == [state]


def test_only_gaps_take_history():
    with pytest.raises(parity_ci.ConfigError, match="takes no --history"):
        parity_ci.query_document(_Server(GAPS), _args(kind="tests", history="flaky"))


def test_the_command_line_takes_history(monkeypatch, capsys):
    seen = {}

    def answered(client, args):
        seen["history"] = args.history
        return {"kind": "gaps", "project": "p", "count": 0, "items": []}

    monkeypatch.setattr(parity_ci, "query_document", answered)
    code = parity_ci.main(
        ["query", "gaps", "--history", "broken", "--json", "--url", "http://127.0.0.1:1",
         "--project", "p", "--token", "x"],
        env={},
    )  # fmt: skip
    assert code == 0 and seen == {"history": "broken"}
    assert json.loads(capsys.readouterr().out)["kind"] == "gaps"
