"""Webhook bodies and their signatures, as plain data: no Django, no network.

A receiver checks ``X-Parity-Signature: sha256=<hex>``, the HMAC-SHA256 under the endpoint's
secret of ``<X-Parity-Timestamp>.<raw body>``. The timestamp is inside the signed string, so a
captured request replayed later fails the receiver's age check (docs/webhooks.md).
"""

import hashlib
import hmac
import json
from dataclasses import dataclass

SIGNATURE_HEADER = "X-Parity-Signature"
TIMESTAMP_HEADER = "X-Parity-Timestamp"
EVENT_HEADER = "X-Parity-Event"
DELIVERY_HEADER = "X-Parity-Delivery"
# How old a timestamp a receiver should accept (verify's default).
TOLERANCE_SECONDS = 5 * 60
# Items each list of a Slack message names before "and N more": Slack caps a block's text.
SLACK_ITEMS = 10


def body_encode(payload: dict) -> bytes:
    """The exact bytes sent and signed: compact, keys sorted, UTF-8."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """The value of the signature header for ``body`` sent at ``timestamp`` (Unix seconds)."""
    signed = str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def headers_signed(*, secret: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(secret=secret, timestamp=timestamp, body=body),
    }


@dataclass(frozen=True)
class Unverified(Exception):
    why: str

    def __str__(self) -> str:
        return self.why


def verify(
    *,
    secret: str,
    body: bytes,
    timestamp: str,
    signature_header: str,
    now: int,
    tolerance: int = TOLERANCE_SECONDS,
) -> None:
    """Raise ``Unverified`` unless ``signature_header`` signs ``body`` at ``timestamp`` and the
    timestamp is within ``tolerance`` seconds of ``now``: what a receiver runs."""
    try:
        sent_at = int(timestamp)
    except (TypeError, ValueError):
        raise Unverified(f"timestamp {timestamp!r} is not Unix seconds") from None
    if abs(now - sent_at) > tolerance:
        raise Unverified(f"timestamp {sent_at} is more than {tolerance}s from now ({now})")
    expected = signature(secret=secret, timestamp=sent_at, body=body)
    if not hmac.compare_digest(expected, signature_header or ""):
        raise Unverified("signature does not match the body")


def slack_message(payload: dict) -> dict:
    """The event as a Slack incoming webhook's message: ``text`` (the notification's line) and
    ``blocks`` (a header line and up to ``SLACK_ITEMS`` items per list)."""
    title = payload.get("title", payload.get("event", "parity"))
    url = payload.get("url", "")
    headline = f"<{url}|{_escape(title)}>" if url else _escape(title)
    blocks: list[dict] = [{"type": "section", "text": {"type": "mrkdwn", "text": headline}}]
    for section in payload.get("sections", []):
        lines = [f"*{_escape(section['heading'])}*"]
        items = section.get("items", [])
        for item in items[:SLACK_ITEMS]:
            text = _escape(item["text"])
            lines.append(f"• <{item['url']}|{text}>" if item.get("url") else f"• {text}")
        more = section.get("total", len(items)) - min(len(items), SLACK_ITEMS)
        if more > 0:
            lines.append(f"… and {more} more")
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}})
    return {"text": title, "blocks": blocks}


def _escape(text: str) -> str:
    # Slack's mrkdwn reads these three as markup (links, mentions).
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
