"""Time and peak memory of parity.pure.junit.iter_cases on reports whose bulk is one huge token.

    .venv/bin/python bench/token_bench.py --mib 50 [--timeout 120] [--kinds attribute,text,...]
        [--repo DIR]  # time another checkout's parser, e.g. a `git worktree` of an older commit

Each kind puts ``--mib`` MiB into one place of an otherwise tiny report: a failure's message
attribute, a failure's text, a <system-out>, a comment, a testcase name, and (``gzip-attribute``)
a message attribute streamed through gzip, the way a huge attribute of repeated text arrives
as a small upload. Files are written (streamed) to a temporary folder; each parse runs in a fresh
subprocess, killed after ``--timeout`` seconds, so its peak RSS (ru_maxrss) is its own.

Also prints what the measurement depends on: the expat version and whether reparse deferral
(expat >= 2.6, which makes a huge token linear) is available.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
KINDS = ("attribute", "text", "system-out", "comment", "name", "gzip-attribute")
_BLOCK = b"0123456789abcdef" * 4096  # 64 KiB


def write_report(path: Path, kind: str, size: int) -> None:
    """A one-case report whose ``kind`` part is ``size`` bytes, written without holding it."""
    before, after = {
        "attribute": (b'<failure message="', b'"/>'),
        "gzip-attribute": (b'<failure message="', b'"/>'),
        "text": (b"<failure>", b"</failure>"),
        "system-out": (b'<failure message="boom"/><system-out>', b"</system-out>"),
        "comment": (b"<!--", b"-->"),
        "name": (b"", b""),
    }[kind]
    opener = gzip.open if kind.startswith("gzip") else open
    with opener(path, "wb") as out:
        out.write(b'<?xml version="1.0"?>\n<testsuites><testsuite name="s">\n')
        if kind == "name":
            out.write(b'<testcase classname="c" name="')
        else:
            out.write(b'<testcase classname="c" name="t">' + before)
        for _ in range(size // len(_BLOCK)):
            out.write(_BLOCK)
        out.write(_BLOCK[: size % len(_BLOCK)])
        out.write(b'"/>' if kind == "name" else after + b"</testcase>")
        out.write(b"\n</testsuite></testsuites>\n")


def measure(repo: Path, path: Path) -> dict[str, object]:
    """Runs in the child process: parse once, report the outcome, seconds and peak RSS."""
    import resource

    sys.path.insert(0, str(repo))
    from parity.pure.junit import JUnitError, iter_cases

    opener = gzip.open if path.suffix == ".gz" else open
    started = time.perf_counter()
    try:
        with opener(path, "rb") as stream:
            cases = list(iter_cases(stream))
        message = cases[0].message or ""
        outcome = f"parsed, message {len(message):,} chars: ...{message[-48:]!r}"
    except JUnitError as exc:
        outcome = f"rejected: {exc}"
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"outcome": outcome, "seconds": seconds, "peak_rss_mib": peak_kib / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=50)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument(
        "--repo", default=str(REPO_DIR), help="the checkout whose parity.pure.junit to time"
    )
    parser.add_argument("--child", nargs=2, metavar=("REPO", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(Path(args.child[0]), Path(args.child[1]))))
        return
    import pyexpat

    deferral = hasattr(pyexpat.ParserCreate(), "GetReparseDeferralEnabled")
    print(f"{pyexpat.EXPAT_VERSION}, reparse deferral available: {deferral}")
    size = int(args.mib * 2**20)
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            path = Path(tmp) / (f"{kind}.xml.gz" if kind.startswith("gzip") else f"{kind}.xml")
            write_report(path, kind, size)
            label = f"{kind:15} {args.mib:g} MiB ({path.stat().st_size / 2**20:.2f} MiB on disk)"
            try:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", args.repo, str(path)],
                    check=True,
                    capture_output=True,
                    text=True,
                    timeout=args.timeout,
                ).stdout
            except subprocess.TimeoutExpired:
                print(f"{label}: still parsing after {args.timeout:g} s, killed")
                continue
            result = json.loads(out)
            print(
                f"{label}: {result['seconds']:6.2f} s, peak RSS {result['peak_rss_mib']:6.1f} MiB,"
                f" {result['outcome']}"
            )


if __name__ == "__main__":
    main()
