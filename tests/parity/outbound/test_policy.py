"""The egress policy (``parity.outbound.policy``): which addresses, names and URLs a request may
go to. Pure: nothing here resolves a name or opens a socket."""

import ipaddress

import pytest

from parity.outbound.policy import Policy, refusal_text, url_refusal

EXTERNAL = Policy.parse("external")

REFUSED = [
    # address, what the refusal names
    ("127.0.0.1", "loopback"),
    ("127.9.9.9", "loopback"),
    ("::1", "loopback"),
    ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"),
    ("10.0.0.1", "private"),
    ("172.16.5.4", "private"),
    ("192.168.1.1", "private"),
    ("100.64.0.1", "shared"),
    ("fc00::1", "unique-local"),
    ("fd12:3456::1", "unique-local"),
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("240.0.0.1", "private"),  # reserved (class E); Python calls it private too
    # IPv6 spellings of refused IPv4 addresses: each judged as the IPv4 address inside.
    ("::ffff:127.0.0.1", "(that is 127.0.0.1) is a loopback"),
    ("::ffff:169.254.169.254", "(that is 169.254.169.254) is a link-local"),
    ("::ffff:10.0.0.1", "(that is 10.0.0.1) is a private"),
    ("::127.0.0.1", "(that is 127.0.0.1) is a loopback"),  # IPv4-compatible
    ("64:ff9b::a9fe:a9fe", "(that is 169.254.169.254) is a link-local"),  # NAT64
    ("2002:7f00:1::", "(that is 127.0.0.1) is a loopback"),  # 6to4
    ("2002:a00:1::", "(that is 10.0.0.1) is a private"),
]


@pytest.mark.parametrize(("address", "named"), REFUSED)
def test_internal_addresses_are_refused_by_default(address, named):
    assert named in EXTERNAL.address_refusal(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]
)
def test_external_addresses_pass(address):
    assert EXTERNAL.address_refusal(ipaddress.ip_address(address)) == ""


def test_a_listed_address_or_network_passes_and_nothing_beside_it():
    policy = Policy.parse("external,127.0.0.1,10.2.0.0/16,fd00::/8")
    allowed = ["127.0.0.1", "::ffff:127.0.0.1", "10.2.3.4", "fd00::5"]
    assert [policy.address_refusal(ipaddress.ip_address(a)) for a in allowed] == [""] * 4
    for refused in ["127.0.0.2", "::1", "10.3.0.1", "fc00::1", "169.254.169.254"]:
        assert policy.address_refusal(ipaddress.ip_address(refused)), refused


def test_without_external_only_the_listed_pass():
    policy = Policy.parse("127.0.0.1")
    assert policy.address_refusal(ipaddress.ip_address("8.8.8.8")) == "8.8.8.8 is not listed"
    assert policy.address_refusal(ipaddress.ip_address("127.0.0.1")) == ""


def test_everything_and_names():
    assert Policy.parse("*").address_refusal(ipaddress.ip_address("169.254.169.254")) == ""
    named = Policy.parse("external,gitlab.corp.example,*.hooks.example")
    assert named.name_allowed("gitlab.corp.example")
    assert named.name_allowed("a.hooks.example") and not named.name_allowed("hooks.example.com")
    assert not named.name_allowed("evil.test")
    internal = [ipaddress.ip_address("10.0.0.1")]
    assert named.host_refusal("gitlab.corp.example", internal) == ""
    assert "private" in named.host_refusal("evil.test", internal)


def test_every_resolved_address_must_pass():
    both = [ipaddress.ip_address("8.8.8.8"), ipaddress.ip_address("10.0.0.1")]
    assert EXTERNAL.host_refusal("two.test", both) == "10.0.0.1 is a private address"


def test_a_setting_that_is_no_list_is_refused():
    with pytest.raises(ValueError, match="PARITY_OUTBOUND_ALLOW"):
        Policy.parse("external,http://x/")


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("ftp://files.example/x", "only http:// and https://"),
        ("file:///etc/passwd", "only http:// and https://"),
        ("gopher://x/", "only http:// and https://"),
        ("hooks.example/x", "got no scheme"),
        ("http:///x", "names no host"),
        ("http://127.0.0.1:8000/hook", "loopback"),
        ("http://[::1]:8000/hook", "loopback"),
        ("http://[::ffff:127.0.0.1]/hook", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.1.2.3/hook", "private"),
        ("http://192.168.0.10/hook", "private"),
        ("http://localhost:9000/hook", "loopback"),
        ("http://api.localhost/hook", "loopback"),
    ],
)
def test_a_url_is_judged_without_resolving(url, named):
    assert named in url_refusal(url, EXTERNAL)


def test_a_name_is_left_to_the_request_which_resolves_it():
    assert url_refusal("https://hooks.slack.com/services/T/B/s", EXTERNAL) == ""


def test_the_refusal_says_why_and_which_setting_allows_it_but_not_the_path():
    url = "http://10.1.2.3/services/T000/B000/secret-part"
    text = refusal_text(url, url_refusal(url, EXTERNAL))
    assert text.startswith("http://10.1.2.3/… is refused: 10.1.2.3 is a private address.")
    assert "PARITY_OUTBOUND_ALLOW" in text and "secret-part" not in text
    # A scheme no setting allows does not point at the setting.
    scheme = refusal_text("ftp://x/", url_refusal("ftp://x/", EXTERNAL))
    assert "PARITY_OUTBOUND_ALLOW" not in scheme
