"""parity.pure.archives: dispatch, realistic CI archive layouts, corrupt files and bombs."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
import struct
import subprocess
import tarfile
import time
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from parity.pure.archives import ArchiveError, TooLarge, XmlDocument, iter_xml_documents
from parity.pure.junit import MalformedXML, iter_cases
from tests.conftest import FIXTURES_DIR

JUNIT = FIXTURES_DIR / "junit"
MiB = 2**20
LIMIT = 200 * MiB
PYTEST = (JUNIT / "pytest_dialect.xml").read_bytes()
XMLRUNNER = (JUNIT / "xmlrunner_main.xml").read_bytes()
GTEST = (JUNIT / "gtest_result_skipped.xml").read_bytes()
# The layout of the PyTorch/XLA CI artifacts: one folder per test module, named like the module.
OPS = "test-reports/python-unittest/test.test_ops/TEST-TestOps-20250301100000.xml"
MATH = "test-reports/python-unittest/test.test_math/TEST-TestMath-20250301100001.xml"


def documents(filename: str, data: bytes, *, max_bytes: int = LIMIT) -> list[XmlDocument]:
    return list(iter_xml_documents(filename, io.BytesIO(data), max_bytes=max_bytes))


def read_all(filename: str, data: bytes) -> list[tuple[str, str | None, bytes]]:
    """(name, folder_hint, content) of every document, reading each before the next."""
    docs = iter_xml_documents(filename, io.BytesIO(data), max_bytes=LIMIT)
    return [(doc.name, doc.folder_hint, doc.stream.read()) for doc in docs]


def make_zip(members: dict[str, bytes], *, directories: tuple[str, ...] = ()) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for directory in directories:
            archive.writestr(zipfile.ZipInfo(directory), b"")
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def make_tar_gz(members: dict[str, bytes], *, directories: tuple[str, ...] = ()) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for directory in directories:
            info = tarfile.TarInfo(directory)
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
        link = tarfile.TarInfo("test-reports/latest.xml")
        link.type, link.linkname = tarfile.SYMTYPE, OPS
        archive.addfile(link)  # a symlink ending in .xml is not a regular member: skipped
    return out.getvalue()


class NonSeekable(io.RawIOBase):
    """An upload read from a pipe: no seek, no tell."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:
        return self._data.readinto(buffer)


# --- dispatch ---------------------------------------------------------------------------------


def test_a_bare_xml_file_is_one_document() -> None:
    assert read_all("TEST-TestOps.XML", PYTEST) == [("TEST-TestOps.XML", None, PYTEST)]


@pytest.mark.parametrize(
    ("filename", "name"),
    [("TEST-TestOps.xml.gz", "TEST-TestOps.xml"), ("report.GZ", "report")],
)
def test_gzip_is_streamed_into_one_document(filename: str, name: str) -> None:
    assert read_all(filename, gzip.compress(PYTEST)) == [(name, None, PYTEST)]


def test_zip_members_keep_their_paths_and_parent_folder() -> None:
    upload = make_zip(
        {
            OPS: XMLRUNNER,
            MATH: GTEST,
            "TEST-top-level.xml": PYTEST,
            "test-reports/python-unittest/test.test_ops/stdout.log": b"not xml",
            "__MACOSX/test-reports/._TEST-TestOps.xml": b"\x00\x05\x16\x07 resource fork",
            "test-reports\\windows\\TEST-Win.xml": PYTEST,
        },
        directories=("test-reports/", "test-reports/python-unittest/empty.xml/"),
    )

    assert [(name, hint) for name, hint, _ in read_all("artifacts.zip", upload)] == [
        (OPS, "test.test_ops"),
        (MATH, "test.test_math"),
        ("TEST-top-level.xml", None),
        ("test-reports\\windows\\TEST-Win.xml", "windows"),
    ]


def test_tar_gz_members_stream_in_order() -> None:
    upload = make_tar_gz(
        {OPS: XMLRUNNER, "test-reports/README.md": b"# not xml", MATH: GTEST},
        directories=("test-reports", "test-reports/python-unittest"),
    )

    for filename in ("artifacts.tar.gz", "artifacts.TGZ"):
        assert read_all(filename, upload) == [
            (OPS, "test.test_ops", XMLRUNNER),
            (MATH, "test.test_math", GTEST),
        ]


def test_archive_documents_parse_end_to_end() -> None:
    upload = make_tar_gz({OPS: XMLRUNNER, MATH: GTEST})

    parsed = {
        doc.folder_hint: [case.outcome for case in iter_cases(doc.stream)]
        for doc in iter_xml_documents("a.tgz", NonSeekable(upload), max_bytes=LIMIT)
    }

    assert parsed == {
        "test.test_ops": ["passed", "passed", "skipped", "failed"],
        "test.test_math": ["passed", "skipped", "skipped", "skipped", "failed"],
    }


def test_a_zip_from_a_pipe_is_spooled() -> None:
    upload = make_zip({OPS: XMLRUNNER})
    docs = iter_xml_documents("a.zip", NonSeekable(upload), max_bytes=LIMIT)

    assert [(doc.name, doc.stream.read()) for doc in docs] == [(OPS, XMLRUNNER)]


@pytest.mark.parametrize(
    ("filename", "make", "expected_names"),
    [
        ("report.xml", lambda: make_zip({OPS: XMLRUNNER}), [OPS]),
        ("report.xml", lambda: gzip.compress(PYTEST), ["report.xml"]),
        ("report.zip", lambda: PYTEST, ["report.zip"]),
        ("report.xml.gz", lambda: PYTEST, ["report.xml.gz"]),
        ("report.gz", lambda: make_tar_gz({OPS: XMLRUNNER}), [OPS]),
        ("report", lambda: b"\xef\xbb\xbf\n" + PYTEST, ["report"]),
        ("report.txt", lambda: make_zip({OPS: XMLRUNNER}), [OPS]),
    ],
)
def test_magic_bytes_win_over_a_lying_suffix(
    filename: str, make: Callable[[], bytes], expected_names: list[str]
) -> None:
    assert [name for name, _, _ in read_all(filename, make())] == expected_names


@pytest.mark.parametrize(
    ("filename", "data"),
    [("report.rar", b"Rar!\x1a\x07\x00"), ("results.json", b'{"tests": []}'), ("x.txt", b"")],
)
def test_other_kinds_are_refused_naming_the_accepted_ones(filename: str, data: bytes) -> None:
    with pytest.raises(ArchiveError, match=r"\.xml, \.xml\.gz.*\.zip.*\.tar\.gz"):
        documents(filename, data)


@pytest.mark.parametrize(
    ("filename", "data"),
    [
        ("empty.zip", make_zip({"notes.txt": b"hi"}, directories=("reports.xml/",))),
        ("empty.tar.gz", make_tar_gz({"notes.txt": b"hi"})),
    ],
)
def test_an_archive_without_xml_is_refused(filename: str, data: bytes) -> None:
    with pytest.raises(ArchiveError, match="^the archive contains no .xml files"):
        documents(filename, data)


def _zip_with_symlink(target: str, *, with_target: bool = True) -> bytes:
    """A zip as ``zip -y`` writes one: the link's content is its target's path."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        if with_target:
            archive.writestr(OPS, XMLRUNNER)
        link = zipfile.ZipInfo("test-reports/latest.xml")
        link.create_system = 3  # Unix
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, target)
    return out.getvalue()


def test_a_zip_symlink_is_skipped_like_a_tar_one() -> None:
    """Read as a file, the link is the text of its target's path: not XML, not a failure."""
    upload = _zip_with_symlink(OPS)

    assert read_all("artifacts.zip", upload) == [(OPS, "test.test_ops", XMLRUNNER)]
    assert [name for name, _, _ in read_all("a.tgz", make_tar_gz({OPS: XMLRUNNER}))] == [OPS]


@pytest.mark.parametrize(
    ("filename", "data", "advice"),
    [
        ("artifacts.zip", _zip_with_symlink(OPS), "zip without -y"),
        ("artifacts.tgz", make_tar_gz({OPS: XMLRUNNER}), "tar --dereference"),
    ],
)
def test_a_skipped_symlink_is_named_in_skipped(filename: str, data: bytes, advice: str) -> None:
    """The upload's warnings (Upload.warnings) come from here: one sentence per link."""
    skipped: list[str] = []

    names = [
        d.name
        for d in iter_xml_documents(filename, io.BytesIO(data), max_bytes=10**6, skipped=skipped)
        if d.stream.read() is not None
    ]

    assert names == [OPS]
    assert skipped == [
        f"test-reports/latest.xml in {filename} is a symbolic link and was skipped: archive "
        f"the file itself ({advice})."
    ]


@pytest.mark.parametrize(
    ("filename", "data", "advice"),
    [
        ("links.zip", _zip_with_symlink(OPS, with_target=False), "zip without -y"),
        ("links.tgz", make_tar_gz({}), "tar --dereference"),
    ],
)
def test_an_archive_of_only_symlinks_says_so(filename: str, data: bytes, advice: str) -> None:
    with pytest.raises(ArchiveError) as raised:
        documents(filename, data)

    assert str(raised.value) == (
        "the archive contains no .xml files, only symbolic links to them "
        f"(test-reports/latest.xml), which are skipped: archive the files themselves ({advice})"
    )


@pytest.mark.skipif(shutil.which("zip") is None, reason="needs the zip command (apt install zip)")
def test_zip_y_of_a_real_symlink_is_skipped(tmp_path: Path) -> None:
    reports = tmp_path / "test-reports"
    (reports / "python-unittest" / "test.test_ops").mkdir(parents=True)
    (tmp_path / OPS).write_bytes(XMLRUNNER)
    os.symlink(tmp_path / OPS, reports / "latest.xml")
    subprocess.run(
        ["zip", "-q", "-r", "-y", "artifacts.zip", "test-reports"], cwd=tmp_path, check=True
    )
    upload = (tmp_path / "artifacts.zip").read_bytes()
    assert str(tmp_path / OPS).encode() in upload  # the link went in as a link

    assert read_all("artifacts.zip", upload) == [(OPS, "test.test_ops", XMLRUNNER)]


# --- corrupt uploads --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "data"),
    [
        ("cut.xml.gz", gzip.compress(PYTEST)[:-30]),
        ("garbage.xml.gz", b"\x1f\x8b" + b"\xff" * 64),
        ("cut.tar.gz", make_tar_gz({OPS: XMLRUNNER})[:300]),
        ("not-a-zip.zip", b"PK\x03\x04 but nothing else"),
        ("not-gzip.tar.gz", b"\x00\x01 plainly not gzip"),
    ],
)
def test_corrupt_archives_raise_archive_error(filename: str, data: bytes) -> None:
    with pytest.raises(ArchiveError):
        for _, _, content in read_all(filename, data):
            assert content  # reading is where a truncated stream is found


def test_a_zip_header_that_understates_the_size_is_not_believed() -> None:
    """zipfile stops at the declared size and the CRC no longer matches: corrupt, not a bomb."""
    data = bytearray(make_zip({"a/b.xml": b"<testsuites>" + b" " * (4 * MiB) + b"</testsuites>"}))
    struct.pack_into("<I", data, 22, 1000)  # local header: uncompressed size
    struct.pack_into("<I", data, data.find(b"PK\x01\x02") + 24, 1000)  # central directory

    with pytest.raises(ArchiveError, match="corrupt"):
        read_all("lying.zip", bytes(data))


# --- size caps and bombs ----------------------------------------------------------------------


def _deflate_repeat(block: bytes, times: int) -> bytes:
    """A gzip stream of ``block`` * ``times``, built from one compressed block: gzip allows
    concatenated members, so a 1 GB bomb costs one 64 MiB compression."""
    return gzip.compress(block, compresslevel=9) * times


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """'<testsuites>' then 1 GiB of spaces: well-formed so far, so only the cap can stop it."""
    bomb = gzip.compress(b"<testsuites>") + _deflate_repeat(b" " * (64 * MiB), 16)
    assert len(bomb) < 2 * MiB
    return bomb


def _consume(doc: XmlDocument) -> None:
    for _ in iter_cases(doc.stream):
        pass


@pytest.mark.parametrize("seekable", [True, False], ids=["trailer-check", "counted"])
def test_a_gzip_bomb_stops_at_the_cap_fast_and_flat(gzip_bomb: bytes, seekable: bool) -> None:
    upload = io.BytesIO(gzip_bomb) if seekable else NonSeekable(gzip_bomb)
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(TooLarge) as raised:
            for doc in iter_xml_documents("report.xml.gz", upload, max_bytes=32 * MiB):
                _consume(doc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert time.monotonic() - started < 10
    assert peak < 8 * MiB, f"peak {peak / MiB:.1f} MiB"
    assert str(raised.value) == (
        "report.xml.gz decompresses to more than 33.6 MB; "
        "the limit is 33.6 MB (PARITY_MAX_XML_BYTES)"
    )


def test_a_zip_bomb_is_refused_before_inflating() -> None:
    member = b"<testsuites>" + b" " * (64 * MiB)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr(OPS, member)
        archive.writestr(MATH, member)
    bomb = out.getvalue()
    assert len(bomb) < MiB

    started = time.monotonic()
    with pytest.raises(TooLarge, match="PARITY_MAX_XML_BYTES"):
        documents("bomb.zip", bomb, max_bytes=8 * MiB)
    assert time.monotonic() - started < 1


def test_a_tar_gz_bomb_is_counted_below_tarfile() -> None:
    """The gzip trailer of this tar.gz declares 1.5 kB; only counting real bytes stops it."""
    content_size = len(b"<testsuites>") + 16 * 64 * MiB
    header = tarfile.TarInfo("reports/bomb.xml")
    header.size = content_size
    bomb = (
        gzip.compress(header.tobuf(format=tarfile.GNU_FORMAT) + b"<testsuites>")
        + _deflate_repeat(b" " * (64 * MiB), 16)
        + gzip.compress(b"\0" * (-content_size % 512) + b"\0" * 1024)
    )

    tracemalloc.start()
    try:
        with pytest.raises(TooLarge):
            for doc in iter_xml_documents("bomb.tar.gz", io.BytesIO(bomb), max_bytes=16 * MiB):
                _consume(doc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MiB


def test_the_cap_is_for_the_whole_upload_not_each_document() -> None:
    member = b"<testsuites>" + b" " * 400_000 + b"</testsuites>"
    upload = make_tar_gz({f"r/{i}.xml": member for i in range(3)})
    # from a pipe there is no gzip trailer to check first: only counting can stop it
    docs = iter_xml_documents("three.tgz", NonSeekable(upload), max_bytes=1_000_000)

    _consume(next(docs))
    _consume(next(docs))
    with pytest.raises(TooLarge, match="more than 1 MB"):
        _consume(next(docs))
    # a seekable upload's trailer (1.2 MB) already fails it before the first document
    with pytest.raises(TooLarge):
        next(iter_xml_documents("three.tgz", io.BytesIO(upload), max_bytes=1_000_000))


def test_a_zip_whose_declared_sizes_exceed_the_cap_fails_before_any_document() -> None:
    member = b"<testsuites>" + b" " * 400_000 + b"</testsuites>"
    upload = make_zip({f"r/{i}.xml": member for i in range(3)})

    with pytest.raises(TooLarge):
        next(iter_xml_documents("three.zip", io.BytesIO(upload), max_bytes=1_000_000))


def test_a_plain_xml_file_is_capped_too() -> None:
    (doc,) = documents("big.xml", PYTEST, max_bytes=100)

    with pytest.raises(TooLarge, match="more than 100 bytes"):
        doc.stream.read()


def test_a_zeros_bomb_fails_on_its_first_chunk_even_without_the_cap() -> None:
    """NUL bytes are not XML: the parser stops at once, long before any cap."""
    upload = gzip.compress(b"<testsuites>") + gzip.compress(b"\0" * (16 * MiB))

    with pytest.raises(MalformedXML, match="line 1, column 12"):
        for doc in iter_xml_documents("z.gz", NonSeekable(upload), max_bytes=LIMIT):
            _consume(doc)


@pytest.mark.parametrize(
    ("filename", "pack"),
    [("outer.zip", lambda m: make_zip(m)), ("outer.tar.gz", lambda m: make_tar_gz(m))],
)
def test_an_archive_inside_the_archive_is_skipped_and_named(filename: str, pack) -> None:
    inner = make_zip({MATH: XMLRUNNER})
    upload = pack({OPS: XMLRUNNER, "shards/shard-2.zip": inner, "more/r.xml.gz": b"x"})
    skipped: list[str] = []

    names = [
        d.name
        for d in iter_xml_documents(filename, io.BytesIO(upload), max_bytes=10**6, skipped=skipped)
        if d.stream.read() is not None
    ]

    assert names == [OPS]
    # (make_tar_gz adds a symbolic link, named on its own line: not what this test is about)
    assert sorted(s for s in skipped if "symbolic link" not in s) == [
        f"{name} in {filename} is an archive inside the archive and was skipped (parity reads "
        "one level): upload it as a file of its own, or archive the .xml files themselves."
        for name in ("more/r.xml.gz", "shards/shard-2.zip")
    ]


def test_an_archive_of_archives_only_is_refused_saying_so() -> None:
    upload = make_zip({"shard-1.zip": make_zip({OPS: XMLRUNNER})})

    with pytest.raises(ArchiveError, match=r"only archives inside it \(shard-1.zip\)"):
        documents("outer.zip", upload)
