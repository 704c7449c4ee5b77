"""Throughput and peak memory of parity.pure.junit.iter_cases against a bare stdlib iterparse loop.

    .venv/bin/python bench/parse_bench.py --cases 1000000 [--defusedxml]

Writes an N-case JUnit file (1000 cases per suite; 5% failures with a stack trace, 2% skips,
some system-out), then parses it once per contender, each in a fresh subprocess so that its
peak RSS (ru_maxrss) is its own. The baseline is what the parser must stay near: iterparse
with start/end events, clearing each finished testcase and dropping it from its parent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.etree import ElementTree

REPO_DIR = Path(__file__).resolve().parent.parent
CONTENDERS = ("stdlib_iterparse", "iter_cases")


def write_junit(path: Path, cases: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n')
        for i in range(cases):
            if i % 1000 == 0:
                if i:
                    out.write("  </testsuite>\n")
                out.write(f'  <testsuite name="suite{i // 1000}" tests="1000">\n')
                out.write('    <properties><property name="backend" value="cpu"/></properties>\n')
            out.write(_case_xml(i))
        out.write("  </testsuite>\n</testsuites>\n")


def _case_xml(i: int) -> str:
    attrs = f'classname="pkg.mod{i // 1000}.TestThing" name="test_case_{i}" time="0.01{i % 7}"'
    trace = "Traceback (most recent call last):\n  File &quot;t.py&quot;, line 3\nAssertionError"
    if i % 40 == 7:
        body = f'<failure message="AssertionError: {i} != 0">{trace}</failure>'
    elif i % 40 == 27:
        body = f"<failure>{trace}</failure>"  # no message attribute: the text is read
    elif i % 50 == 3:
        body = '<skipped message="needs a GPU"/>'
    elif i % 100 == 11:
        body = "<system-out>log line\nanother log line\n</system-out>"
    else:
        return f"    <testcase {attrs}/>\n"
    return f"    <testcase {attrs}>{body}</testcase>\n"


def run_stdlib_iterparse(path: Path) -> int:
    return _count_testcases(ElementTree.iterparse(path, events=("start", "end")))


def run_defusedxml(path: Path) -> int:
    from defusedxml.ElementTree import iterparse

    return _count_testcases(iterparse(path, events=("start", "end"), forbid_dtd=True))


def _count_testcases(events) -> int:
    """The loop a streaming parser must stay near: clear each finished testcase and drop it
    from its parent so memory stays flat."""
    count = 0
    stack: list[ElementTree.Element] = []
    for event, elem in events:
        if event == "start":
            stack.append(elem)
            continue
        stack.pop()
        if elem.tag == "testcase":
            count += 1
            elem.clear()
            if stack:
                stack[-1].remove(elem)
    return count


def run_iter_cases(path: Path) -> int:
    sys.path.insert(0, str(REPO_DIR))
    from parity.pure.junit import iter_cases

    with path.open("rb") as stream:
        return sum(1 for _ in iter_cases(stream))


def measure(contender: str, path: Path) -> dict[str, float]:
    """Runs in the child process: parse once, report cases, seconds and peak RSS."""
    import resource

    run = {
        "stdlib_iterparse": run_stdlib_iterparse,
        "defusedxml_iterparse": run_defusedxml,
        "iter_cases": run_iter_cases,
    }[contender]
    start = time.perf_counter()
    cases = run(path)
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"cases": cases, "seconds": seconds, "peak_rss_mib": peak_kib / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument(
        "--defusedxml", action="store_true", help="also time defusedxml's iterparse"
    )
    parser.add_argument("--child", nargs=2, metavar=("CONTENDER", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], Path(args.child[1]))))
        return
    contenders = CONTENDERS + (("defusedxml_iterparse",) if args.defusedxml else ())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "junit.xml"
        write_junit(path, args.cases)
        size_mib = os.path.getsize(path) / 2**20
        print(f"{args.cases:,} cases, {size_mib:.0f} MiB of XML")
        results = {}
        for contender in contenders:
            out = subprocess.run(
                [sys.executable, __file__, "--child", contender, str(path)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            results[contender] = result = json.loads(out)
            print(
                f"{contender:22} {result['cases'] / result['seconds']:>11,.0f} cases/s"
                f"  {result['seconds']:6.2f} s  peak RSS {result['peak_rss_mib']:6.1f} MiB"
            )
        ratio = results["iter_cases"]["seconds"] / results["stdlib_iterparse"]["seconds"]
        print(f"iter_cases takes {ratio:.2f}x the time of the stdlib iterparse loop")


if __name__ == "__main__":
    main()
