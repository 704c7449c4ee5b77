"""Every `pip install` of the CI client that the docs, the templates and the client's own messages
write installs it from the parity server's `/ci/` folder and nothing else (`--no-index
--find-links "$PARITY_URL/ci/"`), under its own free distribution name: `parity-ci` on PyPI is an
unrelated project ("Behavioral regression gate for non-deterministic LLM systems", issue 45 #6),
which a plain `pip install 'parity-ci[mcp]'` installed over the served client."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from parity import ci_wheel
from parity.clients import parity_ci
from tests.docs.test_docs import FENCE, INLINE, PAGES, REPO_DIR

# The client's names, old and new, as a requirement may spell them (extras, a pin, a URL).
CLIENT = re.compile(r"^parity[-_.](?:dashboard[-_.])?ci(?:\b|$)", re.I)
# What a template pins the client as: a variable set from the name (action.yml, GitLab's).
PIN_VARIABLES = ("$PARITY_PIN", "PARITY_ACTION_VERSION")
OPTIONS_WITH_VALUES = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "--trusted-host",
}
PIP_INSTALL = re.compile(r"\bpip3? install\b([^\n`]*)")
# Where a command to run is written besides the docs' pages.
TEMPLATES = [REPO_DIR / "action.yml", REPO_DIR / ".gitlab" / "parity.gitlab-ci.yml"]
CLIENT_SOURCES = [
    REPO_DIR / "parity" / "clients" / name
    for name in ("parity_ci.py", "parity_mcp.py", "parity_pytest.py", "parity_unittest.py")
]
CLIENT_README = REPO_DIR / "parity" / "clients" / "README.md"


def _tokens(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # a quote the line breaks off (a string literal ends mid-command)
        return [token.strip("'\"") for token in arguments.split()]


def code_of(page: Path) -> str:
    """A page's fenced blocks and its inline code spans, a span that breaks a line joined."""
    text = page.read_text(encoding="utf-8")
    spans = [span.replace("\n", " ") for span in INLINE.findall(FENCE.sub("", text))]
    return "\n".join(FENCE.findall(text) + spans).replace("\\\n", " ")


def install_lines() -> list[tuple[str, str]]:
    """Each `pip install ...` written, as (where, its arguments); a shell variable set in the same
    file (`PARITY_INDEX="${PARITY_URL%/}/ci/"`) is read as its value."""
    texts = [(p.relative_to(REPO_DIR).as_posix(), code_of(p)) for p in [*PAGES, CLIENT_README]]
    texts += [
        (p.relative_to(REPO_DIR).as_posix(), p.read_text(encoding="utf-8").replace("\\\n", " "))
        for p in [*TEMPLATES, *CLIENT_SOURCES]
    ]
    found = []
    for where, text in texts:
        values = dict(re.findall(r"\b([A-Z_]+)=\"([^\"\n]*)\"", text))
        for match in PIP_INSTALL.finditer(text):
            arguments = match.group(1)
            for name, value in values.items():
                arguments = arguments.replace(f'"${name}"', f'"{value}"')
            found.append((where, arguments))
    return found


def requirements(tokens: list[str]) -> list[str]:
    found, skip = [], False
    for token in tokens:
        if skip:
            skip = False
        elif token in OPTIONS_WITH_VALUES:
            skip = True
        elif not token.startswith("-"):
            found.append(token)
    return found


def from_the_server_only(tokens: list[str]) -> bool:
    """``--no-index`` and ``--find-links`` the served ``/ci/`` folder: pip sees nothing else."""
    links = [tokens[i + 1] for i, token in enumerate(tokens[:-1]) if token == "--find-links"]
    return "--no-index" in tokens and any(link.rstrip("/").endswith("/ci") for link in links)


def installs_the_client(arguments: str) -> bool:
    named = [r for r in requirements(_tokens(arguments)) if CLIENT.match(r.lstrip("'\""))]
    return bool(named) or any(pin in arguments for pin in PIN_VARIABLES)


def check(where: str, arguments: str) -> None:
    tokens = _tokens(arguments)
    assert from_the_server_only(tokens), (
        f"{where}: `pip install{arguments}` installs the client from an index: use "
        f'--no-index --find-links "$PARITY_URL/ci/" {parity_ci.DISTRIBUTION}'
    )
    for requirement in requirements(tokens):
        name = re.split(r"[\[=<>@ ;$)]", requirement.strip("'\""), maxsplit=1)[0]
        assert not CLIENT.match(name) or name in (parity_ci.DISTRIBUTION, "{DISTRIBUTION}"), (
            f"{where}: `pip install{arguments}` names '{name}', not {parity_ci.DISTRIBUTION}"
        )


LINES = [
    (where, arguments) for where, arguments in install_lines() if installs_the_client(arguments)
]


@pytest.mark.parametrize(("where", "arguments"), LINES)
def test_every_install_of_the_client_reaches_the_server_only(where, arguments):
    check(where, arguments)


def test_the_install_lines_are_found():
    # The docs, the templates and the client's message each write one: the search is not vacuous.
    assert {"docs/ci.md", "docs/query.md", "README.md", "action.yml"} <= {w for w, _ in LINES}
    assert {".gitlab/parity.gitlab-ci.yml", "parity/clients/parity_ci.py"} <= {w for w, _ in LINES}


@pytest.mark.parametrize(
    "arguments",
    [
        " 'parity-ci[mcp]'",  # the line docs/query.md and the client's error gave
        ' --find-links "$PARITY_URL/ci/" parity-ci',  # the index is still asked
        ' --no-index --find-links "$PARITY_URL/ci/" parity-ci',  # the unrelated project's name
        f" {parity_ci.DISTRIBUTION}",  # a free name today is anyone's tomorrow
    ],
)
def test_the_check_refuses_a_line_that_can_reach_another_project(arguments):
    assert installs_the_client(arguments)
    with pytest.raises(AssertionError):
        check("example", arguments)


def test_the_distribution_is_one_name_and_not_the_unrelated_project():
    assert parity_ci.DISTRIBUTION == ci_wheel.DISTRIBUTION == "parity-dashboard-ci"
    pyproject = (REPO_DIR / "parity" / "clients" / "pyproject.toml").read_text(encoding="utf-8")
    assert f'name = "{parity_ci.DISTRIBUTION}"' in pyproject
    assert ci_wheel.wheel_filename("0.1.0") == "parity_dashboard_ci-0.1.0-py3-none-any.whl"


def test_the_docs_say_nothing_is_published_yet():
    for page in ("docs/ci.md", "docs/github-action.md"):
        text = (REPO_DIR / page).read_text(encoding="utf-8")
        assert "Nothing is published" in text, page


def test_the_mcp_messages_name_no_install_of_another_project(tmp_path):
    # parity_ci.py fetched alone, without parity_mcp.py beside it: the error says how to get it.
    alone = tmp_path / "parity_ci.py"
    alone.write_bytes((REPO_DIR / "parity" / "clients" / "parity_ci.py").read_bytes())
    done = subprocess.run(
        [sys.executable, str(alone), "mcp", "--url", "http://127.0.0.1:9", "--project", "p"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2, done.stderr
    (line,) = [x for x in PIP_INSTALL.finditer(done.stderr)]
    assert installs_the_client(line.group(1))
    check("parity_ci.py mcp's error", line.group(1).replace("http://127.0.0.1:9/ci/", "$U/ci/"))
    # The SDK's hint names the SDK only, from the index it comes from.
    source = (REPO_DIR / "parity" / "clients" / "parity_mcp.py").read_text(encoding="utf-8")
    (hint,) = re.findall(r"INSTALL_HINT = \(\n *\"[^\n]*(pip install [^\n]*)\"\n", source)
    assert not installs_the_client(hint[len("pip install") :]) and "'mcp~=" in hint
