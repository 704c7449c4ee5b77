"""How to run one test on one backend: a backend's command template (``Backend.reproduce_command``)
with the test's names filled in. Pure: strings in, a string out.

Placeholders: ``{file}`` (``test/test_ops.py``), ``{class}`` (``TestOps``), ``{name}``
(``test_add``) and ``{nodeid}``, the test's real ID as pytest takes it
(``test/test_ops.py::TestOps::test_add``). A test that its report ran in several suites is
named as its runner names it, without the suite label parity adds
(``parity.pure.normalize.suites``).
Values are put in as they are, unquoted: a template quotes them where its shell needs it
(``pytest '{nodeid}'``). Anything else in braces is left alone, so shell syntax such as
``${HOME}`` survives; a bare ``{word}`` that is not a placeholder is a mistake
``template_errors`` names before the template is saved.
"""

import re

from parity.pure.normalize import display_id, suite_of

PLACEHOLDERS = ("file", "class", "name", "nodeid")
_PLACEHOLDER = re.compile(r"\{(file|class|name|nodeid)\}")
_CLASS_AND_SEPARATOR = re.compile(r"\{class\}(?:\.|::)")
# A brace pair holding a word, not part of shell's ${...}.
_BRACED_WORD = re.compile(r"(?<!\$)\{(\w+)\}")


def reproduce_command(template: str, *, file: str, class_name: str, name: str) -> str:
    """The command that runs this test on the template's backend; "" without a template. A
    test without a class drops the separator after ``{class}`` too (``{class}.{name}`` is
    ``test_x``, not ``.test_x``)."""
    if not class_name:
        template = _CLASS_AND_SEPARATOR.sub("", template)
    name, _ = suite_of(name)
    values = {
        "file": file,
        "class": class_name,
        "name": name,
        "nodeid": display_id(file, class_name, name),
    }
    return _PLACEHOLDER.sub(lambda match: values[match[1]], template.strip())


def template_errors(template: str) -> list[str]:
    """What is wrong with a command template: each unknown ``{placeholder}`` it holds."""
    unknown = [word for word in _BRACED_WORD.findall(template) if word not in PLACEHOLDERS]
    known = ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
    return [f"Unknown placeholder {{{word}}}: use {known}." for word in dict.fromkeys(unknown)]
