"""The upload API over real HTTP, as CI's curl or requests calls it: multipart bodies streamed
from disk with a Content-Length, one connection per request (so threads can post at once)."""

import http.client
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHUNK_BYTES = 1 << 20
TIMEOUT_SECONDS = 180


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any  # parsed JSON, or the text when the answer is not JSON
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"HTTP {self.status}: {str(self.body)[:2000]}"


@dataclass(frozen=True)
class ApiClient:
    base_url: str
    token: str

    def post_upload(
        self,
        *files: Path | tuple[str, bytes],
        project: str = "pytorch-xla",
        backend: str = "cpu",
        commit: str = "0" * 40,
        **fields: str,
    ) -> Reply:
        form = {"project": project, "backend": backend, "commit": commit, **fields}
        boundary = f"parity-e2e-{uuid.uuid4().hex}"
        parts = _multipart(boundary, form, files)
        length = sum(
            len(part) if isinstance(part, bytes) else part.stat().st_size for part in parts
        )
        return self.request(
            "POST",
            "/api/v1/uploads/",
            body=_stream(parts),
            headers={
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Content-Length": str(length),
            },
        )

    def upload(self, upload_id: int) -> Reply:
        return self.request("GET", f"/api/v1/uploads/{upload_id}/")

    def run_complete(self, run_id: int) -> Reply:
        return self.request("POST", f"/api/v1/runs/{run_id}/complete/", headers={})

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | Iterator[bytes] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        url = urlsplit(self.base_url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=TIMEOUT_SECONDS)
        try:
            connection.request(
                method,
                path,
                body=body,
                headers={"Authorization": f"Token {self.token}", **(headers or {})},
            )
            response = connection.getresponse()
            raw = response.read()
        finally:
            connection.close()
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = raw.decode(errors="replace")
        return Reply(status=response.status, body=parsed, headers=dict(response.getheaders()))


def _multipart(
    boundary: str, form: dict[str, str], files: tuple[Path | tuple[str, bytes], ...]
) -> list[bytes | Path]:
    parts: list[bytes | Path] = []
    for name, value in form.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
            f"{value}\r\n".encode()
        )
    for file in files:
        filename = file.name if isinstance(file, Path) else file[0]
        parts.append(
            f"--{boundary}\r\nContent-Disposition: form-data; "
            f'name="file"; filename="{filename}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n".encode()
        )
        parts.append(file if isinstance(file, Path) else file[1])
        parts.append(b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return parts


def _stream(parts: list[bytes | Path]) -> Iterator[bytes]:
    for part in parts:
        if isinstance(part, bytes):
            yield part
            continue
        with part.open("rb") as source:
            while chunk := source.read(CHUNK_BYTES):
                yield chunk
