#!/usr/bin/env python3
"""parity's CI client: upload JUnit XML, gate on the verdict, and list the test files to run.

One file, Python 3.8 or newer, standard library only: fetch it from the server it talks to
(``curl -fsSO "$PARITY_URL/ci/parity_ci.py"``) and run it.

    python parity_ci.py upload test-reports --backend tpu --complete --wait --gate
    python parity_ci.py files --backend tpu --shard 2/4      # this runner's test files
    python parity_ci.py run --backend tpu --shard 2/4 --timeout 1800 --complete --gate \
        -- python -m pytest {file} --junitxml={junit}       # one by one, exemptions applied
    python parity_ci.py manifest --backend tpu -o parity-manifest.json
    python parity_ci.py query gaps --backend tpu --untracked --json   # for bots: docs/query.md
    parity-ci mcp          # the same reads as an MCP server (with the MCP SDK: docs/query.md)

Settings come from ``PARITY_URL``, ``PARITY_TOKEN`` (an upload token of the project) and
``PARITY_PROJECT`` (flags override them); ``--backend`` defaults to ``PARITY_BACKEND``. What the
run ran on goes with ``--attr key=value`` (repeatable; ``--attr arch=gfx942 --attr rocm=7.1``),
else from ``PARITY_ATTR_<KEY>`` and a few CI conventions (``ATTRIBUTE_CONVENTIONS``): it picks the
backend's variant and the conditioned exemptions that hold (docs/variants.md). With
``--oidc`` no secret is needed: the CI's OIDC ID token (GitHub Actions: requested for
``--oidc-audience``, default ``$PARITY_OIDC_AUDIENCE`` or "parity"; GitLab, Buildkite: given in
``PARITY_OIDC_TOKEN``) is exchanged for a short-lived upload token of the project, which a trust
rule on the server allows; where the job has none (a pull request from a fork), the client says
so and uses ``PARITY_TOKEN`` if set. On
GitHub Actions, GitLab CI and Buildkite, the commit, branch, run and CI URL come from the CI's
own variables when their flags are absent; elsewhere from ``git``.

Exit codes: 0 done (and the verdict is ok, with --gate); 1 the verdict is not ok (--gate);
2 bad usage or settings; 3 the token was refused (401) or belongs to another project (403);
4 the server refused the request (an unknown project or backend, a bad value); 5 the server
could not be reached (connection errors, timeouts and 5xx answers, after retries); 6 the
upload failed to ingest or did not finish in time.

Also a library for the runner integrations (``parity_pytest``, ``parity_unittest``)::

    import parity_ci
    client = parity_ci.Client.from_env()
    manifest = client.manifest("tpu")            # {"files": [...], "exemptions": [...], ...}
    exempted = client.resolve("tpu", node_ids)   # [{"index", "key", "kind", "message", ...}]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import heapq
import html
import http.client
import json
import os
import random
import re
import secrets
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Mapping, Sequence

# parity's one version literal: the server reads it from here (parity/__init__.py), the
# served wheel and the parity-dashboard-ci package (pyproject.toml beside this file) carry it, and
# --version and the User-Agent say it. Keep it a plain string literal: those read it as text.
__version__ = "0.1.0"
# The distribution's name: not `parity-ci`, which on PyPI is an unrelated project. Installed from
# the server only (pip install --no-index --find-links "$PARITY_URL/ci/" parity-dashboard-ci).
DISTRIBUTION = "parity-dashboard-ci"

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_AUTH = 3
EXIT_REJECTED = 4
EXIT_UNREACHABLE = 5
EXIT_UPLOAD_FAILED = 6
# --gate: the tests are fine, but infrastructure lost files or uploads (run health): rerun them.
EXIT_RERUN = 7

RETRIES = 5  # after the first attempt: 1 + 2 + 4 + 8 + 16 s of backoff, about half a minute
BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 30.0
REQUEST_TIMEOUT_SECONDS = 120.0
WAIT_TIMEOUT_SECONDS = 1800.0
# The server decompresses at most PARITY_MAX_XML_BYTES (by default twice this) per upload; more
# XML than this goes out as several uploads to the same run.
PART_XML_BYTES = 512 * 2**20
RESOLVE_BATCH = 100_000  # the server takes at most 200,000 tests per request
# The gaps the verdict lists (the server's default page is 1,000; a first run opens tens of
# thousands): the console table prints them, the Markdown the first SUMMARY_MAX_GAPS. The
# headline's counts and the gate are the server's, of every gap.
VERDICT_GAPS = 500
SUMMARY_MAX_GAPS = 200
ARCHIVE_SUFFIXES = (".xml.gz", ".gz", ".zip", ".tar.gz", ".tgz")
RETRY_STATUSES = (429, 500, 502, 503, 504)
OIDC_AUDIENCE = "parity"  # the server's PARITY_OIDC_AUDIENCE default


# --- Errors ---------------------------------------------------------------------------------


class ParityError(Exception):
    """Anything the client reports in one line and exits with ``exit_code`` for."""

    exit_code = EXIT_USAGE


class ConfigError(ParityError):
    """A missing setting, a bad flag or a path that holds no XML."""

    exit_code = EXIT_USAGE


class AuthError(ParityError):
    """The server refused the token (401) or it belongs to another project (403)."""

    exit_code = EXIT_AUTH
    status = 0
    detail = ""  # the server's message


class RequestRejected(ParityError):
    """The server refused the request as it stands (400, 404, 413...): an unknown project or
    backend, a bad value. Sending it again will not help."""

    exit_code = EXIT_REJECTED

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ServerUnreachable(ParityError):
    """No answer, or only 5xx answers, after every retry."""

    exit_code = EXIT_UNREACHABLE


class UploadFailed(ParityError):
    """The server took the upload but could not ingest it, or did not finish in time."""

    exit_code = EXIT_UPLOAD_FAILED


# --- HTTP -----------------------------------------------------------------------------------


class Response:
    def __init__(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # Following a redirect would turn an upload's POST into a GET; say where to point instead.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _log(message: str) -> None:
    print(f"parity: {message}", file=sys.stderr, flush=True)


class Client:
    """The parity server, as one project's CI sees it. Every method raises a ``ParityError``
    subclass with a one-line message on failure. Requests are retried on connection errors,
    timeouts and 429/5xx answers with exponential backoff; that is safe for uploads because the
    server answers a resent identical upload with the first one."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        project: str | None = None,
        *,
        retries: int = RETRIES,
        backoff: float = BACKOFF_SECONDS,
        timeout: float = REQUEST_TIMEOUT_SECONDS,
        log: Callable[[str], None] = _log,
    ) -> None:
        if not url:
            raise ConfigError(
                "set PARITY_URL (or --url) to the parity server, e.g. https://parity.example.org"
            )
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"PARITY_URL must start with http:// or https:// (got {url!r})")
        self.url = url.rstrip("/")
        self.token = token or None
        self.project = project or None
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout
        self.log = log
        self.last_etag: str | None = None  # of the last manifest answered
        self.last_version = ""  # the manifest version of the last resolve answered
        self._opener = urllib.request.build_opener(_NoRedirects())

    @classmethod
    def from_env(
        cls,
        url: str | None = None,
        token: str | None = None,
        project: str | None = None,
        env: Mapping[str, str] | None = None,
        **options: Any,
    ) -> Client:
        """A client from the arguments given, else ``PARITY_URL``, ``PARITY_TOKEN`` and
        ``PARITY_PROJECT``."""
        env = os.environ if env is None else env
        return cls(
            url or env.get("PARITY_URL", ""),
            token or env.get("PARITY_TOKEN") or None,
            project or env.get("PARITY_PROJECT") or None,
            **options,
        )

    # --- the API ---

    def manifest(
        self,
        backend: str,
        *,
        etag: str | None = None,
        attributes: Mapping[str, str] | None = None,
        run: str = "",
    ) -> dict | None:
        """The backend's manifest: ``files`` to run, ``exemptions``, ``durations``... With
        ``etag`` (a previous answer's ``ETag``), None when it has not changed. The answer's
        ETag is kept in ``self.last_etag``. ``attributes``: the run's (its variant's list, the
        conditioned exemptions that hold for them); none: the backend's current run's. ``run``:
        the run key the shards upload under: the files and durations are those the server
        first answered under it, so every shard of the run splits the same list."""
        headers = {"If-None-Match": etag} if etag else {}
        query: list[tuple[str, str]] = [("backend", backend)]
        query += [("attr", f"{key}={value}") for key, value in (attributes or {}).items()]
        if run:
            query.append(("run", run))
        response = self.request(
            "GET", self._project_path("manifest/"), query=query, headers=headers
        )
        self.last_etag = response.headers.get("ETag")
        if response.status == 304:
            return None
        return response.json()

    def resolve(
        self,
        backend: str,
        tests: Sequence[object],
        *,
        attributes: Mapping[str, str] | None = None,
    ) -> list[dict]:
        """The items of ``tests`` (pytest node IDs, unittest IDs, or ``{"classname", "name",
        "file"}`` objects) that an exemption of ``backend`` names, each as ``{"index", "test",
        "key", "kind", "message", "triage"}``; ``index`` is the item's position in ``tests``.
        ``attributes`` as for ``manifest``."""
        exempted: list[dict] = []
        for start in range(0, len(tests), RESOLVE_BATCH):
            batch = list(tests[start : start + RESOLVE_BATCH])
            sent: dict[str, Any] = {"backend": backend, "tests": batch}
            if attributes:
                sent["attributes"] = dict(attributes)
            body = json.dumps(sent).encode("utf-8")
            answer = self.request(
                "POST",
                self._project_path("manifest/resolve/"),
                body=body,
                headers={"Content-Type": "application/json"},
            ).json()
            self.last_version = answer.get("version") or ""
            for item in answer["exempted"]:
                item["index"] += start
                exempted.append(item)
        return exempted

    def upload(
        self, paths: Sequence[str], request: UploadRequest, *, run_manifest: dict | None = None
    ) -> list[dict]:
        """Send the XML under ``paths`` (folders are searched for ``*.xml``; ``.xml.gz``,
        ``.zip`` and ``.tar.gz`` files go as they are) and return the server's answer for each
        upload: ``{"id", "status", "run", "url", ...}``. XML is sent as a gzipped tar that keeps
        each file's folder (the server reads a test file from a folder like ``test.test_ops``
        when the XML names ``__main__``); more than ``PART_XML_BYTES`` of XML goes as several
        uploads to the same run, the last one carrying ``complete``. What the runner wrote into
        the reports fills in ``request.exemptions_version`` when unset, and ``request.probe``
        (``request_from_reports``). ``run_manifest`` (``{"files": [...]}``, see ``run_files``)
        goes with the first; with it, ``paths`` may be empty (every file crashed, or only the
        list of files expected)."""
        if not self.project:
            raise ConfigError("set PARITY_PROJECT (or --project) to the project's slug")
        if not self.token:
            raise ConfigError("set PARITY_TOKEN (or --token) to an upload token of the project")
        reports = collect_reports(paths) if paths or run_manifest is None else Reports([], [])
        request_from_reports(request, reports, self.log)
        parts = upload_parts(reports)
        if not parts:
            parts = [UploadPart([])]  # the manifest alone
        answers = []
        for number, part in enumerate(parts, start=1):
            last = number == len(parts)
            fields = request.fields(project=self.project, complete=request.complete and last)
            if run_manifest is not None and number == 1:
                fields["run_manifest"] = json.dumps(run_manifest, separators=(",", ":"))
            # Built once, spooled to disk past ``max_size``, and sent again as is on a retry.
            with tempfile.SpooledTemporaryFile(max_size=16 * 2**20) as body:
                content_type, file_size = multipart_write(body, fields, part)
                size = body.tell()
                self.log(f"uploading {part.describe(file_size)} as {request.backend} to {self.url}")
                response = self.request(
                    "POST",
                    "/api/v1/uploads/",
                    body=body,
                    headers={"Content-Type": content_type, "Content-Length": str(size)},
                )
            answer = response.json()
            known = "" if response.status == 202 else " (the server had it already)"
            self.log(f"upload {answer['id']} {answer['status']}{known}: run {answer['run']}")
            answers.append(answer)
        return answers

    def oidc_exchange(self, id_token: str) -> dict:
        """Exchange the CI's OIDC ID token for a short-lived upload token of the project, which
        this client then sends; the server's answer: ``{"token", "expires_at", "backends"...}``."""
        if not self.project:
            raise ConfigError("set PARITY_PROJECT (or --project) to the project's slug")
        try:
            response = self.request(
                "POST",
                "/api/v1/oidc/exchange/",
                body=json.dumps({"project": self.project}).encode(),
                headers={"Authorization": f"Bearer {id_token}", "Content-Type": "application/json"},
            )
        except AuthError as exc:
            raise AuthError(
                f"the server refused the OIDC token (HTTP {exc.status}: {exc.detail})"
            ) from None
        answer = response.json()
        self.token = answer["token"]
        backends = ", ".join(answer.get("backends") or []) or "every backend"
        self.log(
            f"OIDC: trust rule {answer.get('rule')} of {answer.get('project')} matched; "
            f"an upload token for {backends} until {answer.get('expires_at')}"
        )
        return answer

    def upload_status(self, upload_id: int) -> dict:
        return self.request("GET", f"/api/v1/uploads/{upload_id}/").json()

    def upload_wait(
        self, upload_id: int, *, timeout: float = WAIT_TIMEOUT_SECONDS, interval: float = 1.0
    ) -> dict:
        """Poll the upload until it is done; raise ``UploadFailed`` if it failed or is still
        pending after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            upload = self.upload_status(upload_id)
            if upload["status"] == "done":
                return upload
            if upload["status"] == "failed":
                raise UploadFailed(f"upload {upload_id} failed: {upload.get('error') or '?'}")
            if time.monotonic() > deadline:
                raise UploadFailed(
                    f"upload {upload_id} is still {upload['status']} after {timeout:.0f} s "
                    f"({self.url}/api/v1/uploads/{upload_id}/)"
                )
            time.sleep(interval)
            interval = min(interval * 1.5, 5.0)

    def run_complete(self, run_id: int) -> dict:
        return self.request("POST", f"/api/v1/runs/{run_id}/complete/").json()

    def verdict(self, run_id: int, *, gaps: int = VERDICT_GAPS, shard: str = "") -> dict:
        """The run's verdict with its first ``gaps`` opened gaps, untracked first (``ok`` and
        the counts are of every one). ``shard`` ("2/4"): as that shard gates on it, judged on
        the shard's files until the run is complete (``scope`` says so)."""
        path = f"/api/v1/runs/{run_id}/verdict/"
        query = {"gaps_limit": str(gaps), **({"shard": shard} if shard else {})}
        return self.request("GET", path, query=query).json()

    def parity(self, *, files: bool = True) -> dict:
        """The project's parity; without ``files``, the backends' numbers alone (a server
        older than ``?files=0`` sends the files anyway)."""
        query = None if files else {"files": "0"}
        return self.request("GET", self._project_path("parity/"), query=query).json()

    def dashboard_url(self, page: str = "", **query: str) -> str:
        """A page of the project on the dashboard: ``gaps/``, ``runs/``, ``file/``..."""
        slug = urllib.parse.quote(self.project or "", safe="")
        encoded = urllib.parse.urlencode({k: v for k, v in query.items() if v})
        return f"{self.url}/p/{slug}/{page}" + (f"?{encoded}" if encoded else "")

    # --- plumbing ---

    def _project_path(self, rest: str) -> str:
        if not self.project:
            raise ConfigError("set PARITY_PROJECT (or --project) to the project's slug")
        return f"/api/v1/projects/{urllib.parse.quote(self.project, safe='')}/{rest}"

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
        body: bytes | IO[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """Send a request, retrying what may pass, and return a 2xx or 304 answer; raise the
        matching ``ParityError`` for anything else."""
        url = self.url + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        sent = {"Accept": "application/json", "User-Agent": f"parity-ci/{__version__}"}
        if self.token:
            sent["Authorization"] = f"Token {self.token}"
        sent.update(headers or {})
        attempts = self.retries + 1
        for attempt in range(1, attempts + 1):
            if hasattr(body, "seek"):
                body.seek(0)  # type: ignore[union-attr]
            try:
                response = self._send(method, url, body, sent)
            except (OSError, http.client.HTTPException) as exc:
                problem, response = _connection_problem(exc), None
                if isinstance(_reason(exc), ssl.SSLCertVerificationError) or attempt == attempts:
                    raise ServerUnreachable(
                        f"cannot reach {self.url} ({problem}) after {attempt} attempt(s); "
                        "check PARITY_URL and the network"
                    ) from None
            else:
                if response.status < 300 or response.status == 304:
                    return response
                if response.status not in RETRY_STATUSES or attempt == attempts:
                    raise _refusal(response, method=method, url=url, attempts=attempt)
                problem = f"HTTP {response.status}"
            delay = self._delay(attempt, response)
            self.log(
                f"{method} {path}: {problem} (attempt {attempt} of {attempts}); "
                f"retrying in {delay:.1f} s"
            )
            time.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _send(
        self, method: str, url: str, body: bytes | IO[bytes] | None, headers: Mapping[str, str]
    ) -> Response:
        request = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
        try:
            with self._opener.open(request, timeout=self.timeout) as answer:
                return Response(answer.status, answer.headers, answer.read())
        except urllib.error.HTTPError as exc:
            return Response(exc.code, exc.headers, exc.read())

    def _delay(self, attempt: int, response: Response | None) -> float:
        retry_after = response.headers.get("Retry-After") if response is not None else None
        if retry_after and retry_after.isdigit():
            return min(float(retry_after), MAX_BACKOFF_SECONDS)
        delay = min(self.backoff * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS)
        # Jitter, so the shards of one CI run that failed together do not retry together.
        return delay * random.uniform(1.0, 1.25)


def _reason(exc: BaseException) -> object:
    return getattr(exc, "reason", None)


def _connection_problem(exc: BaseException) -> str:
    reason = _reason(exc)
    cause = reason if isinstance(reason, BaseException) else exc
    return getattr(cause, "strerror", None) or str(cause) or type(cause).__name__


def _detail(response: Response) -> str:
    """The server's message: DRF's ``detail``, or its field errors, or the start of the body."""
    try:
        body = response.json()
    except ValueError:
        text = response.body.decode("utf-8", "replace").strip()
        return text[:300] if text and not text.lstrip().startswith("<") else ""
    if isinstance(body, dict) and "detail" in body:
        return str(body["detail"])
    if isinstance(body, dict):
        return "; ".join(
            f"{field}: {' '.join(map(str, errors)) if isinstance(errors, list) else errors}"
            for field, errors in body.items()
        )
    return str(body)[:300]


def _refusal(response: Response, *, method: str, url: str, attempts: int) -> ParityError:
    status = response.status
    detail = _detail(response)
    said = f": {detail}" if detail else ""
    if status in (401, 403):
        error = AuthError(
            f"the server refused the token (HTTP 401{said}): set PARITY_TOKEN to an upload "
            "token of the project (python manage.py create_upload_token <project>)"
            if status == 401
            else f"the token may not do this (HTTP 403{said})"
        )
        error.status, error.detail = status, detail
        return error
    if 300 <= status < 400:
        where = response.headers.get("Location", "?")
        return ConfigError(
            f"the server redirects {url} to {where}: set PARITY_URL to the address it redirects to"
        )
    if status >= 500 or status == 429:
        return ServerUnreachable(
            f"{method} {url} answered HTTP {status}{said} after {attempts} attempt(s)"
        )
    if status == 404 and not detail:
        detail = f"nothing at {url}: check PARITY_URL and PARITY_PROJECT"
    return RequestRejected(f"{detail or f'{method} {url}'} (HTTP {status})", status)


# --- What to upload -------------------------------------------------------------------------


class UploadRequest:
    """The form fields of an upload, besides the files."""

    def __init__(
        self,
        *,
        backend: str,
        commit: str,
        branch: str = "",
        run: str = "",
        ci_url: str = "",
        complete: bool = False,
        file_hint: str = "",
        probe: bool = False,
        exemptions_version: str = "",
        attributes: Mapping[str, str] | None = None,
        shard: str = "",
        suite: str = "",
    ) -> None:
        self.backend = backend
        self.attributes = dict(attributes or {})  # what the run ran on: arch, rocm...
        self.commit = commit
        self.branch = branch
        self.run = run
        self.ci_url = ci_url
        self.complete = complete
        self.file_hint = file_hint
        self.probe = probe  # exempted tests ran too: never current, says what passes now
        self.exemptions_version = exemptions_version  # the manifest version the run applied
        self.hw_classification = ""  # JSON the pytest plugin wrote: {"<file>::<Class>": label}
        self.shard = shard  # "2/4": the verdict names it when its files must run again
        self.suite = suite  # the suite or CI job this upload is of (docs/suites.md)

    def fields(self, *, project: str, complete: bool) -> dict[str, str]:
        fields = {
            "project": project,
            "backend": self.backend,
            "commit": self.commit,
            "branch": self.branch,
            "run": self.run,
            "ci_url": self.ci_url,
            "file_hint": self.file_hint,
            "complete": "true" if complete else "false",
            "probe": "true" if self.probe else "",
            "exemptions_version": self.exemptions_version,
            "attributes": json.dumps(self.attributes, sort_keys=True) if self.attributes else "",
            "hw_classification": self.hw_classification,
            "shard": self.shard,
            "suite": self.suite,
        }
        return {name: value for name, value in fields.items() if value}


class Reports:
    """The XML files to send, each with its name inside the archive, and archives to send as
    they are."""

    def __init__(self, xml: list[tuple[Path, str]], archives: list[Path]) -> None:
        self.xml = xml
        self.archives = archives


class UploadPart:
    """What one upload request carries: XML to tar and gzip, or one archive as it is."""

    def __init__(self, xml: list[tuple[Path, str]], archive: Path | None = None) -> None:
        self.xml = xml
        self.archive = archive

    def describe(self, size: int) -> str:
        if self.archive is None and not self.xml:
            return "the run manifest, no reports"
        if self.archive is not None:
            return f"{self.archive} ({_human_bytes(size)})"
        xml_bytes = _human_bytes(sum(path.stat().st_size for path, _ in self.xml))
        return f"{len(self.xml)} XML file(s), {xml_bytes} ({_human_bytes(size)} as tar.gz)"


def _is_xml(name: str) -> bool:
    return name.lower().endswith(".xml") and not name.startswith("._")


def collect_reports(paths: Sequence[str]) -> Reports:
    """The ``*.xml`` files under each folder, each named ``<folder>/<path inside it>`` so the
    folder names reach the server; an XML file given by itself is named ``<its folder>/<name>``
    for the same reason. Each file once, in a stable order."""
    if not paths:
        raise ConfigError("name at least one XML file or folder to upload")
    xml: list[tuple[Path, str]] = []
    archives: list[Path] = []
    seen: set[Path] = set()

    def add(path: Path, name: str) -> None:
        real = path.resolve()
        if real not in seen:
            seen.add(real)
            xml.append((path, name))

    for raw in paths:
        path = Path(raw)
        top = path.resolve().name
        if path.is_dir():
            found = sorted(_xml_under(path))
            if not found:
                raise ConfigError(f"no .xml files under {raw}")
            for relative in found:
                add(path / relative, f"{top}/{relative}")
        elif path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES):
            archives.append(path)
        elif path.is_file() and _is_xml(path.name):
            add(path, f"{path.resolve().parent.name}/{path.name}")
        elif path.exists():
            raise ConfigError(f"{raw} is not an .xml, .xml.gz, .zip or .tar.gz file")
        else:
            raise ConfigError(f"no such file or folder: {raw}")
    return Reports(xml, archives)


# What the pytest plugin and the unittest runner write into their JUnit XML (testsuite
# properties, near the top of the file): the exemption list they applied, and a probe.
PROPERTY_VERSION = "parity_exemptions_version"
PROPERTY_PROBE = "parity_probe"
# The test classes' hw_classification labels the pytest plugin read at collection, as JSON.
PROPERTY_HW_CLASSIFICATION = "parity_hw_classification"
_PROPERTY = re.compile(rb'<property name="(parity_[a-z_]+)" value="([^"]*)"')
PROPERTY_SCAN_BYTES = 1024 * 1024


def reports_applied(reports: Reports) -> dict[str, str]:
    """The parity properties the runners wrote into the XML files (the first of each name);
    archives are not opened."""
    found: dict[str, str] = {}
    for path, _ in reports.xml:
        with path.open("rb") as xml:
            head = xml.read(PROPERTY_SCAN_BYTES)
        for name, value in _PROPERTY.findall(head):
            found.setdefault(name.decode(), html.unescape(value.decode("utf-8", "replace")))
    return found


def request_from_reports(request: UploadRequest, reports: Reports, log: Callable) -> None:
    """Fill in what the runner applied when the flags did not say: the exemption list's
    version, whether it was a probe (which must never be uploaded as a plain run), and the
    classes' hw_classification labels."""
    applied = reports_applied(reports)
    if not request.exemptions_version:
        request.exemptions_version = applied.get(PROPERTY_VERSION, "")
    if not request.hw_classification:
        request.hw_classification = applied.get(PROPERTY_HW_CLASSIFICATION, "")
    if applied.get(PROPERTY_PROBE) == "true" and not request.probe:
        log("the reports come from a probe (exempted tests ran): uploading them as a probe run")
        request.probe = True


def _xml_under(folder: Path) -> Iterable[str]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__MACOSX"]
        relative = Path(root).relative_to(folder)
        for name in files:
            if _is_xml(name):
                yield (relative / name).as_posix()


def upload_parts(reports: Reports, *, part_bytes: int = PART_XML_BYTES) -> list[UploadPart]:
    parts: list[UploadPart] = []
    current: list[tuple[Path, str]] = []
    size = 0
    for path, name in reports.xml:
        file_size = path.stat().st_size
        if current and size + file_size > part_bytes:
            parts.append(UploadPart(current))
            current, size = [], 0
        current.append((path, name))
        size += file_size
    if current:
        parts.append(UploadPart(current))
    parts.extend(UploadPart([], archive) for archive in reports.archives)
    return parts


def write_tar_gz(members: Sequence[tuple[Path, str]], out: IO[bytes]) -> None:
    """A gzipped tar of the files, byte for byte the same for the same files: no times, owners
    or temporary names inside, so a resent upload is recognized by its checksum."""
    zipped = gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=6, mtime=0)
    with zipped, tarfile.open(fileobj=zipped, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for path, name in members:
            info = tarfile.TarInfo(name)
            info.size = path.stat().st_size
            info.mode = 0o644
            with path.open("rb") as source:
                tar.addfile(info, source)


def multipart_write(out: IO[bytes], fields: Mapping[str, str], part: UploadPart) -> tuple[str, int]:
    """Write the request body to ``out``; return its content type and the file's size."""
    boundary = f"parity-ci-{uuid.uuid4().hex}"
    for name, value in fields.items():
        out.write(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            + value.encode("utf-8")
            + b"\r\n"
        )
    if part.archive is None and not part.xml:
        out.write(f"--{boundary}--\r\n".encode())
        return f"multipart/form-data; boundary={boundary}", 0
    filename = part.archive.name if part.archive is not None else "test-reports.tar.gz"
    quoted = filename.replace("\\", "_").replace('"', "_")
    out.write(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{quoted}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode()
    )
    start = out.tell()
    if part.archive is not None:
        with part.archive.open("rb") as source:
            shutil.copyfileobj(source, out)
    else:
        write_tar_gz(part.xml, out)
    file_size = out.tell() - start
    out.write(f"\r\n--{boundary}--\r\n".encode())
    return f"multipart/form-data; boundary={boundary}", file_size


# --- Where this run comes from --------------------------------------------------------------


def _commands_stopped(env: Mapping[str, str]) -> str:
    """In GitHub Actions, stop the runner reading workflow commands in what follows; returns the
    line that resumes them ("" elsewhere)."""
    if env.get("GITHUB_ACTIONS") != "true":
        return ""
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", flush=True)
    return f"::{token}::"


def ci_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``commit``, ``branch``, ``run`` and ``ci_url`` from GitHub Actions', GitLab CI's or
    Buildkite's variables (whichever is set), empty strings where unknown."""
    if env.get("GITHUB_ACTIONS") == "true":
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        run_id = env.get("GITHUB_RUN_ID", "")
        repository = env.get("GITHUB_REPOSITORY", "")
        return {
            "commit": _github_head_sha(env) or env.get("GITHUB_SHA", ""),
            # A pull request's source branch; GITHUB_REF_NAME would be "<number>/merge".
            "branch": env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME", ""),
            "run": run_id,
            "ci_url": f"{server}/{repository}/actions/runs/{run_id}"
            if run_id and repository
            else "",
        }
    if env.get("GITLAB_CI") == "true":
        return {
            "commit": env.get("CI_COMMIT_SHA", ""),
            "branch": env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME")
            or env.get("CI_COMMIT_BRANCH")
            or env.get("CI_COMMIT_REF_NAME", ""),
            "run": env.get("CI_PIPELINE_ID", ""),
            "ci_url": env.get("CI_PIPELINE_URL", ""),
        }
    if env.get("BUILDKITE") == "true":
        commit = env.get("BUILDKITE_COMMIT", "")
        return {
            "commit": "" if commit == "HEAD" else commit,
            "branch": env.get("BUILDKITE_BRANCH", ""),
            "run": env.get("BUILDKITE_BUILD_ID", ""),
            "ci_url": env.get("BUILDKITE_BUILD_URL", ""),
        }
    return {"commit": "", "branch": "", "run": "", "ci_url": ""}


def _github_head_sha(env: Mapping[str, str]) -> str:
    """On a pull request, GITHUB_SHA is a merge commit nobody pushed; the event names the
    commit of the branch."""
    if not env.get("GITHUB_EVENT_NAME", "").startswith("pull_request"):
        return ""
    try:
        with open(env.get("GITHUB_EVENT_PATH", ""), encoding="utf-8") as event:
            return str(json.load(event)["pull_request"]["head"]["sha"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _git(*args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def upload_request(args: argparse.Namespace, env: Mapping[str, str]) -> UploadRequest:
    """Flags first, then the CI's variables, then ``git``; the run key is the CI's run id and
    the backend, so every shard of one CI run lands in one parity run."""
    ci = ci_environment(env)
    commit = args.commit or ci["commit"] or _git("rev-parse", "HEAD")
    if not commit:
        raise ConfigError("no commit: pass --commit (not in a CI or a git checkout)")
    branch = args.branch or ci["branch"]
    if not branch and not args.commit:
        head = _git("rev-parse", "--abbrev-ref", "HEAD")
        branch = "" if head == "HEAD" else head
    run = args.run or (f"{ci['run']}-{args.backend}" if ci["run"] else "")
    return UploadRequest(
        backend=args.backend,
        commit=commit,
        branch=branch,
        run=run,
        ci_url=args.ci_url or ci["ci_url"],
        complete=args.complete,
        file_hint=args.file_hint or "",
        probe=args.probe,
        exemptions_version=args.exemptions_version or "",
        attributes=run_attributes(args.attr, env),
        shard=getattr(args, "shard", None) or "",
        suite=run_suite(getattr(args, "suite", None), env),
    )


# CI variables that name the suite or job an upload is of, by a convention, the most specific
# first: PyTorch's TEST_CONFIG ("default", "distributed") runs inside a GitHub job whose name
# says less. PARITY_SUITE wins over them, and --suite over all.
SUITE_CONVENTIONS = ("PARITY_SUITE", "TEST_CONFIG", "GITHUB_JOB", "CI_JOB_NAME")
SUITE_MAX_CHARS = 200


def run_suite(flag: str | None, env: Mapping[str, str]) -> str:
    """The suite an upload names: ``--suite``, else the first CI variable of
    ``SUITE_CONVENTIONS`` that is set, else none."""
    for value in (flag, *(env.get(name) for name in SUITE_CONVENTIONS)):
        if value and value.strip():
            return value.strip()[:SUITE_MAX_CHARS]
    return ""


# --- Attributes -----------------------------------------------------------------------------

# CI variables that say an attribute by a convention: (variable, attribute). PARITY_ATTR_<KEY>
# wins over them, and --attr over both. PYTORCH_ROCM_ARCH counts only when it names one arch
# (a build for several says nothing about the machine the tests ran on).
ATTRIBUTE_CONVENTIONS = (
    ("PYTORCH_ROCM_ARCH", "arch"),
    ("ROCM_VERSION", "rocm"),
    ("CUDA_VERSION", "cuda"),
)
ATTRIBUTE_PREFIX = "PARITY_ATTR_"
_ATTRIBUTE_KEY = re.compile(r"[a-z][a-z0-9_.-]{0,49}")


def env_attributes(env: Mapping[str, str]) -> dict[str, str]:
    """The attributes CI's variables say: the conventions, then ``PARITY_ATTR_<KEY>=value``
    (``PARITY_ATTR_ROCM=7.1``: rocm=7.1; the key is the rest of the name, lowercased)."""
    found = {}
    for variable, key in ATTRIBUTE_CONVENTIONS:
        value = env.get(variable, "").strip()
        if value and not re.search(r"[;,\s]", value):
            found[key] = value
    for variable, value in sorted(env.items()):
        if variable.startswith(ATTRIBUTE_PREFIX) and value.strip():
            found[variable[len(ATTRIBUTE_PREFIX) :].lower()] = value.strip()
    return found


def attributes_parse(pairs: Sequence[str] | None) -> dict[str, str]:
    """``--attr key=value`` flags as attributes; a bad one is a ``ConfigError`` naming it."""
    found = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not _ATTRIBUTE_KEY.fullmatch(key) or not value:
            raise ConfigError(
                f"--attr {pair!r}: write key=value, the key in lowercase letters, digits, "
                "'_', '.', '-' (e.g. --attr arch=gfx942)"
            )
        found[key] = value
    return found


def run_attributes(pairs: Sequence[str] | None, env: Mapping[str, str]) -> dict[str, str]:
    """The run's attributes: CI's variables (``env_attributes``), the ``--attr`` flags over
    them."""
    return {**env_attributes(env), **attributes_parse(pairs)}


def attributes_env(attributes: Mapping[str, str]) -> dict[str, str]:
    """``attributes`` as ``PARITY_ATTR_<KEY>`` variables, for a child process to read back."""
    return {ATTRIBUTE_PREFIX + key.upper(): value for key, value in attributes.items()}


# --- Shards ---------------------------------------------------------------------------------


def split_into_shards(
    files: Sequence[str], durations: Mapping[str, float], count: int
) -> list[list[str]]:
    """``files`` in ``count`` shards of about equal time: longest first onto the lightest shard
    (ties: the one with fewer files, then the lower shard number, so files a run timed at zero
    spread instead of piling onto shard 1). A file with no known duration counts as the median
    of the known ones (1 s when none is known). The same input always gives the same shards;
    each is sorted by path."""
    if count < 1:
        raise ConfigError(f"the number of shards must be at least 1 (got {count})")
    known = [float(durations[f]) for f in files if durations.get(f) is not None]
    default = statistics.median(known) if known else 1.0
    weight = {f: float(durations[f]) if durations.get(f) is not None else default for f in files}
    shards: list[list[str]] = [[] for _ in range(count)]
    lightest = [(0.0, 0, index) for index in range(count)]  # (seconds, files, shard), a heap
    for file in sorted(set(files), key=lambda f: (-weight[f], f)):
        seconds, held, index = heapq.heappop(lightest)
        shards[index].append(file)
        heapq.heappush(lightest, (seconds + weight[file], held + 1, index))
    return [sorted(shard) for shard in shards]


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` → ``(2, 4)``: the second of four shards (numbered from 1)."""
    try:
        number, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ConfigError(f"--shard takes I/N, e.g. 2/4 (got {text!r})") from None
    if not 1 <= number <= count:
        raise ConfigError(f"--shard {text}: I must be between 1 and N")
    return number, count


def load_manifest(path: str | os.PathLike) -> dict:
    """A manifest saved by ``parity_ci.py manifest -o FILE``."""
    try:
        with open(path, encoding="utf-8") as saved:
            manifest = json.load(saved)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the manifest {path}: {exc}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise ConfigError(f"{path} is not a parity manifest (no 'files' list)")
    return manifest


def pattern_regex(pattern: str) -> re.Pattern:
    """The regular expression a manifest's ``match`` pattern stands for, over node IDs (the
    server's rules, ``parity/pure/globs.py``): a file glob (``*`` and ``?`` within one folder,
    ``**`` across folders, none across ``::``), then optionally ``::`` and a glob over the rest
    of the ID (``*`` anything, ``?`` one character). A pattern without ``::`` names whole
    files. Everything else is literal, brackets included."""
    pattern = pattern.strip()
    file_part, sep, test_part = pattern.partition("::")
    regex = _glob_regex(file_part, {"**": "[^:]*", "*": "[^/:]*", "?": "[^/:]"}) + "::"
    if sep:
        regex += _glob_regex(test_part, {"**": ".*", "*": ".*", "?": "."}) + r"\Z"
    return re.compile(regex, re.DOTALL)


def _glob_regex(glob: str, wildcards: dict[str, str]) -> str:
    return "".join(
        wildcards.get(piece) or re.escape(piece)
        for piece in re.split(r"(\*\*|\*|\?)", glob)
        if piece
    )


SKIPPING_KINDS = ("tracked", "intended", "not_applicable")  # quarantined tests run
CLIENT_DIR = Path(__file__).resolve().parent  # where the plugin and the runner sit beside it


def exemptions_summary(
    manifest: Mapping[str, Any], files: Sequence[str], *, probe: bool = False
) -> str:
    """How many of the manifest's exemptions ``run`` applies to ``files`` (a probe: runs the
    tests of): those that leave whole files out of the list, and those naming tests of
    ``files`` (the child processes resolve which tests exactly)."""
    exemptions = manifest.get("exemptions") or []
    whole = [e for e in exemptions if e.get("file_level") and e["kind"] in SKIPPING_KINDS]
    named = {f"{file}::" for file in files}
    of_tests = [
        e
        for e in exemptions
        if e not in whole
        and any(pattern_regex(e["match"].partition("::")[0]).match(f) for f in named)
    ]
    kinds = ", ".join(
        f"{sum(e['kind'] == kind for e in of_tests)} {kind}"
        for kind in ("tracked", "intended", "quarantine")
        if any(e["kind"] == kind for e in of_tests)
    )
    version = manifest.get("version") or "not given"
    verb = "probing (running the tests of)" if probe else "applying"
    return (
        f"{verb} {len(whole) + len(of_tests)} exemption(s) of {manifest.get('backend') or '?'} "
        f"(list version {version}): {len(whole)} leave whole files out, {len(of_tests)} name "
        f"tests of the {len(files)} file(s) to run here" + (f" ({kinds})" if kinds else "")
    )


def child_environment(
    env: Mapping[str, str],
    client: Client,
    *,
    backend: str,
    probe: bool,
    here: Path = CLIENT_DIR,
) -> dict[str, str]:
    """The environment each file's process runs in: the client's, plus the settings ``run``
    was given (flags included, and the token an --oidc exchange gave), so that the pytest
    plugin and the unittest runner apply the backend's exemptions. A single file's folder goes
    on ``PYTHONPATH``, for the plugin and the runner fetched beside it; the plugin is loaded by
    ``PYTEST_PLUGINS`` when it sits beside this file (fetched, or installed with it)."""
    child = dict(env)
    child.update(PARITY_URL=client.url, PARITY_BACKEND=backend)
    child.update({"PARITY_PROJECT": client.project or "", "PARITY_TOKEN": client.token or ""})
    child["PARITY_PROBE"] = "1" if probe else ""
    if here.name not in ("site-packages", "dist-packages"):  # installed: on the path already
        child["PYTHONPATH"] = os.pathsep.join(filter(None, [str(here), env.get("PYTHONPATH")]))
    if not (here / "parity_pytest.py").is_file():
        return child
    plugins = [name.strip() for name in env.get("PYTEST_PLUGINS", "").split(",") if name.strip()]
    child["PYTEST_PLUGINS"] = ",".join(dict.fromkeys([*plugins, "parity_pytest"]))
    return child


# --- Running test files one by one: the run manifest ---------------------------------------

KILL_GRACE_SECONDS = 10.0  # between SIGTERM and SIGKILL when a file runs past --timeout


def fill_command(command: Sequence[str], *, file: str, junit: str) -> list[str]:
    """``command`` with ``{file}`` and ``{junit}`` replaced in every argument."""
    return [part.replace("{file}", file).replace("{junit}", junit) for part in command]


def junit_path(folder: Path, index: int, file: str) -> Path:
    """Where file number ``index`` writes its report: one name per file, in run order."""
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in file)[-120:]
    return folder / f"{index:04d}-{stem}.xml"


def report_tests(path: Path) -> int | None:
    """How many tests the JUnit report at ``path`` holds; None when there is none, or it is not
    XML (a process killed while writing it)."""
    if not path.is_file():
        return None
    try:
        return sum(
            1 for _, element in ElementTree.iterparse(str(path)) if element.tag == "testcase"
        )
    except (ElementTree.ParseError, OSError):
        return None


def run_file(
    command: Sequence[str],
    *,
    file: str,
    junit: Path,
    timeout: float | None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run one test file's command in its own process group (so a timeout kills what it
    started too), in ``env`` (default: this process's), and return its run manifest entry."""
    if junit.exists():
        junit.unlink()  # a report left by an earlier run must not pass for this one's
    started = time.monotonic()
    timed_out = False
    # What this process wrote goes out before the file's own output, never into its middle.
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        process = subprocess.Popen(
            fill_command(command, file=file, junit=str(junit)),
            start_new_session=os.name == "posix",
            env=None if env is None else dict(env),
        )
    except OSError as exc:  # no such program: no file would run, so say so once
        raise ConfigError(f"cannot run {command[0]!r}: {exc.strerror or exc}") from None
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        code = _process_stop(process)
    tests = report_tests(junit)
    return {
        "file": file,
        "started": True,
        "exit_code": code if code >= 0 else None,
        "signal": "" if timed_out or code >= 0 else _signal_name(-code),
        "timed_out": timed_out,
        "duration": round(time.monotonic() - started, 3),
        "report": tests is not None,
        "tests": tests,
    }


def _process_stop(process: subprocess.Popen) -> int:
    """Stop a file run past its time, and what it started: SIGTERM, then SIGKILL."""
    if os.name != "posix":
        process.kill()
        return process.wait()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
            os.killpg(process.pid, sig)
        try:
            return process.wait(timeout=KILL_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            continue
    return process.wait()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_files(
    files: Sequence[str],
    command: Sequence[str],
    *,
    reports: Path,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    log: Callable[[str], None] = _log,
) -> list[dict[str, Any]]:
    """Run ``command`` once per file, one after another, in ``env`` (default: this process's),
    and return the run manifest's entries (``parity.pure.run_manifest`` on the server says
    what they mean). A line before and after each file's own output says which file it is."""
    reports.mkdir(parents=True, exist_ok=True)
    entries = []
    for index, file in enumerate(files, start=1):
        junit = junit_path(reports, index, file)
        log(f"[{index}/{len(files)}] {file}: starting")
        entry = run_file(command, file=file, junit=junit, timeout=timeout, env=env)
        log(f"[{index}/{len(files)}] {file}: {describe_file_run(entry)}")
        entries.append(entry)
    return entries


def describe_file_run(entry: Mapping[str, Any]) -> str:
    if entry["timed_out"]:
        how = "timed out"
    elif entry["signal"]:
        how = f"killed by {entry['signal']}"
    else:
        how = f"exit {entry['exit_code']}"
    tests = f"{entry['tests']:,} tests" if entry["report"] else "no report"
    return f"{how} after {entry['duration']:.1f} s, {tests}"


def expected_files_read(path: str) -> list[str]:
    """A list of test files, one a line (``files`` writes one); blank lines and # comments
    are skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read --expected-files {path}: {exc}") from None
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def expected_manifest(files: Sequence[str]) -> dict[str, Any]:
    """A run manifest of files the job was told to run and did not start (yet): what a lost
    shard reads as once the run is complete, unless another upload ran them."""
    return {"files": [{"file": file, "started": False} for file in dict.fromkeys(files)]}


def run_manifest_append(path: str | os.PathLike, entry: Mapping[str, Any]) -> None:
    """Add a file's entry to a run manifest a runner writes as it goes (JSON Lines, read by
    ``upload --run-manifest``): a line when the file starts, ``{"file", "started": true}``,
    and one when it ends, with its exit code and report. A file whose process died between
    the two has no end, and reads as crashed."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(dict(entry), separators=(",", ":")) + "\n")


def run_manifest_read(
    paths: Sequence[str], *, expected: Sequence[str] = (), log: Callable[[str], None] = _log
) -> dict[str, Any]:
    """One run manifest from runners' JSON Lines files and the files ``expected``: per file,
    its last entry; an entry that started is never replaced by one that did not."""
    entries = {entry["file"]: entry for entry in expected_manifest(expected)["files"]}
    for path in paths:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"cannot read --run-manifest {path}: {exc}") from None
        for number, line in enumerate(lines, start=1):
            try:
                entry = json.loads(line) if line.strip() else None
            except ValueError:  # a line cut short by a crash: the file's start line stands
                log(f"{path}:{number}: not a run manifest entry, skipped")
                continue
            if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
                continue
            earlier = entries.get(entry["file"])
            if earlier is None or earlier.get("started", True) <= entry.get("started", True):
                entries[entry["file"]] = entry
    return {"files": list(entries.values())}


# --- The verdict, as a table and as Markdown -------------------------------------------------


def gap_tracking(gap: Mapping[str, Any]) -> str:
    """untracked, tracked, tracked-closed (every issue it cites is closed: fixed, or forgotten?),
    intended or flaky (its test flips over the backend's window of runs)."""
    if gap.get("infra"):
        return "infra"
    if gap.get("intended"):
        return "intended"
    if gap.get("tracked"):
        return "tracked-closed" if gap.get("tracked_closed") else "tracked"
    # A verdict's gap says it in ``triage``; the gaps list's in its standing.
    if gap.get("triage") == "flaky" or (gap.get("standing") or {}).get("triage") == "flaky":
        return "flaky"
    return "untracked"


def _gaps_in_order(verdict: Mapping[str, Any]) -> list[dict]:
    """The gaps listed, untracked first (the server's order; an older server's was by test)."""
    order = {
        "untracked": 0,
        "tracked-closed": 1,
        "tracked": 2,
        "intended": 3,
        "flaky": 3,
        "infra": 4,
    }
    return sorted(verdict.get("gaps", []), key=lambda g: (order[gap_tracking(g)], g["test"]))


def gaps_total(verdict: Mapping[str, Any]) -> int:
    """The gaps the run opened, listed or not (an older server listed every one)."""
    return verdict.get("gaps_total", len(verdict.get("gaps", [])))


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def verdict_gates(verdict: Mapping[str, Any]) -> bool:
    """Whether CI passes the gate: the verdict is ok, or its suites are informing or broken on
    the backend (``gates`` false: it reports, docs/suites.md). An older server sends no
    ``gates``: every verdict gates."""
    return bool(verdict["ok"]) or not verdict.get("gates", True)


def _reporting(verdict: Mapping[str, Any]) -> str:
    """ "" for a verdict that gates; else which suites only report, and their tiers."""
    if verdict.get("gates", True):
        return ""
    tiers = ", ".join(f"{s['name']} {s['tier']}" for s in verdict.get("suites") or [])
    return f"reports only, not a gate: suite {tiers}"


def verdict_headline(verdict: Mapping[str, Any]) -> str:
    opened = verdict["opened"]
    state = "ok" if verdict["ok"] else "NOT OK"
    if _reporting(verdict):
        state += f" [{_reporting(verdict)}]"
    why = []
    if opened["untracked"]:
        why.append("opens untracked gaps")
    # Gaps the baseline had too, that an exemption covered there and no longer does (a lapsed
    # condition): untracked now. An older server sends no count.
    uncovered = opened.get("uncovered") or 0
    if uncovered:
        why.append("uncovers gaps an exemption no longer covers")
    if verdict.get("coverage_drop"):
        why.append("drops coverage")
    reason = f" ({' and '.join(why)})" if why else ""
    closed_issues = opened.get("tracked_closed")
    tracked = f"{opened['tracked']} tracked" + (
        f" ({closed_issues} by closed issues)" if closed_issues else ""
    )
    infra = opened.get("infra") or 0
    health = "; run UNHEALTHY: rerun below" if verdict.get("health") == "unhealthy" else ""
    return (
        f"verdict for {verdict['backend']} run {verdict['run']}: {state}{reason}; opened "
        f"{opened['untracked']} untracked, {tracked}, {opened['intended']} intended gap(s)"
        + (f", {infra} lost to infrastructure" if infra else "")
        + f", closed {verdict['closed']}"
        + (f"; uncovered {uncovered} (an exemption no longer applies)" if uncovered else "")
        + health
    )


def verdict_scope(verdict: Mapping[str, Any]) -> str:
    """A shard's verdict of a run its other shards have not all reached: what it judged."""
    scope = verdict.get("scope")
    if not scope:
        return ""
    return (
        f"shard {scope['shard']}: the run is not complete, so this verdict judges the shard's "
        f"{scope['files']} file(s) only; the run's last shard gates on the whole run"
    )


def verdict_rerun(verdict: Mapping[str, Any]) -> str:
    """Run health: the files infrastructure lost (a line each: file, state, shard, how it
    ended) and the uploads that failed to ingest; empty when the run is healthy."""
    rerun = verdict.get("rerun") or {}
    files, shards = rerun.get("files") or [], rerun.get("shards") or []
    if not (files or shards):
        return ""
    lines = [
        f"rerun: {len(files)} file(s) infrastructure lost, in {len(shards)} shard(s); "
        "not gaps of the backend (docs/run-health.md)"
    ]
    rows = [("FILE", "STATE", "SHARD", "HOW IT ENDED")] + [
        (f["file"], f["state"], _shard_label(f), _file_ending(f)) for f in files
    ]
    if files:
        lines += _columns(rows)
    for shard in shards:
        if shard.get("failed_upload"):
            lines.append(
                f"upload {shard['upload']} ({_shard_label(shard)}) failed to ingest: send it "
                f"again or rerun the job ({_clip(shard.get('error') or '', 120)})"
            )
    if verdict.get("ci_url"):
        lines.append(f"CI run: {verdict['ci_url']}")
    return "\n".join(lines)


def _shard_label(item: Mapping[str, Any]) -> str:
    if item.get("shard"):
        return f"shard {item['shard']}"
    return f"upload {item['upload']}" if item.get("upload") else "expected only"


def _file_ending(item: Mapping[str, Any]) -> str:
    if item.get("state") == "truncated" and item.get("baseline_tests"):
        return f"{item.get('tests')} tests, {item['baseline_tests']} before"
    return item.get("exit_status") or "-"


def verdict_branch(verdict: Mapping[str, Any], *, project: str | None) -> str:
    """A warning when the run is on a branch the project does not compare: its verdict holds,
    but it never becomes current, so the pages never show it ("" otherwise, or for a probe)."""
    if verdict.get("counts_toward_parity", True) or verdict.get("probe"):
        return ""
    compared = verdict.get("default_branch")
    return (
        f"warning: this run is on branch {verdict.get('branch')}; {project or 'the project'} "
        f"compares {compared}: the verdict holds, but the run does not count toward parity "
        f"(the pages show runs on {compared}; the project's settings name its default branch)"
    )


def verdict_exemptions(verdict: Mapping[str, Any]) -> str:
    """Which exemption list the run applied, what changed in it since, and the gaps that an
    exemption added after the run covers; a probe run says it is one."""
    applied = verdict.get("exemptions") or {}
    lines = []
    if verdict.get("probe"):
        lines.append("probe run: exempted tests ran too; never a gate, it flags the exemptions")
        lines.append("  that pass now on the exemptions page")
    version = applied.get("version")
    if not version:
        lines.append("exemptions: no list version sent (reports made without the plugin or runner)")
    elif not applied.get("known"):
        lines.append(f"exemptions: version {version} applied (not one this server gave out)")
    else:
        added, removed = applied.get("added") or [], applied.get("removed") or []
        changed = [f"added {_exemption_label(e)}" for e in added]
        changed += [f"removed {_exemption_label(e)}" for e in removed]
        since = "; since then " + ", ".join(changed) if changed else ", unchanged since"
        lines.append(f"exemptions: version {version} applied{since}")
    # A server that counts the gaps per exemption says "added after the run" on its line.
    for gap in [] if "exempted" in verdict else verdict.get("gaps", []):
        if gap.get("exemption_added"):
            lines.append(
                f"  {gap['test']}: {gap_tracking(gap)} by exemption #{gap['exemption']}, "
                "added after the run"
            )
    return "\n".join(lines)


def _exemption_label(exemption: Mapping[str, Any]) -> str:
    return f"#{exemption['id']} ({exemption['kind']} {exemption['match']})"


def _one_line(cell: str) -> str:
    """A cell on its line: a line break in a test's name (or an issue's) is shown as ``\\n``,
    never starting a line of its own, which a CI log could read as a command (GitHub's
    ``::error::``)."""
    return cell.replace("\r", "\\r").replace("\n", "\\n")


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows of cells as aligned lines, every column but the last padded to its widest cell."""
    rows = [[_one_line(cell) for cell in row] for row in rows]
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1]
        for row in rows
    ]


def _listed_gaps(verdict: Mapping[str, Any]) -> tuple[list[dict], int]:
    """The gaps listed a row each, untracked first, and how many such gaps the run opened.
    When the verdict counts the others per exemption (``exempted``), only the untracked: the
    others are a line per exemption (``verdict_exempted``)."""
    gaps = _gaps_in_order(verdict)
    if "exempted" not in verdict:  # an older server: every gap a row
        return gaps, gaps_total(verdict)
    untracked = [gap for gap in gaps if gap_tracking(gap) == "untracked"]
    return untracked, verdict["opened"]["untracked"]


def _count(n: int, noun: str) -> str:
    """ "1 new gap", "2 new gaps"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def verdict_table(verdict: Mapping[str, Any]) -> str:
    """The untracked gaps the run opened, one a line: state, tracking, test, reason, issues;
    then, when the verdict listed only the first of them, how many more there are; then the
    others, one line per exemption (an older server's verdict: every gap a row)."""
    gaps, total = _listed_gaps(verdict)
    exempted = "\n".join(filter(None, [verdict_exempted(verdict), verdict_uncovered(verdict)]))
    if not gaps:
        what = "untracked gap" if verdict.get("exempted") else "gap"
        listed = f"{_count(total, f'new {what}')} (none listed)" if total else f"no new {what}s"
        return "\n".join(filter(None, [listed, exempted]))
    rows = [("STATE", "TRACKING", "TEST", "REASON", "ISSUES")] + [
        (
            gap["state"],
            gap_tracking(gap),
            gap["test"],
            _clip(gap.get("reason") or "-", 60),
            " ".join(gap.get("issues") or []) or "-",
        )
        for gap in gaps
    ]
    lines = _columns(rows)
    if total > len(gaps):
        what = "untracked gap" if "exempted" in verdict else "gap"
        lines.append(
            f"... and {total - len(gaps):,} more: {_count(total, f'new {what}')}, the first "
            f"{len(gaps):,} "
            "listed (the run's page and the verdict API's gaps_next list the rest)"
        )
    return "\n".join(filter(None, ["\n".join(lines), exempted]))


def verdict_uncovered(verdict: Mapping[str, Any]) -> str:
    """The gaps the run uncovered (the baseline had them, covered by an exemption that no
    longer applies for the run), one a line; empty when none (or an older server)."""
    uncovered = verdict.get("uncovered") or []
    if not uncovered:
        return ""
    # WHY: "condition rocm < 7.14 no longer holds", "expired 2026-12-01", "removed by alice on
    # 2026-12-03"; an older server sends the condition only.
    rows = [("STATE", "UNCOVERED", "TEST", "EXEMPTION", "WHY")] + [
        (
            gap["state"],
            "untracked",
            gap["test"],
            f"#{gap['exemption']} ({gap['kind']})",
            gap.get("why") or gap.get("condition") or "-",
        )
        for gap in uncovered
    ]
    head = (
        f"{len(uncovered):,} gap(s) uncovered: an exemption covered them before this run, none "
        "now (it lapsed, expired or was removed)"
    )
    return "\n".join([head, *_columns(rows)])


def verdict_exempted(verdict: Mapping[str, Any]) -> str:
    """The opened gaps an exemption tracks or intends (or a skip reason's issue tracks), one
    line per exemption: tracking, how many, the exemption and its match, reason, issues."""
    groups = verdict.get("exempted") or []
    if not groups:
        return ""
    rows = [("TRACKING", "GAPS", "BY", "REASON", "ISSUES")] + [
        (
            gap_tracking(group),
            f"{group['gaps']:,}",
            _exempted_by(group),
            _clip(group.get("reason") or "-", 60),
            " ".join(group.get("issues") or []) or "-",
        )
        for group in groups
    ]
    total = sum(group["gaps"] for group in groups)
    lines = [f"{total:,} new gap(s) tracked or intended, a line per exemption:", *_columns(rows)]
    return "\n".join(lines)


def _exempted_by(group: Mapping[str, Any]) -> str:
    """``#41 test/test_ops.py`` (an exemption), ``skip reason`` (a reason's issue); ``, added
    after the run`` when the exemption is newer than the list the run applied."""
    if group.get("exemption") is None:
        return "skip reason"
    by = f"#{group['exemption']} {group.get('match') or '(a skip reason)'}"
    return by + (", added after the run" if group.get("exemption_added") else "")


def verdict_files(verdict: Mapping[str, Any]) -> str:
    """The run manifest's files whose tests have no result, one a line with how each ended,
    and the CI run's page; empty when every file ran."""
    files = verdict.get("unrun_files") or []
    if not files:
        return ""
    rows = [("FILE", "STATE", "HOW IT ENDED")] + [
        (f["file"], f["state"], f["status"] or "-") for f in files
    ]
    lines = _columns(rows)
    if verdict.get("ci_url"):
        lines.append(f"CI run: {verdict['ci_url']}")
    return "\n".join(lines)


def _md(text: str) -> str:
    """Text for a Markdown table cell."""
    escaped = " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|")
    for char in "*_<>[]`":
        escaped = escaped.replace(char, "\\" + char)
    return escaped


def _md_link(text: str, url: str) -> str:
    return f"[{_md(text)}]({url.replace(' ', '%20').replace(')', '%29')})"


def verdict_markdown(
    verdict: Mapping[str, Any],
    *,
    client: Client,
    parity: Mapping[str, Any] | None = None,
    commit: str = "",
) -> str:
    """The verdict for a pull-request comment or a job summary: the outcome, the current
    parity scores, the gaps the run opened with their reasons and issues, links to the
    dashboard."""
    backend = verdict["backend"]
    opened = verdict["opened"]
    mark = "✅ ok" if verdict["ok"] else "❌ not ok"
    if _reporting(verdict):
        mark = f"{'✅ ok' if verdict['ok'] else '⚠️ not ok'} ({_reporting(verdict)})"
    run_link = _md_link(f"run {verdict['run']}", client.dashboard_url(f"runs/{verdict['run']}/"))
    lines = [f"### parity: {_md(backend)} run {verdict['run']}: {mark}", ""]
    facts = [
        f"Opened **{opened['untracked']} untracked**, {opened['tracked']} tracked and "
        f"{opened['intended']} intended gap(s); closed {verdict['closed']}.",
        f"{verdict.get('test_count', 0):,} tests"
        + (
            f" (baseline run {verdict['baseline_run']}: {verdict['baseline_test_count']:,})"
            if verdict.get("baseline_run")
            else " (no baseline run yet)"
        )
        + ("; **coverage dropped**." if verdict.get("coverage_drop") else "."),
    ]
    if commit:
        facts.insert(0, f"Commit `{commit[:12]}`.")
    off_branch = verdict_branch(verdict, project=client.project)
    if off_branch:
        facts.append(f"**{_md(off_branch[0].upper() + off_branch[1:])}.**")
    if not verdict.get("complete"):
        facts.append("The run is not complete: tests it lacks are not counted missing yet.")
    if verdict.get("health") == "unhealthy":
        rerun = verdict.get("rerun") or {}
        shards = sorted({_shard_label(x) for x in rerun.get("shards") or []})
        facts.append(
            f"**Run unhealthy**: infrastructure lost {len(rerun.get('files') or [])} file(s); "
            f"rerun {_md(', '.join(shards))} (not gaps of {_md(backend)})."
        )
    facts += [_md(line.strip()) for line in verdict_exemptions(verdict).splitlines()]
    lines += [" ".join(facts), ""]
    if parity:
        lines += _scores_markdown(parity, client=client) + [""]
    lines += _gaps_markdown(verdict, client=client, run_link=run_link)
    exemptions_page = client.dashboard_url("exemptions/", backend=backend)
    lines += _exempted_markdown(verdict.get("exempted") or [], exemptions_page=exemptions_page)
    files = verdict.get("unrun_files") or []
    if files:
        ci_url = verdict.get("ci_url") or ""
        lines += ["| file | gave no result: | how it ended |", "|---|---|---|"]
        for f in files[:SUMMARY_MAX_GAPS]:
            status = _md_link(f["status"], ci_url) if ci_url and f["status"] else _md(f["status"])
            lines.append(f"| {_md(f['file'])} | {f['state']} | {status} |")
        lines.append("")
    links = [
        run_link,
        _md_link("dashboard", client.dashboard_url()),
        _md_link(
            f"untracked gaps of {backend}",
            client.dashboard_url("gaps/", backend=backend, tracked="untracked", open="1"),
        ),
        _md_link(f"runs of {backend}", client.dashboard_url("runs/", backend=backend)),
        _md_link(f"exemptions of {backend}", client.dashboard_url("exemptions/", backend=backend)),
    ]
    lines.append(" · ".join(links))
    return "\n".join(lines) + "\n"


def _gaps_markdown(verdict: Mapping[str, Any], *, client: Client, run_link: str) -> list[str]:
    """The gaps listed a row each (``_listed_gaps``), the first ``SUMMARY_MAX_GAPS``, and how
    many more the run's page lists."""
    gaps, total = _listed_gaps(verdict)
    if not gaps:
        return []
    lines = ["| state | tracking | test | reason | issues |", "|---|---|---|---|---|"]
    for gap in gaps[:SUMMARY_MAX_GAPS]:
        test = _md_link(gap["test"], _test_url(gap, client))
        issues = " ".join(_md_link(_issue_label(u), u) for u in gap.get("issues") or [])
        lines.append(
            f"| {gap['state']} | {gap_tracking(gap)} | {test} | "
            f"{_md(gap.get('reason') or '')} | {issues} |"
        )
    shown = min(len(gaps), SUMMARY_MAX_GAPS)
    if total > shown:
        lines.append(f"\n… and {total - shown:,} more on {run_link}.")
    return lines + [""]


def _exempted_markdown(groups: Sequence[Mapping[str, Any]], *, exemptions_page: str) -> list[str]:
    """The gaps tracked or intended, a row per exemption (``verdict_exempted``); an exemption
    links to the backend's exemptions (GitHub would link a bare "#12" to issue 12)."""
    if not groups:
        return []
    total = sum(group["gaps"] for group in groups)
    lines = [
        f"{total:,} new gap(s) tracked or intended, a row per exemption:",
        "",
        "| tracking | gaps | by | reason | issues |",
        "|---|---|---|---|---|",
    ]
    for group in groups:
        issues = " ".join(_md_link(_issue_label(u), u) for u in group.get("issues") or [])
        by = _md(_exempted_by(group))
        if group.get("exemption") is not None:
            label = f"exemption {group['exemption']}"
            by = _md_link(label, exemptions_page) + by[len(f"#{group['exemption']}") :]
        lines.append(
            f"| {gap_tracking(group)} | {group['gaps']:,} | {by} | "
            f"{_md(group.get('reason') or '')} | {issues} |"
        )
    return lines + [""]


def _test_url(gap: Mapping[str, Any], client: Client) -> str:
    """The test's page; a server older than the test ids in its verdict: the test's file."""
    if gap.get("test_id"):
        return client.dashboard_url(f"tests/{gap['test_id']}/")
    return client.dashboard_url("file/", path=gap["test"].split("::")[0], backend=gap["backend"])


# The headline's name by the project's score definition (docs/scores.md).
SCORE_NAMES = {
    "reference_passing": "parity score",
    "agree_reference_passed": "agreement (where the reference passed)",
    "agree_any": "agreement (any difference)",
}


def _scores_markdown(parity: Mapping[str, Any], *, client: Client) -> list[str]:
    rows = parity.get("backends", [])
    kind = next((r["score_definition"]["kind"] for r in rows if r.get("score_definition")), "")
    lines = [
        f"| backend | {SCORE_NAMES.get(kind, 'score')} | current run | untracked | tracked | "
        "intended |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        variants = [r for r in rows if r.get("family") and r["family"] == row["backend"]]
        if variants and row.get("run") is None:
            lines.append(_family_markdown(row["backend"], variants))
            continue
        name = row["backend"] + (" (reference)" if row.get("is_reference") else "")
        score = "-" if row.get("score") is None else f"{row['score']:.1%}"
        lines.append(
            f"| {_md(name)} | {score} | {row.get('run') or '-'} | {row.get('untracked', 0)} | "
            f"{row.get('tracked', 0)} | {row.get('intended', 0)} |"
        )
    return lines


def _family_markdown(family: str, variants: list[Mapping[str, Any]]) -> str:
    """A family's row: it has no run of its own, so its variants' roll-up (their scores'
    range, their gaps summed)."""
    scores = sorted(v["score"] for v in variants if v.get("score") is not None)
    if not scores:
        score = "no variant scored yet"
    elif f"{scores[0]:.1%}" == f"{scores[-1]:.1%}":
        score = f"{scores[0]:.1%}"
    else:
        score = f"{scores[0]:.1%}–{scores[-1]:.1%}"
    sums = [sum(v.get(key, 0) for v in variants) for key in ("untracked", "tracked", "intended")]
    return (
        f"| {_md(family)} (family) | {score} | its {len(variants)} variants' | "
        + " | ".join(str(n) for n in sums)
        + " |"
    )


def _issue_label(url: str) -> str:
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return f"#{tail}" if tail.isdigit() else url


# --- Queries: the read API, shaped for bots --------------------------------------------------
# ``query --json`` prints one document whose fields are this client's, documented in
# docs/query.md: each item is built here field by field, never the server's JSON passed on, so
# the API may grow or rename without breaking a bot that reads the client.

QUERY_KINDS = (
    "gaps",
    "exemptions",
    "verdict",
    "tests",
    "targets",
    "suites",
    "compare",
    "transitions",
)
QUERY_LIMIT = 1000
QUERY_PAGE = 500
VERDICT_GAPS_MAX = 5000  # the server lists at most this many of a verdict's gaps at once
QUERY_TEXTS = ("match", "test", "reason", "note")  # what --q searches in an exemption
# Which options each kind takes: any other is a usage error, not silently ignored.
QUERY_OPTIONS = {
    "gaps": ("backend", "state", "q", "untracked", "history"),
    "exemptions": ("backend", "state", "q"),
    "verdict": ("run",),
    "tests": ("q",),
    "targets": ("backend",),
    "suites": ("backend",),
    "compare": ("name", "state"),  # --state only with a view's NAME
    "transitions": ("backend",),
}
COMPARE_PAGE_MAX = 5000  # the server pages a compare view's tests at most this many at once


def query_gap(gap: Mapping[str, Any]) -> dict:
    return {
        "id": gap.get("id"),
        "test": gap["test"],
        "test_id": gap.get("test_id"),
        "backend": gap["backend"],
        "state": gap["state"],
        "reason": gap.get("reason"),
        "tracking": gap_tracking(gap),
        "tracked": bool(gap.get("tracked")),
        "intended": bool(gap.get("intended")),
        "issues": list(gap.get("issues") or []),
        "exemption": gap.get("exemption"),
        "first_seen": gap.get("first_seen"),
        "owners": list(gap.get("owners") or []),
        # Its test's state from history on the backend: flaky, broken or "" (an older server
        # sends none).
        "history": gap.get("history") or "",
    }


def query_exemption(triage: Mapping[str, Any]) -> dict:
    note = triage.get("note") or None
    return {
        "id": triage["id"],
        "kind": triage["kind"],
        "pattern": triage.get("match") or triage.get("test") or None,
        "skip_reason": triage.get("reason"),
        "reason": note or triage.get("reason"),
        "issue": triage.get("issue"),
        "issue_state": triage.get("issue_state"),
        "backends": list(triage.get("backends") or []),
        "expires": triage.get("expires_on"),
        "expired": bool(triage.get("expired")),
        "stale": bool(triage.get("stale")),
    }


def query_target(target: Mapping[str, Any]) -> dict:
    """A target with its progress and forecast (docs/targets.md), field by field."""
    return {
        "id": target["id"],
        "backend": target["backend"],
        "score": target["score"],
        "due": target["due"],
        "note": target.get("note") or None,
        "denominator": target.get("denominator"),
        "goal": target.get("goal"),
        "passing": target.get("passing"),
        "remaining": target.get("remaining"),
        "published": target.get("published"),
        "steering": target.get("steering"),
        "rate_per_day": target.get("rate_per_day"),
        "forecast": target.get("forecast"),
        "met": bool(target.get("met")),
        "no_progress": bool(target.get("no_progress")),
        "at_risk": bool(target.get("at_risk")),
    }


def query_suite_cell(row: Mapping[str, Any], cell: Mapping[str, Any]) -> dict:
    """A suite on one backend (docs/suites.md), field by field: one cell of the matrix."""
    last = cell.get("last_run") or {}
    health = cell.get("health") or {}
    return {
        "suite": row["name"],
        "mapped": bool(row.get("mapped")),
        "backend": cell["backend"],
        "name": cell.get("name") or row["name"],
        "status": cell["status"],
        "reason": cell.get("reason") or None,
        "issue": cell.get("issue_url") or None,
        "tier": cell.get("tier"),
        "equivalent": cell.get("equivalent") or None,
        "last_run": last.get("run"),
        "last_run_at": last.get("started_at"),
        "runs": health.get("runs", 0),
        "greens": health.get("greens", 0),
        "pass_rate": health.get("pass_rate"),
        "timeouts": health.get("timeouts", 0),
        "consecutive_greens": health.get("consecutive_greens", 0),
    }


def query_compare_view(view: Mapping[str, Any]) -> dict:
    """A compare view's settings (docs/compare-views.md), field by field."""
    return {
        "name": view["name"],
        "sample": view["sample"],
        "basis": view["basis"],
        "days": view["days"],
        "confidence": view["confidence"],
        "tolerance": view["tolerance"],
        "min_failures": view["min_failures"],
        "url": view.get("url"),
    }


def _compare_counts(counts: Mapping[str, Any] | None) -> dict:
    counts = counts or {}
    return {"passed": counts.get("passed", 0), "failed": counts.get("failed", 0),
            "rate": counts.get("rate")}  # fmt: skip


def query_compare_test(row: Mapping[str, Any]) -> dict:
    """A test in a compare view's report: its state there and the sentence saying why."""
    return {
        "id": row.get("id"),
        "test": row["test"],
        "state": row["state"],
        "sample": _compare_counts(row.get("sample")),
        "basis": _compare_counts(row.get("basis")),
        "p": row.get("p"),
        "sentence": row.get("sentence") or "",
    }


TRANSITION_KINDS = ("fail_to_pass", "pass_to_fail", "new", "gone")


def query_transition(transition: Mapping[str, Any]) -> dict:
    """A version transition (docs/transitions.md), field by field."""
    counts = transition.get("counts") or {}
    return {
        "id": transition["id"],
        "backend": transition["backend"],
        "from_run": transition["from_run"],
        "to_run": transition["to_run"],
        "at": transition.get("at"),
        "changed": {k: list(v) for k, v in (transition.get("changed") or {}).items()},
        "counts": {kind: counts.get(kind, 0) for kind in TRANSITION_KINDS},
        "lapses": [
            {k: lapse.get(k) for k in ("triage", "match", "condition", "before", "after")}
            for lapse in transition.get("lapses") or []
        ],
        "url": transition.get("url"),
    }


def query_test(test: Mapping[str, Any]) -> dict:
    return {"id": test["id"], "test": test["test"], "file": test.get("file")}


def _contains(text: str, *values: object) -> bool:
    text = text.lower()
    return any(text in str(value).lower() for value in values if value)


def _query_pages(
    client: Client,
    path: str,
    query: Mapping[str, str],
    *,
    limit: int,
    page: int,
    keep: Callable[[Mapping[str, Any]], bool] | None = None,
    first: dict | None = None,
) -> tuple[list[dict], int, bool]:
    """Read a limit/offset list page by page until ``limit`` items pass ``keep`` (0: every
    one): those items, the server's count, and whether some were left unread. ``first``, when
    given, gets the first page's answer (what it says beside its items)."""
    items: list[dict] = []
    offset = 0
    while True:
        # A filter here may drop any item of a page: read whole pages then.
        size = page if keep or not limit else min(page, limit - len(items))
        answer = client.request(
            "GET", path, query={**query, "limit": str(size), "offset": str(offset)}
        ).json()
        if first is not None and not first:
            first.update(answer)
        results = answer.get("results", [])
        total = answer.get("count", len(results))
        offset += len(results)
        for index, result in enumerate(results):
            if keep is None or keep(result):
                items.append(result)
                if limit and len(items) == limit:
                    return items, total, index + 1 < len(results) or offset < total
        if not results or offset >= total:
            return items, total, False


def query_gaps(client: Client, args: argparse.Namespace) -> dict:
    query = {"backend": args.backend, "state": args.state}
    if args.untracked:
        query["tracked"] = "false"
    if getattr(args, "history", None):
        query["history"] = args.history
    first: dict = {}
    found, total, more = _query_pages(
        client,
        client._project_path("gaps/"),
        {k: v for k, v in query.items() if v},
        limit=args.limit,
        page=args.page_size,
        keep=(lambda gap: _contains(args.q, gap["test"])) if args.q else None,
        first=first,
    )
    items = [query_gap(gap) for gap in found]
    # A suite never run on a backend: one entry, its missing gaps in none of the items.
    suites = [
        {k: s.get(k) for k in ("suite", "backend", "status", "missing", "reason", "issue_url")}
        for s in first.get("suites") or []
    ]
    return {
        "total": None if args.q else total,
        "truncated": more,
        "suites": suites,
        "items": items,
    }


def query_exemptions(client: Client, args: argparse.Namespace) -> dict:
    def keep(triage: Mapping[str, Any]) -> bool:
        return (not args.state or triage["kind"] == args.state) and (
            not args.q or _contains(args.q, *(triage.get(k) for k in QUERY_TEXTS))
        )

    # The server knows which exemptions apply to a backend (a variant gets its family's).
    filtered = bool(args.state or args.q)
    found, total, more = _query_pages(
        client,
        client._project_path("triage/"),
        {"backend": args.backend} if args.backend else {},
        limit=args.limit,
        page=args.page_size,
        keep=keep if filtered else None,
    )
    items = [query_exemption(triage) for triage in found]
    return {"total": None if filtered else total, "truncated": more, "items": items}


def query_verdict(client: Client, args: argparse.Namespace) -> dict:
    if args.run is None:
        raise ConfigError("query verdict needs --run ID: the run's id, as upload prints it")
    path = f"/api/v1/runs/{args.run}/verdict/"
    page = min(args.page_size, VERDICT_GAPS_MAX)
    gaps: list[dict] = []
    while True:
        size = page if not args.limit else min(page, args.limit - len(gaps))
        verdict = client.request(
            "GET", path, query={"gaps_limit": str(size), "gaps_offset": str(len(gaps))}
        ).json()
        listed = verdict.get("gaps", [])
        gaps.extend(listed)
        total = gaps_total(verdict)
        if not listed or len(gaps) >= total or (args.limit and len(gaps) >= args.limit):
            break
    opened = verdict["opened"]
    return {
        "run": verdict["run"],
        "backend": verdict["backend"],
        "ok": bool(verdict["ok"]),
        "gates": bool(verdict.get("gates", True)),
        "suites": list(verdict.get("suites") or []),
        "complete": bool(verdict.get("complete")),
        "probe": bool(verdict.get("probe")),
        "coverage_drop": bool(verdict.get("coverage_drop")),
        "baseline_run": verdict.get("baseline_run"),
        "opened": {
            "untracked": opened["untracked"],
            "tracked": opened["tracked"],
            "intended": opened["intended"],
            "infra": opened.get("infra", 0),
            "uncovered": opened.get("uncovered", 0),
        },
        "closed": verdict["closed"],
        "health": verdict.get("health", "healthy"),
        "rerun": query_rerun(verdict.get("rerun") or {}),
        "total": total,
        "truncated": len(gaps) < total,
        "items": [query_gap(gap) for gap in gaps],
    }


def query_rerun(rerun: Mapping[str, Any]) -> dict:
    """Run health's rerun list, field by field (docs/query.md)."""
    files = [
        {
            "file": f["file"],
            "state": f["state"],
            "shard": f.get("shard") or None,
            "exit_status": f.get("exit_status") or None,
            "upload": f.get("upload"),
            "tests": f.get("tests"),
            "baseline_tests": f.get("baseline_tests"),
        }
        for f in rerun.get("files") or []
    ]
    shards = [
        {
            "shard": s.get("shard") or None,
            "upload": s.get("upload"),
            "files": s.get("files", 0),
            "failed_upload": bool(s.get("failed_upload")),
            "error": s.get("error") or None,
        }
        for s in rerun.get("shards") or []
    ]
    return {"files": files, "shards": shards}


def query_tests(client: Client, args: argparse.Namespace) -> dict:
    found, total, more = _query_pages(
        client,
        client._project_path("tests/"),
        {"q": args.q or ""},
        limit=args.limit,
        page=args.page_size,
    )
    return {"total": total, "truncated": more, "items": [query_test(t) for t in found]}


def query_targets(client: Client, args: argparse.Namespace) -> dict:
    # The server lists every target at once (a project has a handful).
    listed = client.request("GET", client._project_path("targets/")).json()
    found = [t for t in listed if not args.backend or t["backend"] == args.backend]
    kept = found[: args.limit] if args.limit else found
    items = [query_target(t) for t in kept]
    return {"total": len(found), "truncated": len(kept) < len(found), "items": items}


def query_suites(client: Client, args: argparse.Namespace) -> dict:
    # The server sends the whole matrix at once (suites × backends: a few hundred cells).
    matrix = client.request("GET", client._project_path("suites/")).json()
    found = [
        query_suite_cell(row, cell)
        for row in matrix.get("suites", [])
        for cell in row.get("cells", [])
        if not args.backend or cell["backend"] == args.backend
    ]
    kept = found[: args.limit] if args.limit else found
    return {"total": len(found), "truncated": len(kept) < len(found), "items": kept}


def query_compare(client: Client, args: argparse.Namespace) -> dict:
    name = getattr(args, "name", None)
    if not name:
        if args.state:
            raise ConfigError("query compare takes --state only with a view's NAME")
        # The server lists every view at once (a project has a handful).
        listed = client.request("GET", client._project_path("compare/")).json()
        kept = listed[: args.limit] if args.limit else listed
        items = [query_compare_view(v) for v in kept]
        return {"total": len(listed), "truncated": len(kept) < len(listed), "items": items}
    path = client._project_path(f"compare/{urllib.parse.quote(name, safe='')}/")
    page = min(args.page_size, COMPARE_PAGE_MAX)
    rows: list[dict] = []
    while True:  # the report pages its tests by limit/offset, worst state first
        size = page if not args.limit else min(page, args.limit - len(rows))
        query = {"limit": str(size), "offset": str(len(rows))}
        if args.state:
            query["state"] = args.state
        report = client.request("GET", path, query=query).json()
        listed = report.get("tests", [])
        rows.extend(listed)
        total = report.get("count", len(rows))
        if not listed or len(rows) >= total or (args.limit and len(rows) >= args.limit):
            break
    return {
        "view": query_compare_view(report["view"]),
        "computed_at": report.get("computed_at"),
        "since": report.get("since"),
        "sample_runs": report.get("sample_runs", 0),
        "basis_runs": report.get("basis_runs", 0),
        "counts": dict(report.get("counts") or {}),
        "total": total,
        "truncated": len(rows) < total,
        "items": [query_compare_test(row) for row in rows],
    }


def query_transitions(client: Client, args: argparse.Namespace) -> dict:
    found, total, more = _query_pages(
        client,
        client._project_path("transitions/"),
        {},
        limit=args.limit,
        page=args.page_size,
        # The server lists every backend's: the client keeps one backend's.
        keep=(lambda t: t["backend"] == args.backend) if args.backend else None,
    )
    items = [query_transition(t) for t in found]
    return {"total": None if args.backend else total, "truncated": more, "items": items}


QUERIES = {
    "transitions": query_transitions,
    "compare": query_compare,
    "suites": query_suites,
    "targets": query_targets,
    "gaps": query_gaps,
    "exemptions": query_exemptions,
    "verdict": query_verdict,
    "tests": query_tests,
}


def query_document(client: Client, args: argparse.Namespace) -> dict:
    """The ``query --json`` document: ``kind``, ``project``, ``count`` (items listed),
    ``total``, ``truncated``, ``items``; a verdict adds its own fields."""
    if args.limit < 0 or args.page_size < 1:
        raise ConfigError("--limit must be 0 (no limit) or more, --page-size 1 or more")
    allowed = QUERY_OPTIONS[args.kind]
    for option in ("backend", "state", "q", "run", "untracked", "history", "name"):
        if getattr(args, option, None) not in (None, False) and option not in allowed:
            takes = ", ".join("NAME" if o == "name" else f"--{o}" for o in allowed)
            given = "NAME" if option == "name" else f"--{option}"
            raise ConfigError(f"query {args.kind} takes no {given} (it takes {takes})")
    found = QUERIES[args.kind](client, args)
    items = found.pop("items")
    document = {"kind": args.kind, "project": client.project, "count": len(items)}
    document.update(found)
    document["items"] = items
    return document


def query_lines(document: Mapping[str, Any]) -> list[str]:
    """The document as a reader wants it: a headline, then one aligned row per item."""
    kind, items = document["kind"], document["items"]
    lines = []
    if kind == "verdict":
        opened = document["opened"]
        lines.append(
            f"verdict for {document['backend']} run {document['run']}: "
            f"{'ok' if document['ok'] else 'NOT OK'}; opened {opened['untracked']} untracked, "
            f"{opened['tracked']} tracked, {opened['intended']} intended gap(s), "
            f"closed {document['closed']}; run {document['health']}"
        )
        lines += [
            f"rerun {f['file']} ({f['state']}, {_shard_label(f)})"
            for f in document["rerun"]["files"]
        ]
    if kind == "compare" and "view" in document:
        view = document["view"]
        when = document["computed_at"] or "never computed yet"
        lines.append(
            f"compare {view['name']}: {view['sample']} against {view['basis']} over "
            f"{view['days']} days ({document['sample_runs']} and {document['basis_runs']} runs),"
            f" computed {when}"
        )
    for suite in document.get("suites") or []:  # a gaps document's suites never run
        where = "is excluded on" if suite["status"] == "excluded" else "never ran on"
        why = f" ({suite['reason']})" if suite.get("reason") else ""
        lines.append(
            f"suite {suite['suite']} {where} {suite['backend']}{why}: "
            f"{suite['missing']} tests missing (list them: the gaps API's ?suite=)"
        )
    if kind in ("gaps", "verdict"):
        rows = [
            [
                g["state"],
                g["tracking"] + (f" ({g['history']})" if g.get("history") else ""),
                g["backend"],
                g["test"],
                _clip(g["reason"] or "", 80),
            ]
            for g in items
        ]
    elif kind == "exemptions":
        rows = [
            [
                str(e["id"]),
                e["kind"],
                ",".join(e["backends"]) or "all",
                e["pattern"] or f"reason: {e['skip_reason']}",
                _clip(" ".join(filter(None, [e["issue"], e["reason"]])), 80),
            ]
            for e in items
        ]
    elif kind == "targets":
        rows = [[
            t["backend"],
            f"{t['score'] * 100:g}% by {t['due']}",
            "met" if t["met"] else "no progress" if t["no_progress"]
            else f"forecast {t['forecast']}",
            f"{t['remaining']} to go",
            "at risk" if t["at_risk"] else "",
        ] for t in items]  # fmt: skip
    elif kind == "suites":
        rows = [[
            c["suite"],
            c["backend"],
            c["status"].replace("_", " "),
            "" if c["status"] == "excluded" or c["last_run"] is None else c["tier"],
            f"{c['greens']}/{c['runs']} green, {c['timeouts']} timeout(s), "
            f"{c['consecutive_greens']} in a row" if c["runs"] else "",
            _clip(" ".join(filter(None, [c["reason"], c["issue"]])), 80),
        ] for c in items]  # fmt: skip
    elif kind == "compare" and "view" in document:
        rows = [[t["state"], t["test"], t["sentence"]] for t in items]
    elif kind == "compare":
        rows = [[
            v["name"],
            f"{v['sample']} against {v['basis']}",
            f"{v['days']} days, {v['confidence']:g}% confidence, {v['tolerance']:g} points "
            f"tolerance, {v['min_failures']} failure(s) at least",
        ] for v in items]  # fmt: skip
    elif kind == "transitions":
        rows = [[
            str(t["id"]),
            t["backend"],
            f"run {t['from_run']} -> {t['to_run']}",
            ", ".join(f"{k} {a} -> {b}" for k, (a, b) in t["changed"].items()),
            ", ".join(f"{t['counts'][k]} {k.replace('_to_', '->')}" for k in TRANSITION_KINDS),
        ] for t in items]  # fmt: skip
    else:
        rows = [[str(t["id"]), t["test"]] for t in items]
    if rows:
        lines.extend(_columns(rows))
    total = document.get("total")
    counted = f"{document['count']} of {total}" if total is not None else str(document["count"])
    more = " (more: raise --limit)" if document["truncated"] else ""
    noun = {"verdict": "gaps", "suites": "suite cells"}.get(kind, kind)
    if kind == "compare":
        noun = "tests" if "view" in document else "compare views"
    lines.append(f"{counted} {noun}{more}")
    return lines


# --- Commands -------------------------------------------------------------------------------


def client_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> Client:
    client = Client.from_env(
        args.url, args.token, args.project, env=env, retries=max(args.retries, 0)
    )
    if args.oidc:
        oidc_login(client, env, audience=args.oidc_audience)
    return client


# --- OIDC: CI without a long-lived secret ---------------------------------------------------

NO_GITHUB_TOKEN = (
    "ACTIONS_ID_TOKEN_REQUEST_URL is not set (GitHub gives no OIDC token to pull requests from "
    "forks, nor to a job without 'permissions: id-token: write')"
)


def oidc_login(client: Client, env: Mapping[str, str], *, audience: str) -> None:
    """Authenticate ``client`` with the CI's OIDC token; without one (a fork's pull request),
    say so and keep the client's PARITY_TOKEN, or stop when there is none."""
    id_token = oidc_id_token(env, audience, retries=client.retries, log=client.log)
    if id_token is not None:
        client.oidc_exchange(id_token)
        return
    if client.token:
        client.log(f"--oidc: no OIDC token here: {NO_GITHUB_TOKEN}; using PARITY_TOKEN")
        return
    raise ConfigError(
        f"--oidc: no OIDC token here: {NO_GITHUB_TOKEN}; and no PARITY_TOKEN to fall back on"
    )


def oidc_id_token(
    env: Mapping[str, str],
    audience: str,
    *,
    retries: int = RETRIES,
    log: Callable[[str], None] = _log,
) -> str | None:
    """The CI's OIDC ID token: ``PARITY_OIDC_TOKEN`` as given (GitLab's ``id_tokens:``,
    Buildkite's ``buildkite-agent oidc request-token``), else one GitHub Actions issues for
    ``audience``; None when the job can have none."""
    given = (env.get("PARITY_OIDC_TOKEN") or "").strip()
    if given:
        return given
    url = env.get("ACTIONS_ID_TOKEN_REQUEST_URL") or ""
    bearer = env.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN") or ""
    if not (url and bearer):
        return None
    parts = urllib.parse.urlsplit(url)
    query = "&".join(
        filter(None, [parts.query, "audience=" + urllib.parse.quote(audience, safe="")])
    )
    github = Client(f"{parts.scheme}://{parts.netloc}", retries=retries, log=log)
    try:
        answer = github.request(
            "GET", f"{parts.path}?{query}", headers={"Authorization": f"bearer {bearer}"}
        ).json()
    except AuthError as exc:
        raise AuthError(
            f"GitHub refused the OIDC token request (HTTP {exc.status}: {exc.detail or '?'})"
        ) from None
    value = answer.get("value") if isinstance(answer, dict) else None
    if not isinstance(value, str) or not value:
        raise AuthError("GitHub's OIDC token answer has no 'value'")
    return value


def backend_required(args: argparse.Namespace) -> str:
    if not args.backend:
        raise ConfigError("pass --backend (or set PARITY_BACKEND): the backend's name, e.g. tpu")
    return args.backend


def command_upload(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    backend_required(args)
    if not (args.paths or args.expected_files or args.run_manifest):
        raise ConfigError("name at least one XML file or folder to upload (or --expected-files)")
    client = client_from_args(args, env)
    request = upload_request(args, env)
    manifest = None
    if args.expected_files or args.run_manifest:
        expected = expected_files_read(args.expected_files) if args.expected_files else []
        manifest = run_manifest_read(args.run_manifest or [], expected=expected, log=client.log)
    answers = client.upload(args.paths, request, run_manifest=manifest)
    return _uploaded(args, client, request, answers, env)


def command_run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    backend = backend_required(args)
    command = list(args.test_command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not any("{file}" in part for part in command):
        raise ConfigError(
            "give the command after --, with {file} (and {junit}), e.g. "
            "-- python -m pytest {file} --junitxml={junit}"
        )
    client = client_from_args(args, env)
    request = upload_request(args, env)  # before running: a bad setting fails fast
    key = ""
    if args.shard:  # the server's default key when there is no run key: the split's too
        key = request.run or f"{request.commit}:{request.branch}:{backend}"
    manifest = (
        load_manifest(args.manifest)
        if args.manifest
        else client.manifest(backend, attributes=request.attributes, run=key)
    )
    _split_log(client, manifest, key)
    files = shard_files(manifest, args.shard)
    client.log(exemptions_summary({"backend": backend, **manifest}, files, probe=args.probe))
    if not any("{junit}" in part for part in command):
        client.log("the command has no {junit}: only the run manifest is uploaded")
    reports = Path(args.reports)
    child_env = child_environment(env, client, backend=backend, probe=args.probe)
    child_env.update(attributes_env(request.attributes))  # the plugin resolves with them
    if not (CLIENT_DIR / "parity_pytest.py").is_file():
        client.log(
            f"parity_pytest.py is not beside {Path(__file__).name} (fetch it from "
            f"{client.url}/ci/): a pytest command applies no exemption unless it loads the plugin"
        )
    entries = run_files(
        files, command, reports=reports, timeout=args.file_timeout, env=child_env, log=client.log
    )
    written = [
        str(junit_path(reports, index, entry["file"]))
        for index, entry in enumerate(entries, start=1)
        if entry["report"]
    ]
    client.log(f"ran {len(entries)} file(s), {len(written)} wrote a report; uploading")
    answers = client.upload(written, request, run_manifest={"files": entries})
    return _uploaded(args, client, request, answers, env)


def _uploaded(
    args: argparse.Namespace,
    client: Client,
    request: UploadRequest,
    answers: list[dict],
    env: Mapping[str, str],
) -> int:
    """After an upload: print where it is, or (--wait, --gate, --summary) wait for its
    ingest, print the verdict and gate on it."""
    if not (args.wait or args.gate or args.summary):
        for answer in answers:
            print(answer["url"])
        return EXIT_OK
    for answer in answers:
        upload = client.upload_wait(answer["id"], timeout=args.timeout)
        counts = upload.get("counts") or {}
        client.log(
            f"upload {upload['id']} done: {counts.get('total', 0):,} tests "
            f"({counts.get('passed', 0):,} passed, {counts.get('skipped', 0):,} skipped, "
            f"{counts.get('failed', 0):,} failed, {counts.get('error', 0):,} errors)"
        )
    verdict = client.verdict(answers[-1]["run"], shard=request.shard)
    # What the server says quotes test names and reasons from the XML: in GitHub Actions, no
    # line of it is read as a workflow command (GitHub's "stop-commands", a random token).
    resume = _commands_stopped(env)
    print(verdict_headline(verdict))
    scope = verdict_scope(verdict)
    if scope:
        print(scope)
    off_branch = verdict_branch(verdict, project=client.project)
    if off_branch:  # not a gate: a pull request's run is on its own branch by design
        print(off_branch)
    print(verdict_exemptions(verdict))
    print(verdict_table(verdict))
    rerun = verdict_rerun(verdict)
    if rerun:
        print(rerun)
    elif verdict_files(verdict):  # a server older than run health
        print(verdict_files(verdict))
    run_page = client.dashboard_url(f"runs/{verdict['run']}/")
    print(f"dashboard: {run_page}")
    if resume:
        print(resume, flush=True)
    _summaries_write(args, client, verdict, env, commit=request.commit)
    if args.gate and not verdict_gates(verdict):
        return EXIT_GATE
    if args.gate and verdict.get("health") == "unhealthy":
        client.log("the tests are fine, but infrastructure lost files: rerun them (exit 7)")
        return EXIT_RERUN
    return EXIT_OK


def _summaries_write(
    args: argparse.Namespace,
    client: Client,
    verdict: Mapping[str, Any],
    env: Mapping[str, str],
    *,
    commit: str,
) -> None:
    step_summary = env.get("GITHUB_STEP_SUMMARY")
    if not (args.summary or step_summary):
        return
    try:
        parity = client.parity(files=False)  # the summary reads the backends' scores only
    except ParityError as exc:  # the scores are extra: the verdict is still worth writing
        client.log(f"no scores in the summary: {exc}")
        parity = None
    markdown = verdict_markdown(verdict, client=client, parity=parity, commit=commit)
    if args.summary:
        Path(args.summary).write_text(markdown, encoding="utf-8")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as summary:  # GitHub appends steps
            summary.write(markdown)


def command_manifest(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    client = client_from_args(args, env)
    attributes = run_attributes(args.attr, env)
    manifest = client.manifest(backend_required(args), attributes=attributes)
    text = json.dumps(manifest, indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        client.log(
            f"saved the manifest of {args.backend} to {args.output}: "
            f"{len(manifest['files'])} files, {len(manifest['exemptions'])} exemptions"
        )
    else:
        sys.stdout.write(text)
    return EXIT_OK


def command_query(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    document = query_document(client_from_args(args, env), args)
    if args.json:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        sys.stdout.write("".join(f"{line}\n" for line in query_lines(document)))
    return EXIT_OK


def command_mcp(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    client = client_from_args(args, env)
    # Run as a script this module is __main__: parity_mcp's `import parity_ci` must find it, not
    # load a second copy whose errors this client's would not be instances of.
    sys.modules.setdefault("parity_ci", sys.modules[__name__])
    try:  # beside this file, and only here: the other commands run without it and its SDK
        import parity_mcp
    except ImportError as exc:
        if exc.name != "parity_mcp":
            raise
        raise ConfigError(
            f"parity_mcp.py is not beside {Path(__file__).name}: fetch it from "
            f"{client.url}/ci/parity_mcp.py, or install the client from the server: "
            f"pip install --no-index --find-links {client.url}/ci/ {DISTRIBUTION}"
        ) from None
    return parity_mcp.serve(client)


def shard_files(manifest: Mapping[str, Any], shard: str | None) -> list[str]:
    """The manifest's files, or with ``shard`` ("I/N") the I-th of N duration-balanced shards."""
    files = list(manifest["files"])
    if shard:
        number, count = parse_shard(shard)
        files = split_into_shards(files, manifest.get("durations") or {}, count)[number - 1]
    return files


def _split_log(client: Client, manifest: Mapping[str, Any], key: str) -> None:
    split = manifest.get("split")
    if split:
        client.log(f"the split of run {split['run']} as pinned at {split['pinned_at']}")
    elif key:  # a server older than pinned splits, or no upload token to pin with
        client.log(f"the split of run {key} is not pinned: shards that start apart may differ")


def command_files(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    if args.manifest:
        manifest = load_manifest(args.manifest)
    else:
        client = client_from_args(args, env)
        ci_run = ci_environment(env)["run"]
        key = (args.run or (f"{ci_run}-{args.backend}" if ci_run else "")) if args.shard else ""
        manifest = client.manifest(
            backend_required(args), attributes=run_attributes(args.attr, env), run=key
        )
        _split_log(client, manifest, key)
    files = shard_files(manifest, args.shard)
    if not files:
        _log("no test files to run here (is there a current run of the reference?)")
    sys.stdout.write("".join(f"{path}\n" for path in files))
    return EXIT_OK


def _parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    settings = argparse.ArgumentParser(add_help=False)
    group = settings.add_argument_group("server")
    group.add_argument("--url", help="the parity server (default: $PARITY_URL)")
    group.add_argument("--token", help="an upload token of the project (default: $PARITY_TOKEN)")
    group.add_argument("--project", help="the project's slug (default: $PARITY_PROJECT)")
    group.add_argument(
        "--retries", type=int, default=RETRIES, help=f"retries per request (default {RETRIES})"
    )
    group.add_argument(
        "--oidc",
        action="store_true",
        help="authenticate with the CI's OIDC token, not a secret (falls back to PARITY_TOKEN)",
    )
    group.add_argument(
        "--oidc-audience",
        default=env.get("PARITY_OIDC_AUDIENCE") or OIDC_AUDIENCE,
        help=f"the audience GitHub's token is requested for (default: $PARITY_OIDC_AUDIENCE "
        f"or {OIDC_AUDIENCE}; the server's PARITY_OIDC_AUDIENCE)",
    )
    backend = argparse.ArgumentParser(add_help=False)
    backend.add_argument(
        "--backend",
        default=env.get("PARITY_BACKEND") or None,
        help="the backend's name, e.g. tpu (default: $PARITY_BACKEND)",
    )
    backend.add_argument(
        "--attr",
        action="append",
        metavar="KEY=VALUE",
        help="what the run ran on, repeatable: --attr arch=gfx942 --attr rocm=7.1 (default: "
        "$PARITY_ATTR_<KEY>, and PYTORCH_ROCM_ARCH, ROCM_VERSION, CUDA_VERSION; docs/variants.md)",
    )

    parser = argparse.ArgumentParser(
        prog="parity_ci.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--version", action="version", version=f"parity_ci {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    upload = commands.add_parser(
        "upload", parents=[settings, backend], help="upload JUnit XML; wait for the verdict"
    )
    upload.add_argument("paths", nargs="*", metavar="FILE_OR_DIR")
    upload.add_argument(
        "--expected-files",
        metavar="FILE",
        help="the test files this job was told to run, one a line: those no upload of the run "
        "started read as not_run, not missing",
    )
    upload.add_argument(
        "--shard",
        metavar="I/N",
        help="the shard this job ran (as `files --shard` chose it): the verdict names it when "
        "its files must run again",
    )
    upload.add_argument(
        "--run-manifest",
        metavar="FILE",
        action="append",
        help="a run manifest the pytest plugin or the unittest runner wrote (repeatable)",
    )
    _upload_options(upload)
    upload.add_argument(
        "--timeout",
        type=float,
        default=WAIT_TIMEOUT_SECONDS,
        help=f"seconds to wait for ingest (default {WAIT_TIMEOUT_SECONDS:.0f})",
    )
    upload.set_defaults(run_command=command_upload)

    run = commands.add_parser(
        "run",
        parents=[settings, backend],
        help="run each test file of the shard in its own process; upload reports and manifest",
    )
    run.add_argument("--shard", metavar="I/N", help="only shard I of N, balanced by duration")
    run.add_argument("--manifest", metavar="FILE", help="read a saved manifest, not the server")
    run.add_argument(
        "--timeout",
        dest="file_timeout",
        type=float,
        default=None,
        help="seconds one file may run before it is killed (default: no limit)",
    )
    run.add_argument(
        "--reports",
        default="parity-reports",
        help="the folder {junit} reports are written to (default parity-reports)",
    )
    _upload_options(run)
    run.add_argument(
        "--wait-timeout",
        dest="timeout",
        type=float,
        default=WAIT_TIMEOUT_SECONDS,
        help=f"seconds to wait for ingest (default {WAIT_TIMEOUT_SECONDS:.0f})",
    )
    run.add_argument(
        "test_command",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="run once per file; {file} and {junit} are replaced by the file and its report",
    )
    run.set_defaults(run_command=command_run)

    manifest = commands.add_parser(
        "manifest", parents=[settings, backend], help="save the backend's manifest (JSON)"
    )
    manifest.add_argument("-o", "--output", metavar="FILE", help="default: standard output")
    manifest.set_defaults(run_command=command_manifest)

    files = commands.add_parser(
        "files", parents=[settings, backend], help="the test files to run, one a line"
    )
    files.add_argument("--shard", metavar="I/N", help="only shard I of N, balanced by duration")
    files.add_argument("--manifest", metavar="FILE", help="read a saved manifest, not the server")
    files.add_argument(
        "--run",
        help="with --shard: the run key the shards upload under (default: <CI run id>-<backend>);"
        " every shard then splits the list the server first answered under it",
    )
    files.set_defaults(run_command=command_files)

    query = commands.add_parser(
        "query",
        parents=[settings],
        help="read gaps, exemptions, a verdict, tests, targets, suites, compare views or version"
        " transitions; --json for bots"
        " (docs/query.md)",
    )
    query.add_argument("kind", choices=QUERY_KINDS)
    query.add_argument(
        "name", nargs="?", help="compare: the view's name (its tests); none: the views"
    )
    query.add_argument(
        "--backend", help="gaps, exemptions, targets, suites, transitions: of this backend only"
    )
    query.add_argument(
        "--state",
        help="gaps: of this state (failed, missing...); exemptions: of this kind; compare NAME:"
        " of this state (extreme, regressed, missing_sample, missing_basis, no_difference,"
        " improved)",
    )
    query.add_argument("--run", type=int, metavar="ID", help="verdict: the run's id")
    query.add_argument(
        "--q", metavar="TEXT", help="tests: part of a test ID; gaps, exemptions: text they hold"
    )
    query.add_argument("--untracked", action="store_true", help="gaps: the untracked only")
    query.add_argument(
        "--history",
        choices=("flaky", "broken"),
        help="gaps: of tests in this state from history on their backend (docs/history-states.md)",
    )
    query.add_argument(
        "--limit",
        type=int,
        default=QUERY_LIMIT,
        help=f"at most this many items, read page by page (default {QUERY_LIMIT}; 0: all)",
    )
    query.add_argument(
        "--page-size", type=int, default=QUERY_PAGE, help=f"items a request (default {QUERY_PAGE})"
    )
    query.add_argument("--json", action="store_true", help="one JSON document (docs/query.md)")
    query.set_defaults(run_command=command_query)

    mcp = commands.add_parser(
        "mcp",
        parents=[settings],
        help="an MCP server on stdin/stdout: the query reads and exemption proposals for bots "
        "(it needs the MCP SDK: pip install 'mcp~=2.3'; docs/query.md)",
    )
    mcp.set_defaults(run_command=command_mcp)
    return parser


def _upload_options(upload: argparse.ArgumentParser) -> None:
    upload.add_argument("--commit", help="default: the CI's commit, or git rev-parse HEAD")
    upload.add_argument("--branch", help="default: the CI's branch, or git's")
    upload.add_argument(
        "--run", help="groups shard uploads into one run (default: <CI run id>-<backend>)"
    )
    upload.add_argument("--ci-url", help="a link to the CI run (default: from the CI)")
    upload.add_argument(
        "--complete", action="store_true", help="the run's last upload: complete the run"
    )
    upload.add_argument("--file-hint", help="the test file of XML that names none (__main__)")
    upload.add_argument(
        "--suite",
        help="the suite or CI job this upload is of (default: $PARITY_SUITE, $TEST_CONFIG, "
        "$GITHUB_JOB or $CI_JOB_NAME; docs/suites.md)",
    )
    upload.add_argument(
        "--probe",
        action="store_true",
        help="a probe run (exempted tests ran too): never current, it flags the exemptions that "
        "pass now (default: when the reports say so)",
    )
    upload.add_argument(
        "--exemptions-version",
        metavar="VERSION",
        help="the manifest version of the exemptions the run applied (default: from the reports)",
    )
    upload.add_argument("--wait", action="store_true", help="wait for ingest, print the verdict")
    upload.add_argument("--gate", action="store_true", help="exit 1 when the verdict is not ok")
    upload.add_argument("--summary", metavar="FILE", help="write the verdict as Markdown")


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    args = _parser(env).parse_args(argv)
    try:
        return args.run_command(args, env)
    except ParityError as exc:
        _log(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _human_bytes(size: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1000
    return f"{size:,.1f} GB"


if __name__ == "__main__":
    sys.exit(main())
