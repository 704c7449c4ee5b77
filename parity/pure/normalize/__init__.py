"""Pure normalization for ingest: canonical test ids, skip/failure reasons, issue references.

Nothing here imports Django; ``ingest.pipeline`` calls these per parsed <testcase>.
"""

from parity.pure.normalize.ids import (
    TestIdentifier,
    TestIdentity,
    display_id,
    document_hint,
    test_identity,
)
from parity.pure.normalize.issues import IssueRef, extract_issue_refs
from parity.pure.normalize.reasons import (
    CanonicalReason,
    canonical_reason,
    expected_failure_reason,
    is_expected_failure,
)
from parity.pure.normalize.rules import (
    DEFAULT_RULES,
    Rewrite,
    Rules,
    RulesError,
    rules_from_dict,
    rules_to_dict,
    validate_rules,
)
from parity.pure.normalize.suites import suite_of, suite_qualified

__all__ = [
    "DEFAULT_RULES",
    "CanonicalReason",
    "IssueRef",
    "Rewrite",
    "Rules",
    "RulesError",
    "TestIdentifier",
    "TestIdentity",
    "canonical_reason",
    "display_id",
    "document_hint",
    "expected_failure_reason",
    "extract_issue_refs",
    "is_expected_failure",
    "rules_from_dict",
    "rules_to_dict",
    "suite_of",
    "suite_qualified",
    "test_identity",
    "validate_rules",
]
