from parity.models.digest import (
    DeliveryStatus,
    DigestDelivery,
    ReasonLinksRecord,
    Subscription,
)
from parity.models.parity import (
    BackendState,
    CurrentOutcome,
    ExemptionList,
    FileCell,
    Gap,
    GapEvent,
    GapEventKind,
    GapState,
    ProbeOutcome,
    ReasonDaily,
    Snapshot,
    Triage,
    TriageKind,
)
from parity.models.projects import Backend, Membership, Project, Role, UploadToken, Visibility
from parity.models.reasons import IssueState, Reason, TrackingIssue
from parity.models.results import FileSeconds, Outcome, Result, TestCase
from parity.models.runs import Run, Upload, UploadFile, UploadStatus
from parity.models.trust import TrustRule

__all__ = [
    "DeliveryStatus",
    "DigestDelivery",
    "ReasonLinksRecord",
    "Subscription",
    "Backend",
    "BackendState",
    "CurrentOutcome",
    "ExemptionList",
    "FileCell",
    "FileSeconds",
    "Gap",
    "GapEvent",
    "GapEventKind",
    "GapState",
    "ProbeOutcome",
    "ReasonDaily",
    "Snapshot",
    "Triage",
    "TriageKind",
    "Membership",
    "Outcome",
    "Project",
    "Reason",
    "Result",
    "Role",
    "Run",
    "TestCase",
    "TrackingIssue",
    "TrustRule",
    "IssueState",
    "Upload",
    "UploadFile",
    "UploadStatus",
    "UploadToken",
    "Visibility",
]
