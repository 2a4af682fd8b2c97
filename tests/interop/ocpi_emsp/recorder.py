"""Records every request cms makes under /ocpi as it arrived (method, path, query, headers, body)
and what the library answered, for the control API to report. Plain ASGI around the library's
app, so the library still reads the body and answers as it would.

One answer is mended: the library answers a real-time authorisation (`POST
tokens/{uid}/authorize`) with `data` a list holding the AuthorizationInfo, where OCPI 2.2.1 says
`data` is the AuthorizationInfo itself; the list is unwrapped so that cms is tested against the
spec, not against that slip.
"""

import binascii
import json
import re

from py_ocpi.core.utils import decode_string_base64

from .state import State

EMSP_MODULE = re.compile(r"^/ocpi/emsp/2\.2\.1/([a-z]+)")
AUTHORIZE = re.compile(r"^/ocpi/emsp/2\.2\.1/tokens/[^/]+/authorize/?$")


def module_of(path: str) -> str:
    """`locations`, `tokens`, ... for a module's path; `versions` and `details` for those."""
    found = EMSP_MODULE.match(path)
    if found:
        return found.group(1)
    return "versions" if path.rstrip("/").endswith("/versions") else "details"


def parsed(raw: bytes):
    """JSON when it is JSON, else the text (an empty body is None)."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


class Recorder:
    def __init__(self, app, state: State):
        self.app = app
        self.state = state

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/ocpi/"):
            return await self.app(scope, receive, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        entry = {
            "method": scope["method"],
            "path": scope["path"],
            "query": scope.get("query_string", b"").decode(),
            "module": module_of(scope["path"]),
            "headers": headers,
            "token": token_of(headers.get("authorization", "")),
            "body": None,
            "status": None,
            "answer": None,
        }
        # Seen on arrival, so that a test sees an authorisation the eMSP is still delaying.
        self.state.received.append(entry)
        body = bytearray()

        async def receive_recorded():
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body"):
                    entry["body"] = parsed(bytes(body))
            return message

        start = {}
        answer = bytearray()

        async def send_recorded(message):
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                return await send(message)
            answer.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            out = bytes(answer)
            if AUTHORIZE.match(scope["path"]):
                out = unwrapped(out)
            entry["status"] = start["status"]
            entry["answer"] = parsed(out)
            headers = [(k, v) for k, v in start.get("headers", [])
                       if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(out)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": out})

        await self.app(scope, receive_recorded, send_recorded)


def token_of(authorization: str):
    """The credentials token of `Authorization: Token <base64>`, decoded as the library does for
    2.2.1 (None when the header is not that)."""
    scheme, _, value = authorization.partition(" ")
    if scheme != "Token" or not value:
        return None
    try:
        return decode_string_base64(value.strip())
    except (binascii.Error, UnicodeDecodeError):
        return None


def unwrapped(raw: bytes) -> bytes:
    """The envelope with a one-item `data` list replaced by the item."""
    try:
        envelope = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(envelope, dict) and isinstance(envelope.get("data"), list):
        if len(envelope["data"]) == 1:
            envelope["data"] = envelope["data"][0]
            return json.dumps(envelope).encode()
    return raw
