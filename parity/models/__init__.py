from parity.models.projects import Backend, Project, UploadToken
from parity.models.reasons import Reason, TrackingIssue
from parity.models.results import Outcome, Result, TestCase
from parity.models.runs import Run, Upload, UploadFile, UploadStatus

__all__ = [
    "Backend",
    "Outcome",
    "Project",
    "Reason",
    "Result",
    "Run",
    "TestCase",
    "TrackingIssue",
    "Upload",
    "UploadFile",
    "UploadStatus",
    "UploadToken",
]
