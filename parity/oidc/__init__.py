"""CI without a long-lived secret: OIDC ID tokens (GitHub Actions, GitLab, Buildkite) exchanged
for a short-lived upload token (docs/oidc.md).

- ``issuers``: which issuers are trusted, and their signing keys (JWKS), fetched over HTTP and
  cached per process, refetched for an unknown key id at most once a ``refetch`` interval.
- ``tokens``: verify one JWT (alg, signature, ``iss``, ``aud``, ``exp``) into its claims, or
  refuse it naming the check that failed.
- ``identity``: the claims as one CI identity, whatever the issuer calls them, and the match
  against a project's trust rules (pure).
- ``exchange``: the services: trust rules written, and a verified identity exchanged for an
  upload token scoped to the matching rule's project and backends.
"""
