"""Send files through the upload API the way CI does, for tests that need stored results."""

from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient


def post_upload(
    api: APIClient,
    *files: Path | tuple[str, bytes],
    project: str = "pytorch-xla",
    backend: str = "cpu",
    commit: str = "0" * 40,
    **fields,
):
    parts = [
        SimpleUploadedFile(f.name, f.read_bytes())
        if isinstance(f, Path)
        else SimpleUploadedFile(*f)
        for f in files
    ]
    data = {"project": project, "backend": backend, "commit": commit, "file": parts, **fields}
    return api.post("/api/v1/uploads/", data, format="multipart")
