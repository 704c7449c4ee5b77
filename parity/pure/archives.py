"""Unpack an upload (.xml, .xml.gz, .zip, .tar.gz) into the XML documents inside it.

Pure: imports nothing from Django and never writes a member to disk (only a zip read from a
pipe is spooled, still compressed, because zipfile must seek). Every stream handed out
counts the decompressed bytes it delivers against one budget for the whole upload and raises
``TooLarge`` the moment the budget is crossed, so a gzip or zip bomb costs at most
``max_bytes`` of decompression and a chunk of memory, whatever it claims or contains.

Symbolic links are skipped, in a tar as in a zip: read as a file, a link is its target's path,
not XML, and the file it points to is in the archive anyway, or was never sent. Each skipped
link is named in ``skipped`` (a list the caller passes; the upload shows them as warnings). An
archive whose only .xml entries are links is refused with an error that says so. One level is
read: an archive inside the archive (a .zip in a .zip, an .xml.gz in a .tar.gz) is skipped and
named in ``skipped`` too, and an archive holding only such is refused saying so.
"""

from __future__ import annotations

import gzip
import io
import lzma
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import BinaryIO

ACCEPTED_KINDS = ".xml, .xml.gz (or .gz), .zip, or .tar.gz (or .tgz)"
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a member first, or an empty archive
_TAR_MAGIC_OFFSET = 257  # "ustar" in the first header block of POSIX and GNU tar files
_SNIFF_BYTES = 512
_CHUNK_BYTES = 64 * 1024
# Errors that the standard library raises from *reading* a damaged compressed stream.
_CORRUPT = (
    gzip.BadGzipFile,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    zipfile.BadZipFile,
    tarfile.TarError,
)


@dataclass(frozen=True)
class XmlDocument:
    name: str  # path of the XML inside the upload, or the uploaded filename
    folder_hint: str | None  # immediate parent folder inside an archive, None for a bare file
    stream: BinaryIO  # decompressed bytes, readable once, already size-capped


class ArchiveError(Exception):
    """The upload cannot be unpacked; str(e) is a clear, user-facing sentence."""


class TooLarge(ArchiveError):
    """The upload decompresses to more than the configured limit."""


def iter_xml_documents(
    filename: str, stream: BinaryIO, *, max_bytes: int, skipped: list[str] | None = None
) -> Iterator[XmlDocument]:
    """Yield each XML document of an upload, dispatching on content first, then on suffix.
    Members skipped next to the documents (symbolic links) are appended to ``skipped``, each
    a sentence naming the member.

    A tar archive is read front to back: read each document's stream before asking for the
    next one.
    """
    skipped = [] if skipped is None else skipped
    budget = _Budget(filename, max_bytes)
    head, stream = _peek(stream)
    lower = filename.lower()
    # Magic bytes win over a lying suffix; the suffix only decides what the bytes cannot.
    if head.startswith(_ZIP_MAGICS) or (lower.endswith(".zip") and not _looks_like_xml(head)):
        yield from _zip_documents(filename, stream, budget, skipped)
    elif head.startswith(_GZIP_MAGIC):
        yield from _gzip_documents(filename, stream, budget, skipped)
    elif lower.endswith(".xml") or _looks_like_xml(head):
        yield XmlDocument(filename, None, _Capped(stream, budget, filename))
    elif lower.endswith((".gz", ".tgz")):
        raise ArchiveError(f"{filename} is not a valid gzip file")
    else:
        raise ArchiveError(f"{filename} is not an accepted kind of file: send {ACCEPTED_KINDS}")


def _looks_like_xml(head: bytes) -> bool:
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    # UTF-16 byte order marks count too, so that the XML parser gets to name the real problem.
    return text.startswith(b"<") or head.startswith((b"\xff\xfe", b"\xfe\xff"))


def _gzip_documents(
    filename: str, stream: BinaryIO, budget: _Budget, skipped: list[str]
) -> Iterator[XmlDocument]:
    # Like a zip's declared sizes, the gzip trailer lets an honest bomb fail before anything is
    # inflated; the stream still counts real bytes, since the trailer can lie (or wrap at 4 GiB).
    declared = _gzip_declared_size(stream)
    if declared is not None:
        budget.check_declared(declared)
    unzipped = _Capped(gzip.GzipFile(fileobj=stream, mode="rb"), budget, filename)
    head, unzipped = _peek(unzipped)
    if head[_TAR_MAGIC_OFFSET : _TAR_MAGIC_OFFSET + 5] == b"ustar":
        yield from _tar_documents(filename, unzipped, skipped)
        return
    name = filename[:-3] if filename.lower().endswith(".gz") else filename
    yield XmlDocument(name, None, unzipped)


def _tar_documents(filename: str, unzipped: BinaryIO, skipped: list[str]) -> Iterator[XmlDocument]:
    """Members of a tar stream; the budget sits below tarfile, so skipped members count too."""
    found = False
    links: list[str] = []
    nested: list[str] = []
    try:
        with tarfile.open(fileobj=unzipped, mode="r|") as tar:
            for member in tar:
                if member.isreg() and _is_archive_member(member.name):
                    nested.append(member.name)
                    skipped.append(_nested_skipped(member.name, filename))
                if not _is_xml_member(member.name):
                    continue
                if member.issym():
                    links.append(member.name)
                    skipped.append(_link_skipped(member.name, filename, "tar --dereference"))
                if not member.isreg():
                    continue
                member_stream = tar.extractfile(member)
                assert member_stream is not None  # regular members always have one
                found = True
                yield _member(member.name, _Capped(member_stream, None, filename))
    except tarfile.TarError as exc:
        raise ArchiveError(f"{filename} is not a valid tar.gz archive ({exc})") from None
    if not found:
        raise _no_xml(links, how_to_store="tar --dereference", nested=nested)


def _zip_documents(
    filename: str, stream: BinaryIO, budget: _Budget, skipped: list[str]
) -> Iterator[XmlDocument]:
    if not stream.seekable():
        # zipfile seeks to the central directory at the end: spool the (compressed) upload.
        with tempfile.SpooledTemporaryFile(max_size=16 * 2**20) as spool:
            shutil.copyfileobj(stream, spool, _CHUNK_BYTES)
            spool.seek(0)
            yield from _zip_documents(filename, spool, budget, skipped)
        return
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArchiveError(f"{filename} is not a valid zip archive ({exc})") from None
    with archive:
        entries = [i for i in archive.infolist() if not i.is_dir() and _is_xml_member(i.filename)]
        members = [info for info in entries if not _is_zip_symlink(info)]
        nested = [
            info.filename
            for info in archive.infolist()
            if not info.is_dir() and _is_archive_member(info.filename)
        ]
        skipped.extend(_nested_skipped(name, filename) for name in nested)
        if not members:
            links = [info.filename for info in entries if _is_zip_symlink(info)]
            raise _no_xml(links, how_to_store="zip without -y", nested=nested)
        skipped.extend(
            _link_skipped(info.filename, filename, "zip without -y")
            for info in entries
            if _is_zip_symlink(info)
        )
        # The declared sizes let an honest bomb fail before anything is inflated; the streams
        # still count real bytes, since headers can lie.
        budget.check_declared(sum(info.file_size for info in members))
        for info in members:
            try:
                member_stream = archive.open(info)
            except (RuntimeError, NotImplementedError, *_CORRUPT) as exc:
                # RuntimeError: encrypted; NotImplementedError: a compression method we lack.
                raise ArchiveError(f"cannot read {info.filename} in {filename} ({exc})") from None
            yield _member(info.filename, _Capped(member_stream, budget, filename))


def _is_zip_symlink(info: zipfile.ZipInfo) -> bool:
    # zip -y stores a link as its target's path, marked only by the Unix file type in the high
    # 16 bits of external_attr: zipfile reads it out like a file.
    return stat.S_ISLNK(info.external_attr >> 16)


def _link_skipped(member: str, filename: str, how_to_store: str) -> str:
    return (
        f"{member} in {filename} is a symbolic link and was skipped: archive the file itself "
        f"({how_to_store})."
    )


def _nested_skipped(member: str, filename: str) -> str:
    return (
        f"{member} in {filename} is an archive inside the archive and was skipped (parity "
        "reads one level): upload it as a file of its own, or archive the .xml files themselves."
    )


def _no_xml(links: list[str], *, how_to_store: str, nested: list[str] = ()) -> ArchiveError:
    if nested and not links:
        shown = ", ".join(nested[:3]) + (
            f" and {len(nested) - 3:,} more" if len(nested) > 3 else ""
        )
        return ArchiveError(
            f"the archive contains no .xml files, only archives inside it ({shown}), which "
            "parity does not open: upload them as files of their own, or archive the .xml "
            "files themselves"
        )
    if not links:
        return ArchiveError("the archive contains no .xml files")
    shown = ", ".join(links[:3]) + (f" and {len(links) - 3:,} more" if len(links) > 3 else "")
    return ArchiveError(
        f"the archive contains no .xml files, only symbolic links to them ({shown}), which are "
        f"skipped: archive the files themselves ({how_to_store})"
    )


def _gzip_declared_size(stream: BinaryIO) -> int | None:
    """ISIZE, the last 4 bytes of a gzip file: its (last member's) size modulo 2**32."""
    if not stream.seekable():
        return None
    start = stream.tell()
    stream.seek(0, io.SEEK_END)
    if stream.tell() - start < 18:  # shorter than an empty gzip member: let gzip complain
        stream.seek(start)
        return None
    stream.seek(-4, io.SEEK_END)
    size = int.from_bytes(stream.read(4), "little")
    stream.seek(start)
    return size


def _member(path: str, stream: BinaryIO) -> XmlDocument:
    # Zip files made on Windows sometimes use backslashes, against the format's own rules.
    parent = PurePosixPath(path.replace("\\", "/")).parent.name
    return XmlDocument(path, parent or None, stream)


_ARCHIVE_SUFFIXES = (".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z")


def _is_archive_member(path: str) -> bool:
    """A member that is an archive itself (a .zip, .xml.gz, .tar.gz of reports): one level is
    read, so it is skipped, and said so."""
    name = PurePosixPath(path.replace("\\", "/"))
    return (
        name.name.lower().endswith(_ARCHIVE_SUFFIXES)
        and not name.name.startswith("._")
        and "__MACOSX" not in name.parts
    )


def _is_xml_member(path: str) -> bool:
    name = PurePosixPath(path.replace("\\", "/"))
    # macOS archivers add AppleDouble "._name.xml" files (and a __MACOSX folder) that end in
    # .xml but hold resource forks, not XML.
    return (
        name.suffix.lower() == ".xml"
        and not name.name.startswith("._")
        and "__MACOSX" not in name.parts
    )


class _Budget:
    """Decompressed bytes allowed for one whole upload, shared by all of its streams."""

    def __init__(self, filename: str, max_bytes: int) -> None:
        self.filename = filename
        self.max_bytes = max_bytes
        self.used = 0

    def charge(self, size: int) -> None:
        self.used += size
        if self.used > self.max_bytes:
            raise self._too_large()

    def check_declared(self, size: int) -> None:
        if self.used + size > self.max_bytes:
            raise self._too_large()

    def _too_large(self) -> TooLarge:
        limit = _human_bytes(self.max_bytes)
        return TooLarge(
            f"{self.filename} decompresses to more than {limit}; "
            f"the limit is {limit} (PARITY_MAX_XML_BYTES)"
        )


class _Capped(io.RawIOBase):
    """A read-once stream that charges what it delivers to a budget (if any) and turns
    decompression errors into ArchiveError."""

    def __init__(self, raw: BinaryIO, budget: _Budget | None, filename: str) -> None:
        super().__init__()
        self._raw = raw
        self._budget = budget
        self._filename = filename

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            return b"".join(iter(lambda: self.read(_CHUNK_BYTES), b""))
        try:
            data = self._raw.read(size)
        except _CORRUPT as exc:
            raise ArchiveError(f"{self._filename} is corrupt or truncated ({exc})") from None
        if self._budget is not None:
            self._budget.charge(len(data))
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _Prefixed(io.RawIOBase):
    """``head`` followed by the rest of ``raw``: puts back bytes read to sniff the kind."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        super().__init__()
        self._head = head
        self._raw = raw

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._raw.read(size)
        if size is None or size < 0:
            data, self._head = self._head + self._raw.read(), b""
            return data
        data, self._head = self._head[:size], self._head[size:]
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _peek(stream: BinaryIO) -> tuple[bytes, BinaryIO]:
    """The first bytes of a stream, and a stream that still starts with them."""
    start = stream.tell() if stream.seekable() else None
    head = b""
    while len(head) < _SNIFF_BYTES:  # compressed streams may return short reads
        more = stream.read(_SNIFF_BYTES - len(head))
        if not more:
            break
        head += more
    if start is not None:
        stream.seek(start)  # keeps an uploaded file seekable, which zipfile needs
        return head, stream
    return head, _Prefixed(head, stream)


def _human_bytes(size: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"
