"""Where parity may send a request: the egress policy of ``PARITY_OUTBOUND_ALLOW``.

Pure: it reads the setting's text and judges addresses, names and URLs; it resolves nothing and
connects nowhere (``parity.outbound.transport`` does, after asking it). The setting is a comma
list of entries, any of:

- ``external``: every globally routable address (the default);
- ``*``: every address, the internal network included;
- an address or a network (``127.0.0.1``, ``10.1.0.0/16``, ``::1``, ``fd00::/8``);
- a host name (``hooks.corp.example``) or a domain's names (``*.corp.example``): whatever that
  name resolves to.

An address is judged in each form it may reach: an IPv4-mapped (``::ffff:127.0.0.1``),
IPv4-compatible (``::127.0.0.1``), 6to4 or NAT64 (``64:ff9b::/96``) IPv6 address is also judged
as the IPv4 address inside it, so no spelling of a refused address passes.
"""

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

SETTING = "PARITY_OUTBOUND_ALLOW"
SCHEMES = ("http", "https")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: inside someone's network
_LOCAL_NAMES = ("localhost", "localhost.localdomain")
NOT_SENT = "never: "  # begins a refusal no setting lifts


class OutboundError(Exception):
    """A request got no answer to read: refused by the policy, unreachable, too slow, too big."""


class Refused(OutboundError):
    """The policy refuses this destination; the message says why and which setting allows it.
    Nothing was sent, and nothing will be until the URL or the setting changes."""


def _kind(address: IPAddress) -> str:
    """What kind of internal address ``address`` is, or "" when it is external."""
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (cloud instance metadata lives at 169.254.169.254)"
    if address.is_multicast:
        return "a multicast address"
    if address.version == 6 and address in ipaddress.ip_network("fc00::/7"):
        return "a unique-local address"
    if address.version == 6 and address.is_site_local:
        return "a site-local address"
    if address.version == 4 and address in _SHARED:
        return "a shared (carrier-grade NAT) address"
    if address.is_private:
        return "a private address"
    if address.is_reserved:
        return "a reserved address"
    if not address.is_global:
        return "an address that is not globally routable"
    return ""


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, 6to4, NAT64), if any."""
    if address.version == 4:
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64 or address in _IPV4_COMPATIBLE:
        if address in _IPV4_COMPATIBLE and int(address) <= 1:
            return None  # :: and ::1 are themselves, not 0.0.0.0 and 0.0.0.1
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_parse(text: str) -> IPAddress | None:
    """``text`` as an address (``[::1]`` and ``fe80::1%eth0`` too), or None for a name."""
    text = text.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class Policy:
    """The parsed setting: which destinations a request may go to."""

    everything: bool = False
    external: bool = True
    networks: tuple[IPNetwork, ...] = ()
    names: tuple[str, ...] = ()  # lower-case; "*.corp.example" covers its subdomains

    @classmethod
    def parse(cls, text: str) -> "Policy":
        entries = [e.strip().lower() for e in (text or "external").split(",") if e.strip()]
        networks, names = [], []
        for entry in entries:
            if entry in ("*", "external"):
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                if not entry.replace("*.", "", 1).replace("-", "").replace(".", "").isalnum():
                    raise ValueError(
                        f"{SETTING}: {entry!r} is neither external, *, an address, a network "
                        "nor a host name"
                    ) from None
                names.append(entry.rstrip("."))
        return cls(
            everything="*" in entries,
            external="external" in entries,
            networks=tuple(networks),
            names=tuple(names),
        )

    def name_allowed(self, host: str) -> bool:
        """``host`` is listed by name: whatever it resolves to may be reached."""
        host = host.lower().rstrip(".")
        return any(host == n or (n.startswith("*.") and host.endswith(n[1:])) for n in self.names)

    def _listed(self, address: IPAddress) -> bool:
        return any(address.version == n.version and address in n for n in self.networks)

    def address_refusal(self, address: IPAddress) -> str:
        """Why ``address`` is refused ("" when allowed): it and the IPv4 address it carries."""
        if self.everything or self._listed(address):
            return ""
        inner = embedded_ipv4(address)
        if inner is not None and self._listed(inner):
            return ""
        kind = _kind(inner) if inner is not None else ""
        if not kind and not (inner is not None and address.ipv4_mapped or address in _NAT64):
            kind = _kind(address)  # a translation of an external IPv4 address is external
        if not kind and self.external:
            return ""
        if not kind:
            return f"{address} is not listed"
        shown = f"{address} (that is {inner})" if inner is not None else str(address)
        return f"{shown} is {kind}"

    def host_refusal(self, host: str, addresses: list[IPAddress]) -> str:
        """Why a request to ``host``, which resolved to ``addresses``, is refused ("" when
        allowed): every address must pass, or a name resolving to two could pick the bad one."""
        if self.name_allowed(host):
            return ""
        for address in addresses:
            why = self.address_refusal(address)
            if why:
                return why
        return ""


def refusal_text(url: str, why: str) -> str:
    """The refusal as a user reads it: what, why, and which setting allows it (when one can)."""
    if why.startswith(NOT_SENT):
        return f"{url_shown(url)} is refused: {why.removeprefix(NOT_SENT)}."
    return (
        f"{url_shown(url)} is refused: {why}. Parity sends requests to external addresses "
        f"only, unless the setting {SETTING} lists this host or its network (docs/security.md)."
    )


def url_shown(url: str) -> str:
    """``url`` without its path and query (a Slack URL's path is its secret)."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return repr(url[:60])
    return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}/…"


def url_refusal(url: str, policy: Policy) -> str:
    """Why ``url`` can never be sent to under ``policy``, judged without resolving its name
    ("" when it may be; a name is resolved and judged again at each request): the scheme, an
    address written in the URL, and the names every machine gives its own loopback."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - a port out of range raises here
    except ValueError:
        return f"{NOT_SENT}it is not a URL"
    if parts.scheme.lower() not in SCHEMES:
        scheme = parts.scheme or "no"
        return f"{NOT_SENT}only http:// and https:// URLs are sent to (got {scheme} scheme)"
    host = (parts.hostname or "").lower()
    if not host:
        return f"{NOT_SENT}it names no host"
    if policy.name_allowed(host):
        return ""
    address = address_parse(host)
    if address is not None:
        return policy.address_refusal(address)
    if host.rstrip(".") in _LOCAL_NAMES or host.rstrip(".").endswith(".localhost"):
        return policy.host_refusal(
            host, [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]
        )
    return ""
