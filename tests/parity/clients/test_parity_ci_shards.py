"""What the client sends and says for a sharded job, without a server: the run key its split is
pinned under (``run`` and ``files``), the shard its verdict is asked for, and the scope line."""

import parity_ci
import pytest


class Recording(parity_ci.Client):
    """A client that answers from memory and records what it was asked."""

    def __init__(self) -> None:
        super().__init__(url="http://127.0.0.1:9", token="t", project="p")
        self.asked: list[tuple[str, dict]] = []

    def manifest(self, backend, *, etag=None, attributes=None, run=""):
        self.asked.append(("manifest", {"backend": backend, "run": run}))
        split = {"run": run, "pinned_at": "2026-12-06T10:00:00Z"} if run else None
        return {"files": ["a.py", "b.py", "c.py"], "durations": {}, "split": split}


@pytest.fixture
def recording(monkeypatch):
    client = Recording()
    monkeypatch.setattr(parity_ci, "client_from_args", lambda args, env: client)
    return client


def test_files_of_a_shard_pins_the_split_under_the_ci_run(recording, capsys):
    env = {"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "41", "PARITY_BACKEND": "tpu"}
    assert parity_ci.main(["files", "--shard", "1/2"], env=env) == 0

    assert recording.asked == [("manifest", {"backend": "tpu", "run": "41-tpu"})]
    assert "the split of run 41-tpu as pinned at" in capsys.readouterr().err


def test_files_without_a_shard_pins_nothing(recording):
    env = {"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "41", "PARITY_BACKEND": "tpu"}
    assert parity_ci.main(["files"], env=env) == 0
    assert recording.asked == [("manifest", {"backend": "tpu", "run": ""})]


def test_files_run_flag_names_the_key(recording):
    argv = ["files", "--shard", "2/2", "--run", "n-7", "--backend", "tpu"]
    assert parity_ci.main(argv, env={}) == 0
    assert recording.asked == [("manifest", {"backend": "tpu", "run": "n-7"})]


def test_the_verdict_of_a_shard_asks_for_its_scope(monkeypatch):
    asked = {}

    def request(self, method, path, *, query=None, **kwargs):
        asked.update(method=method, path=path, query=query)
        raise parity_ci.ParityError("stop")

    monkeypatch.setattr(parity_ci.Client, "request", request)
    with pytest.raises(parity_ci.ParityError):
        Recording().verdict(7, shard="2/4")
    assert asked["path"] == "/api/v1/runs/7/verdict/" and asked["query"]["shard"] == "2/4"


def test_a_scoped_verdict_says_what_it_judged():
    line = parity_ci.verdict_scope({"scope": {"shard": "2/4", "files": 12}})
    assert line.startswith("shard 2/4: the run is not complete")
    assert "12 file(s) only" in line
    assert parity_ci.verdict_scope({"scope": None}) == ""
