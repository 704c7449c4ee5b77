"""intel/torch-xpu-ops' skip lists (``test/xpu/skip_list_common.py``, ``skip_list_arc.py``,
``_mtl``, ``_win``): a module-level dict literal of test files to the cases skipped in them::

    skip_dict = {
        "test_ops_xpu.py": (
            "test_compare_cpu_nn_functional_conv3d_xpu_float32",  # a reason, or an issue URL
        ),
        "test_sparse_xpu.py": None,  # None: the whole file
    }

The file is parsed, never run. The cases are ``pytest -k`` terms (the runner turns the tuple
into ``-k "not (a or b)"``), so each matches every test of the file whose ID contains it:
``<prefix><file>::*<case>*`` (``prefix`` places Intel's file names among the project's paths).
A comment at the end of a case's line is its reason, and an issue URL in it makes the entry
tracked; otherwise the entry is ``kind`` (default intended) with the comment or a note naming
the list. A per-SKU file is read with a ``condition`` (``arch == arc``) or onto one backend.

Writing gives one ``skip_dict = {...}`` in that layout, files and cases in the order read.

Pure: no Django.
"""

import ast
import io
import tokenize

from parity.pure.list_formats.entries import (
    ListEntry,
    ListFormatError,
    ListRead,
    Unread,
    Written,
    issue_in,
    kind_checked,
    ordered,
)

VARIABLE = "skip_dict"


def read(
    text: str,
    *,
    source_name: str = "",
    prefix: str = "",
    condition: str = "",
    backends: tuple[str, ...] = (),
    kind: str = "intended",
) -> ListRead:
    kind_checked(kind)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise ListFormatError(f"Not Python: {where}{exc.msg}.") from None
    found = _assigned_dict(tree)
    if found is None:
        raise ListFormatError(f"No module-level '{VARIABLE} = {{...}}' dict in the file.")
    variable, node = found
    comments = _line_comments(text)
    note = f"Skipped in {source_name}" if source_name else "Skipped by its skip list"
    read = ListRead()
    common = {"prefix": prefix} if prefix else {}
    if variable != VARIABLE:
        common["variable"] = variable
    for position, (key, value) in enumerate(zip(node.keys, node.values, strict=True)):
        where = f"line {value.lineno}"
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value):
            read.unread.append(Unread(where, "a key is a test file's name, in quotes"))
            continue
        file = key.value
        if isinstance(value, ast.Constant) and value.value is None:
            comment = comments.get(value.lineno, "")
            read.entries.append(
                _entry(
                    f"{prefix}{file}",
                    comment,
                    note,
                    kind,
                    condition,
                    backends,
                    where,
                    {**common, "file": file, "order": [position]},
                )
            )
            continue
        if not isinstance(value, ast.Tuple | ast.List):
            read.unread.append(Unread(f"{where}: '{file}'", "expected a tuple of cases or None"))
            continue
        for index, case in enumerate(value.elts):
            here = f"line {case.lineno}"
            if not (isinstance(case, ast.Constant) and isinstance(case.value, str)):
                read.unread.append(Unread(f"{here}: '{file}'", "a case is a string literal"))
                continue
            if not case.value.strip() or "*" in case.value or "?" in case.value:
                read.unread.append(Unread(f"{here}: '{case.value}'", "not a plain -k term"))
                continue
            extra = {**common, "file": file, "case": case.value, "order": [position, index]}
            if isinstance(value, ast.List):
                extra["list"] = True
            read.entries.append(
                _entry(
                    f"{prefix}{file}::*{case.value}*",
                    comments.get(case.lineno, ""),
                    note,
                    kind,
                    condition,
                    backends,
                    here,
                    extra,
                )
            )
    return read


def _entry(match, comment, note, kind, condition, backends, where, extra) -> ListEntry:
    issue = issue_in(comment)
    if comment:
        extra = {**extra, "comment": comment}
    return ListEntry(
        match=match,
        kind="tracked" if issue else kind,
        backends=backends,
        reason=comment or note,
        issue=issue,
        condition=condition,
        extra=extra,
        where=where,
    )


def _assigned_dict(tree: ast.Module) -> tuple[str, ast.Dict] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if VARIABLE in names or (names and names[0].endswith(VARIABLE)):
                return (VARIABLE if VARIABLE in names else names[0]), node.value
    return None


def _line_comments(text: str) -> dict[int, str]:
    """The comment ending each line, without its ``#``."""
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError):
        pass  # ast parsed it: a tokenizer complaint only loses comments
    return comments


def write(entries: list[ListEntry]) -> Written:
    files: dict[str, list[tuple[str, str]] | str | None] = {}
    skipped: list[Unread] = []
    variable = VARIABLE
    lists: set[str] = set()
    for entry in ordered(entries):
        spelled = _spelled(entry)
        if spelled is None:
            skipped.append(Unread(entry.match, "not a file or a file's -k term"))
            continue
        file, case = spelled
        variable = entry.extra.get("variable", variable)
        comment = _comment(entry)
        if case is None:
            files[file] = comment  # the whole file: its cases, if any, say nothing more
            continue
        cases = files.setdefault(file, [])
        if not isinstance(cases, list):
            skipped.append(Unread(entry.match, f"'{file}' is skipped whole already"))
            continue
        if entry.extra.get("list"):
            lists.add(file)
        cases.append((case, comment))
    return Written(_dict_text(variable, files, lists), skipped)


def _comment(entry: ListEntry) -> str:
    if "comment" in entry.extra or "file" not in entry.extra:
        text = entry.reason
        if entry.issue and entry.issue not in text:
            text = f"{text} {entry.issue}".strip()
        return text
    return ""  # the reason was the note naming the list, not a comment in it


def _spelled(entry: ListEntry) -> tuple[str, str | None] | None:
    extra = entry.extra
    if "file" in extra:
        return extra["file"], extra.get("case")
    file, sep, rest = entry.match.partition("::")
    if not sep:
        return (file, None) if "*" not in file and "?" not in file else None
    if rest.startswith("*") and rest.endswith("*") and len(rest) > 2:
        case = rest[1:-1]
        if "*" not in case and "?" not in case and "*" not in file:
            return file, case
    return None


def _dict_text(variable: str, files: dict, lists: set[str]) -> str:
    lines = [f"{variable} = {{"]
    for file, value in files.items():
        if not isinstance(value, list):
            lines.append(f"    {_quoted(file)}: None,{_tail(value)}")
            continue
        opening, closing = ("[", "]") if file in lists else ("(", ")")
        lines.append(f"    {_quoted(file)}: {opening}")
        lines += [f"        {_quoted(case)},{_tail(comment)}" for case, comment in value]
        lines.append(f"    {closing},")
    lines += ["}", ""]
    return "\n".join(lines)


def _tail(comment: str | None) -> str:
    return f"  # {comment}" if comment else ""


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
