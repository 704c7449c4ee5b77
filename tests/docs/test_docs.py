"""The documentation is a door that opens: every relative link of README.md, docs/, bench/ and
ARCHITECTURE.md resolves (its file, and its #anchor to a heading there), every `make <target>`,
`manage.py <command>` and `parity_ci.py <subcommand>` they name exists, and docs/settings.md,
.env.example and the settings module name the same variables."""

import importlib
import importlib.util
import re
from pathlib import Path

import pytest
from django.core.management import get_commands

from parity.clients import parity_ci

REPO_DIR = Path(__file__).resolve().parents[2]
README = REPO_DIR / "README.md"
PAGES = [
    README,
    REPO_DIR / "ARCHITECTURE.md",
    REPO_DIR / "bench" / "README.md",
    *sorted((REPO_DIR / "docs").glob("*.md")),
]
# Pages other branches are writing while this one lands (issue 24): linked already, checked as
# soon as they exist. Remove a name once its page is merged.
PENDING: set[str] = set()  # pages another branch is writing
README_MAX_LINES = 150

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
INLINE = re.compile(r"`([^`\n]+(?:\n[^`\n]+)?)`")


def page_id(page: Path) -> str:
    return page.relative_to(REPO_DIR).as_posix()


def code_of(page: Path) -> str:
    """The page's fenced blocks and inline code spans: where a command is named as one to run."""
    text = page.read_text(encoding="utf-8")
    blocks = FENCE.findall(text)
    prose = FENCE.sub("", text)
    return "\n".join(blocks + INLINE.findall(prose)).replace("\\\n", " ")


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, spaces to hyphens, punctuation
    other than hyphens and underscores dropped."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    slugs = set()
    for heading in re.findall(r"^#+ +(.+?) *$", text, re.M):
        plain = re.sub(r"[`*]", "", heading).lower()
        slugs.add(re.sub(r"[^\w\- ]", "", plain).replace(" ", "-"))
    return slugs


def links() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not ours
                found.append((page_id(page), target))
    return found


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_code_fences_are_balanced(page):
    fences = re.findall(r"^```", page.read_text(encoding="utf-8"), re.M)
    assert len(fences) % 2 == 0, f"{page_id(page)} has an unclosed code block"


def test_the_readme_is_a_door():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= README_MAX_LINES


@pytest.mark.parametrize(("page", "target"), links())
def test_every_relative_link_resolves(page, target):
    path, _, anchor = target.partition("#")
    source = REPO_DIR / page
    resolved = (source.parent / path).resolve() if path else source
    name = resolved.relative_to(REPO_DIR).as_posix() if resolved.is_relative_to(REPO_DIR) else ""
    if name in PENDING and not resolved.exists():
        pytest.skip(f"{name} is being written on another branch")
    assert resolved.is_relative_to(REPO_DIR), f"{page}: {target} leaves the repository"
    assert resolved.exists(), f"{page}: {target} names no file"
    if anchor and resolved.suffix == ".md":
        assert anchor in anchors(resolved), f"{page}: {target}: no such heading in {name}"


def named(pattern: str) -> list[tuple[str, str]]:
    return sorted(
        {(page_id(page), name) for page in PAGES for name in re.findall(pattern, code_of(page))}
    )


def make_targets() -> set[str]:
    makefile = (REPO_DIR / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))


@pytest.mark.parametrize(("page", "target"), named(r"\bmake +([a-z][\w-]*)"))
def test_every_make_target_named_exists(page, target):
    assert target in make_targets(), f"{page} names `make {target}`, which the Makefile lacks"


@pytest.mark.parametrize(("page", "command"), named(r"\bmanage\.py +([a-z][a-z_]*)"))
def test_every_management_command_named_exists(page, command):
    assert command in get_commands(), f"{page} names `manage.py {command}`, which is no command"


def client_subcommands() -> set[str]:
    parser = parity_ci._parser({})
    (commands,) = [a for a in parser._actions if a.dest == "command"]
    return set(commands.choices)


# `parity_ci.py upload`, and `parity-ci upload` as the wheel installs it (docs/ci.md).
@pytest.mark.parametrize(
    ("page", "subcommand"), named(r"\bparity(?:_ci\.py|-ci) +([a-z][a-z_-]*)(?![\w.])")
)
def test_every_client_subcommand_named_exists(page, subcommand):
    assert subcommand in client_subcommands(), f"{page} names `parity_ci.py {subcommand}`"


def test_the_docs_name_commands_at_all():
    # The patterns above find something: a page format change must not make them vacuous.
    assert {"demo", "test", "lint"} <= {name for _, name in named(r"\bmake +([a-z][\w-]*)")}
    assert {"create_project", "send_digest"} <= {
        name for _, name in named(r"\bmanage\.py +([a-z][a-z_]*)")
    }
    assert {"upload", "files", "manifest"} <= {
        name for _, name in named(r"\bparity_ci\.py +([a-z][a-z_-]*)(?![\w.])")
    }


def settings_documented() -> set[str]:
    text = (REPO_DIR / "docs" / "settings.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `")]
    return {name for cell in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}


def test_settings_have_one_list():
    """docs/settings.md says what each variable means; .env.example lists the same ones to copy,
    and the settings read no variable the page leaves out."""
    example = (REPO_DIR / ".env.example").read_text(encoding="utf-8")
    in_example = set(re.findall(r"^# ([A-Z][A-Z0-9_]+)=", example, re.M))
    base = (REPO_DIR / "parity" / "settings" / "base.py").read_text(encoding="utf-8")
    read = set(re.findall(r"(?:env_\w+|environ\.get)\(\s*\"([A-Z][A-Z0-9_]+)\"", base))
    documented = settings_documented()
    # Neither can come from .env: one picks the settings module, the other names the file.
    assert documented - in_example == {"DJANGO_SETTINGS_MODULE", "PARITY_ENV_FILE"}
    assert in_example <= documented
    assert read, "the pattern finds the settings' variables"
    assert read <= documented, sorted(read - documented)


# --- ARCHITECTURE.md names what exists ---------------------------------------------------------

ARCHITECTURE = REPO_DIR / "ARCHITECTURE.md"
CODE_DIRS = ("ingest/", "parity/", "tests/", "templates/", "static/", "bench/", "tools/", "docker/")


def architecture_names() -> list[tuple[str, str]]:
    """(folder, name) for every code span of ARCHITECTURE.md that names a module, a file or a
    folder: ``parity.tasks.run_completed``, ``parity/models/sql.py``, and, under a "### `ingest/`"
    heading, ``services.py`` or, in the bullet of ``writer/``, its ``known.py``."""
    found = []
    section = bullet = ""
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^#+ .*?`([\w/]+/)`", line)
        if heading or line.startswith("## "):
            section, bullet = (heading.group(1) if heading else ""), ""
            continue
        spans = re.findall(r"`([^`\s]+)`", line)
        if line.startswith("- "):
            bullet = spans[0] if spans and spans[0].endswith("/") else ""
        for span in spans:
            if re.fullmatch(r"(ingest|parity)(\.\w+)+", span) and not span.endswith(".py"):
                found.append(("", span))
            elif "…" in span:
                continue  # an abbreviation (`tests/ingest/…`), not a name
            elif re.fullmatch(r"[\w./-]+(\.py|/)", span) or span.startswith(CODE_DIRS):
                found.append((section + (bullet if span != bullet else ""), span))
    return found


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            continue
        value = importlib.import_module(module)
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def exists(folder: str, name: str) -> bool:
    """``name`` in the bullet's folder, else in its section's, else from the repository's root."""
    candidates = [REPO_DIR / folder / name, REPO_DIR / name]
    if folder.count("/") > 1:
        candidates.insert(1, REPO_DIR / folder.split("/", 1)[0] / name)
    return any(path.exists() for path in candidates)


def named_thing_exists(section: str, name: str) -> bool:
    if re.fullmatch(r"(ingest|parity)(\.\w+)+", name) and not name.endswith(".py"):
        return resolves(name)
    return exists(section, name)


def test_architecture_names_modules_that_exist():
    names = architecture_names()
    assert len(names) > 80, "the pattern finds the code map's names"
    missing = [name for section, name in names if not named_thing_exists(section, name)]
    assert not missing, f"ARCHITECTURE.md names what does not exist: {missing}"


def test_architecture_lists_every_wall():
    config = (REPO_DIR / ".importlinter").read_text(encoding="utf-8")
    contracts = re.findall(r"^\[importlinter:contract:([\w-]+)\]", config, re.M)
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert len(contracts) >= 9
    assert [c for c in contracts if f"`{c}`" not in text] == []
