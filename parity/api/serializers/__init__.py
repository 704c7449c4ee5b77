"""Shapes of the read API (the field names are the contract) and of its query parameters, one
module per resource. Output serializers read the selectors' dataclasses and rows; none of them
writes. The helpers both APIs share (path parameters, documented refusals) are
``parity.web.openapi``."""

from parity.api.serializers.compare import TestInViewSerializer
from parity.api.serializers.exemptions import (
    TriageCreateSerializer,
    TriageSerializer,
    TriagesQuery,
)
from parity.api.serializers.gaps import (
    AlignedGapSerializer,
    GapSerializer,
    GapsQuery,
    IssueSerializer,
    UnrunSuiteSerializer,
)
from parity.api.serializers.lists import (
    IMPORT_FORMATS,
    ListExportQuery,
    ListImportReportSerializer,
    ListImportSerializer,
)
from parity.api.serializers.manifest import (
    MAX_RESOLVE_TESTS,
    ExemptionSerializer,
    ManifestQuery,
    ManifestSerializer,
    ResolvedSerializer,
    ResolveRequestSerializer,
    ResolveSerializer,
    RunnerTestsField,
)
from parity.api.serializers.parity import (
    BackendParitySerializer,
    CellSerializer,
    FileRowSerializer,
    GapCountsSerializer,
    ParityQuery,
    ParitySerializer,
)
from parity.api.serializers.reasons import (
    NoReasonSerializer,
    ReasonTrendSerializer,
    SkipReasonListSerializer,
    SkipReasonSerializer,
    TrendDaySerializer,
    TrendQuery,
)
from parity.api.serializers.testcases import (
    BackendHistorySerializer,
    RunOutcomeSerializer,
    TestCaseHistorySerializer,
    TestCaseSerializer,
    TestsQuery,
)
from parity.api.serializers.verdict import (
    OpenedCountsSerializer,
    VerdictGapSerializer,
    VerdictQuery,
    VerdictSerializer,
)

__all__ = [
    "IMPORT_FORMATS",
    "ListExportQuery",
    "ListImportReportSerializer",
    "ListImportSerializer",
    "ParityQuery",
    "GapsQuery",
    "AlignedGapSerializer",
    "TestsQuery",
    "GapCountsSerializer",
    "BackendParitySerializer",
    "CellSerializer",
    "FileRowSerializer",
    "ParitySerializer",
    "IssueSerializer",
    "UnrunSuiteSerializer",
    "GapSerializer",
    "SkipReasonSerializer",
    "NoReasonSerializer",
    "SkipReasonListSerializer",
    "TrendDaySerializer",
    "TrendQuery",
    "ReasonTrendSerializer",
    "TestCaseSerializer",
    "RunOutcomeSerializer",
    "BackendHistorySerializer",
    "TestCaseHistorySerializer",
    "TestInViewSerializer",
    "OpenedCountsSerializer",
    "VerdictGapSerializer",
    "VerdictSerializer",
    "VerdictQuery",
    "TriageCreateSerializer",
    "TriageSerializer",
    "TriagesQuery",
    "MAX_RESOLVE_TESTS",
    "ManifestQuery",
    "ExemptionSerializer",
    "ManifestSerializer",
    "RunnerTestsField",
    "ResolveRequestSerializer",
    "ResolvedSerializer",
    "ResolveSerializer",
]
