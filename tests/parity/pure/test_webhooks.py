import hashlib
import hmac
import json

import pytest

from parity.pure import webhooks as signing

SECRET = "s3cret"
BODY = signing.body_encode({"event": "untracked_gaps", "data": {"opened_total": 1}})


def test_the_signature_is_hmac_sha256_of_timestamp_dot_body():
    expected = hmac.new(SECRET.encode(), b"1700000000." + BODY, hashlib.sha256).hexdigest()
    assert signing.signature(secret=SECRET, timestamp=1700000000, body=BODY) == (
        f"sha256={expected}"
    )


def test_a_signed_body_verifies():
    headers = signing.headers_signed(secret=SECRET, timestamp=1700000000, body=BODY)
    signing.verify(
        secret=SECRET,
        body=BODY,
        timestamp=headers[signing.TIMESTAMP_HEADER],
        signature_header=headers[signing.SIGNATURE_HEADER],
        now=1700000100,
    )


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"body": BODY.replace(b"1", b"2")}, "does not match"),
        ({"secret": "other"}, "does not match"),
        ({"timestamp": "1700000001"}, "does not match"),  # a timestamp moved to pass the age
        ({"now": 1700000000 + 301}, "more than 300s"),  # a replay after the tolerance
        ({"timestamp": "yesterday"}, "not Unix seconds"),
        ({"signature_header": ""}, "does not match"),
    ],
)
def test_a_tampered_stale_or_unsigned_request_fails(change, why):
    signed = signing.signature(secret=SECRET, timestamp=1700000000, body=BODY)
    arguments = {
        "secret": SECRET,
        "body": BODY,
        "timestamp": "1700000000",
        "signature_header": signed,
        "now": 1700000000,
        **change,
    }
    with pytest.raises(signing.Unverified, match=why):
        signing.verify(**arguments)


def test_the_body_is_compact_sorted_utf8():
    assert signing.body_encode({"b": "é", "a": 1}) == '{"a":1,"b":"é"}'.encode()


def test_a_slack_message_has_text_and_blocks_and_caps_each_list():
    items = [{"text": f"test_{n} (skipped)", "url": f"http://x/{n}"} for n in range(12)]
    message = signing.slack_message(
        {
            "title": "xla tpu: 30 untracked gaps opened <b>",
            "url": "http://x/run/1",
            "sections": [{"heading": "Opened", "total": 30, "items": items}],
        }
    )
    assert message["text"] == "xla tpu: 30 untracked gaps opened <b>"
    head, opened = message["blocks"]
    assert head["text"]["text"] == "<http://x/run/1|xla tpu: 30 untracked gaps opened &lt;b&gt;>"
    lines = opened["text"]["text"].splitlines()
    assert lines[0] == "*Opened*"
    assert lines[1] == "• <http://x/0|test_0 (skipped)>"
    assert len(lines) == 1 + signing.SLACK_ITEMS + 1
    assert lines[-1] == "… and 20 more"
    json.dumps(message)  # plain data Slack takes as it is
