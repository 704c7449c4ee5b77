"""parity's pure code: bytes, strings and plain data in, plain dataclasses out; the standard
library and its parsers only (the ``pure`` contract of .importlinter and
tests/tools/test_pure_imports.py), so all of it is tested without a database or a network.

- ``junit``: the streaming JUnit XML reader (pyexpat), its limits and errors.
- ``archives``: the archive reader (tar, zip, gzip, xz) that finds the reports in an upload.
- ``normalize``: test identity across backends and runners (``ids``, ``runner_ids``,
  ``suites``), skip reasons and the issues they cite (``reasons``, ``issues``), identity rules.
- The rule languages: exemption patterns (``globs``), skip rules (``skip_rules``), code owners
  (``codeowners``).
- ``list_formats``: the lists teams keep, read and written in their own formats, parity's own
  file among them (``list_formats.parity_file``).
- ``oidc_claims``: whether a CI token's claims match a project's trust rules.
- Small helpers the pages and the client share: reproduce commands (``reproduce``), run
  manifests (``run_manifest``), ISO weeks (``weeks``), the headline score (``scores``), a
  table of values worked out once per key (``memo``).
"""
