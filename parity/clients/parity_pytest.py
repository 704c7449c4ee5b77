"""parity's pytest plugin: apply a backend's exemptions to the collected tests.

One file, Python 3.8 or newer, standard library and pytest only; it talks to the server through
``parity_ci.py``, which must sit beside it. Fetch both from the server and put their folder on
``sys.path``::

    curl -fsSO "$PARITY_URL/ci/parity_ci.py" -fsSO "$PARITY_URL/ci/parity_pytest.py"
    PYTHONPATH=. pytest -p parity_pytest --parity-backend tpu --junitxml=test-reports/tpu.xml

At collection the plugin sends every collected node ID to the server's resolve API once (the
server names them with the project's own rules, so ``TestOpsXLA::test_add_xla_float32`` matches
an exemption written for ``TestOps::test_add_float32``), then:

- a ``tracked`` or ``intended`` test is skipped with the exemption's message,
  ``<reason> (<issue URL>)``;
- a ``quarantine`` test runs; if it fails, pytest reports it skipped with that message, so
  the run does not fail and the JUnit shows ``<skipped message="… (<issue URL>)">``, which
  parity ingests as a tracked skip.

With ``--parity-probe`` nothing is skipped or turned into a skip: the exempted tests run too,
so a weekly probe job learns which exemptions pass now (upload its report as a probe run:
``parity_ci.py upload --probe``; the report says so itself too).

The report (``--junitxml``) records the manifest version of the exemptions applied and whether
the run was a probe, as ``<properties>`` of its test suite; ``parity_ci.py upload`` sends them
with the upload, so the verdict says which exemption list the run used.

Settings: ``--parity-backend`` (or ``PARITY_BACKEND``); ``--parity-attr key=value``
(repeatable; default: ``PARITY_ATTR_<KEY>`` and CI conventions, as for ``parity_ci.py``: they
pick the backend's variant and the conditioned exemptions); ``PARITY_URL``, ``PARITY_TOKEN``,
``PARITY_PROJECT`` as for ``parity_ci.py``; ``--parity-probe`` (or ``PARITY_PROBE=1``).
``parity_ci.py run`` sets these for each file's process, and loads the plugin there with
``PYTEST_PLUGINS``. Without a backend the plugin does nothing. When the
server cannot be reached the session stops with the reason, unless ``--parity-optional`` is
given: then it warns and runs every test.

``--parity-run-manifest FILE`` appends what the session runs to a run manifest (JSON Lines) for
``parity_ci.py upload --run-manifest FILE``: each collected test file once collection is done,
and how the session ended (its exit status, whether ``--junitxml`` was asked for, the file's
test count) at its end. A session that crashes (a segfault) leaves its files started and
unfinished: their tests read ``crashed`` on the server, not ``missing``.

Offline: ``--parity-manifest FILE`` reads a manifest saved by ``parity_ci.py manifest -o FILE``
instead of asking the server. Its ``match`` patterns are then applied to the node IDs exactly
as pytest names them, without the server's normalization: an exemption written for
``TestOps::test_add_float32`` does not reach the device-suffixed
``TestOpsXLA::test_add_xla_float32``. Resolve online for such suites.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from typing import Sequence

import parity_ci
import pytest
from _pytest import junitxml  # its report's properties: pytest offers no public hook for them

SKIPPING_KINDS = parity_ci.SKIPPING_KINDS
QUARANTINE = "quarantine"
SEP = "::"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("parity", "parity exemptions (parity_pytest)")
    group.addoption(
        "--parity-backend",
        metavar="NAME",
        default=os.environ.get("PARITY_BACKEND") or None,
        help="apply this backend's exemptions (default: $PARITY_BACKEND; none: do nothing)",
    )
    group.addoption(
        "--parity-attr",
        metavar="KEY=VALUE",
        action="append",
        help="what this run runs on, repeatable: --parity-attr arch=gfx942 (default: "
        "$PARITY_ATTR_<KEY> and CI conventions; docs/variants.md)",
    )
    group.addoption(
        "--parity-manifest",
        metavar="FILE",
        help="read exemptions from a manifest saved by 'parity_ci.py manifest -o FILE' "
        "(patterns are matched against node IDs as they are, not normalized)",
    )
    group.addoption(
        "--parity-probe",
        action="store_true",
        default=os.environ.get("PARITY_PROBE") == "1",
        help="run the exempted tests too (a probe run, to learn which exemptions pass now; "
        "default: $PARITY_PROBE is 1)",
    )
    group.addoption(
        "--parity-run-manifest",
        metavar="FILE",
        help="append the test files this session runs, and how it ended, to a run manifest "
        "for 'parity_ci.py upload --run-manifest FILE' (a crash leaves them unfinished)",
    )
    group.addoption(
        "--parity-optional",
        action="store_true",
        help="when the parity server cannot be reached, warn and run every test",
    )
    group.addoption(
        "--parity-retries",
        metavar="N",
        type=int,
        default=parity_ci.RETRIES,
        help=f"retries of the resolve request (default {parity_ci.RETRIES})",
    )


def pytest_configure(config: pytest.Config) -> None:
    run_manifest = config.getoption("parity_run_manifest")
    if run_manifest:
        report = bool(getattr(config.option, "xmlpath", None))
        config.pluginmanager.register(RunManifestPlugin(run_manifest, report=report))
    backend = config.getoption("parity_backend")
    manifest = config.getoption("parity_manifest")
    if not backend and not manifest:
        return
    try:
        if manifest:
            exemptions = ManifestExemptions(parity_ci.load_manifest(manifest), backend=backend)
        else:
            exemptions = ServerExemptions(
                backend,
                retries=config.getoption("parity_retries"),
                attributes=parity_ci.run_attributes(config.getoption("parity_attr"), os.environ),
            )
    except parity_ci.ParityError as exc:
        raise pytest.UsageError(f"parity: {exc}") from None
    plugin = ExemptionsPlugin(
        exemptions,
        optional=config.getoption("parity_optional"),
        probe=config.getoption("parity_probe"),
    )
    config.pluginmanager.register(plugin, "parity-exemptions")


class RunManifestPlugin:
    """Writes the session's entries of the run manifest: a start line per collected file, then
    an end line per file (``parity_ci.run_manifest_append``)."""

    def __init__(self, path: str, *, report: bool) -> None:
        self.path = path
        self.report = report
        self.files: Counter = Counter()
        self.started = time.monotonic()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.files = Counter(item.nodeid.split(SEP, 1)[0] for item in session.items)
        for file in self.files:
            parity_ci.run_manifest_append(self.path, {"file": file, "started": True})

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        duration = round(time.monotonic() - self.started, 3)
        for file, tests in self.files.items():
            entry = {
                "file": file,
                "started": True,
                "exit_code": int(exitstatus),
                "duration": duration,
                "report": self.report,
                "tests": tests if self.report else None,
            }
            parity_ci.run_manifest_append(self.path, entry)


class ServerExemptions:
    """Exemptions named by the server's resolve API."""

    def __init__(
        self, backend: str, *, retries: int, attributes: dict[str, str] | None = None
    ) -> None:
        self.backend = backend
        self.attributes = attributes or {}
        self.client = parity_ci.Client.from_env(retries=max(retries, 0))
        self.version = ""

    def describe(self) -> str:
        return f"{self.backend} on {self.client.url}"

    def find(self, node_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        exempted = self.client.resolve(self.backend, node_ids, attributes=self.attributes)
        self.version = self.client.last_version
        return {node_ids[e["index"]]: (e["kind"], e["message"]) for e in exempted}


class ManifestExemptions:
    """Exemptions of a saved manifest, their patterns matched against node IDs as they are.
    The manifest lists them most specific first, so the first that matches applies."""

    def __init__(self, manifest: dict, *, backend: str | None) -> None:
        if backend and manifest.get("backend") not in (None, backend):
            raise pytest.UsageError(
                f"parity: the manifest is of backend '{manifest['backend']}', "
                f"not '{backend}' (--parity-backend)"
            )
        self.backend = backend or manifest.get("backend") or "?"
        self.version = manifest.get("version") or ""
        self.patterns = [
            (pattern_regex(e["match"]), e["kind"], e["message"])
            for e in manifest.get("exemptions", [])
        ]

    def describe(self) -> str:
        return f"{self.backend} from a saved manifest"

    def find(self, node_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for node_id in node_ids:
            for regex, kind, message in self.patterns:
                if regex.match(node_id):
                    found[node_id] = (kind, message)
                    break
        return found


def hw_classifications(items: list) -> dict[str, str]:
    """``{"<file>::<Class>": label}`` of the collected test classes that carry PyTorch's
    ``hw_classification`` attribute (an enum member or a string: GENERIC, ACCELERATOR). The
    server declares a GENERIC class's tests not applicable on the other backends."""
    found: dict[str, str] = {}
    for item in items:
        cls = getattr(item, "cls", None)
        label = getattr(cls, "hw_classification", None) if cls is not None else None
        if label is None:
            continue
        name = getattr(label, "name", None) or str(label).rsplit(".", 1)[-1]
        found[f"{item.nodeid.split(SEP, 1)[0]}{SEP}{cls.__name__}"] = name.upper()
    return found


class ExemptionsPlugin:
    def __init__(
        self,
        exemptions: ServerExemptions | ManifestExemptions,
        *,
        optional: bool,
        probe: bool = False,
    ):
        self.exemptions = exemptions
        self.optional = optional
        self.probe = probe
        self.quarantined: dict[str, str] = {}  # node ID -> message
        self.counts: dict[str, int] = {}
        self.quarantine_failures: list[str] = []
        self.unavailable = ""
        self.resolved = False
        self.classified: dict[str, str] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        found = self._find([item.nodeid for item in items])
        self.resolved = True
        self.classified = hw_classifications(items)
        self._record_applied(config)
        for item in items:
            kind, message = found.get(item.nodeid, ("", ""))
            if kind:
                self.counts[kind] = self.counts.get(kind, 0) + 1
            if self.probe:  # every test runs as it is, and reports what it does
                continue
            if kind in SKIPPING_KINDS:
                item.add_marker(pytest.mark.skip(reason=message))
            elif kind == QUARANTINE:
                self.quarantined[item.nodeid] = message

    def _record_applied(self, config: pytest.Config) -> None:
        """Write the exemption list's version, and whether this is a probe, into the JUnit
        report's properties, where ``parity_ci.py upload`` reads them."""
        key = getattr(junitxml, "xml_key", None)  # pytest 7+; pytest 6 kept it in config._xml
        xml = config.stash.get(key, None) if key is not None else getattr(config, "_xml", None)
        if xml is None:
            return
        if self.exemptions.version and not self.unavailable:
            xml.add_global_property(parity_ci.PROPERTY_VERSION, self.exemptions.version)
        if self.probe:
            xml.add_global_property(parity_ci.PROPERTY_PROBE, "true")
        if self.classified:
            labels = json.dumps(self.classified, sort_keys=True, separators=(",", ":"))
            xml.add_global_property(parity_ci.PROPERTY_HW_CLASSIFICATION, labels)

    def _find(self, node_ids: list[str]) -> dict[str, tuple[str, str]]:
        if not node_ids:
            return {}
        try:
            return self.exemptions.find(node_ids)
        except parity_ci.ServerUnreachable as exc:
            if not self.optional:
                raise pytest.UsageError(
                    f"parity: {exc}. Pass --parity-optional to run every test when the server "
                    "cannot be reached."
                ) from None
            self.unavailable = str(exc)
            return {}
        except parity_ci.ParityError as exc:
            raise pytest.UsageError(f"parity: {exc}") from None

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        report = outcome.get_result()
        message = self.quarantined.get(item.nodeid)
        if message is None or not report.failed:
            return
        # Reported as pytest reports a skip marker: (file, line, reason) that the terminal
        # and --junitxml read. The failure itself is listed in the terminal summary.
        path, line = item.reportinfo()[:2]
        report.outcome = "skipped"
        report.longrepr = (str(path), (line or 0) + 1, message)
        self.quarantine_failures.append(f"{item.nodeid} ({call.when})")

    def pytest_report_header(self) -> str:
        probe = " (probe: exempted tests run too)" if self.probe else ""
        return f"parity: exemptions of {self.exemptions.describe()}{probe}"

    def pytest_terminal_summary(self, terminalreporter) -> None:
        write = terminalreporter.write_line
        if self.unavailable:
            write(f"parity: WARNING: no exemptions applied: {self.unavailable}", yellow=True)
            return
        if not self.resolved:  # the session stopped before collection ended
            return
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(self.counts.items()))
        ran = " (probe: they ran)" if self.probe else ""
        write(f"parity: exempted tests of {self.exemptions.backend}: {counts or 'none'}{ran}")
        for failure in self.quarantine_failures:
            write(f"parity: quarantined test failed, reported as skipped: {failure}")


# The server's rules for an exemption's ``match`` over node IDs, kept in parity_ci (``run`` counts
# the exemptions of its files with them).
pattern_regex = parity_ci.pattern_regex
