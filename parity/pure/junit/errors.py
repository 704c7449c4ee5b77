"""The parser's exceptions: each one's str() is a clear, user-facing sentence."""


class JUnitError(Exception):
    """Base of every parse error; str(e) is a clear, user-facing sentence."""


class MalformedXML(JUnitError):
    """Not well-formed XML: empty, truncated, plain text, junk after the root."""


class ForbiddenXML(JUnitError):
    """A DTD, entity declaration or external reference: refused before anything is expanded."""


class NotJUnit(JUnitError):
    """Well-formed XML whose root element is not <testsuites> or <testsuite>."""


class OverLimit(JUnitError):
    """A name or a single XML token past ``ParseLimits``: refused while it is being read."""
