"""The eMSP calling cms: the credentials handshake, pulls of cms's SENDER modules, a token pushed
to its tokens RECEIVER, a command sent to its commands RECEIVER. Requests go out with httpx (the
library's own push helper joins a module URL and a path without a slash, so it only works
against URLs that end in one); every object is built and every answer read with the library's
pydantic schemas, and whatever does not parse is reported as an error, never dropped.
"""

import uuid
from typing import Optional

import httpx
from fastapi.encoders import jsonable_encoder
from pydantic import ValidationError
from py_ocpi.core.schemas import OCPIResponse
from py_ocpi.core.utils import encode_string_base64
from py_ocpi.modules.cdrs.v_2_2_1.schemas import Cdr
from py_ocpi.modules.commands.v_2_2_1.schemas import (
    CancelReservation,
    CommandResponse,
    ReserveNow,
    StartSession,
    StopSession,
    UnlockConnector,
)
from py_ocpi.modules.credentials.v_2_2_1.schemas import Credentials
from py_ocpi.modules.locations.v_2_2_1.schemas import EVSE, Connector, Location
from py_ocpi.modules.sessions.v_2_2_1.schemas import Session
from py_ocpi.modules.tariffs.v_2_2_1.schemas import Tariff
from py_ocpi.modules.tokens.v_2_2_1.schemas import Token, TokenPartialUpdate
from py_ocpi.modules.versions.schemas import Version
from py_ocpi.modules.versions.v_2_2_1.schemas import VersionDetail

from .state import Peer, State, new_token, now

TIMEOUT = 10.0
# A pull follows `Link: <...>; rel="next"` at most this many pages.
MAX_PAGES = 100
# What one object of a module's list is, by module; the locations module's objects by depth.
OBJECT_OF = {"locations": Location, "tariffs": Tariff, "sessions": Session, "cdrs": Cdr}
# A SENDER's object: `/{location_id}[/{evse_uid}[/{connector_id}]]` (2.2.1 locations 8.1.2).
LOCATION_DEPTH = {1: Location, 2: EVSE, 3: Connector}
COMMANDS = {
    "START_SESSION": StartSession,
    "STOP_SESSION": StopSession,
    "RESERVE_NOW": ReserveNow,
    "CANCEL_RESERVATION": CancelReservation,
    "UNLOCK_CONNECTOR": UnlockConnector,
}


class Failed(Exception):
    """A step of a call to cms that did not go as OCPI says; `exchange` is what was seen."""

    def __init__(self, step: str, error: str, exchange: Optional[dict] = None):
        super().__init__(error)
        self.outcome = {"ok": False, "step": step, "error": error}
        if exchange:
            self.outcome.update(status=exchange["status"], answer=exchange["answer"])


def problems(model, value, where: str = "") -> list:
    """What `model` (a library schema) finds wrong in `value`, one line per error."""
    try:
        model.parse_obj(value)
        return []
    except ValidationError as e:
        return [f"{where}{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()]
    except (TypeError, ValueError) as e:
        return [f"{where}{e}"]


def envelope_problems(answer) -> list:
    """The library's OCPIResponse makes `data` required; OCPI 2.2.1 does not (an error or an
    empty success may leave it out), so a missing `data` is not held against cms."""
    if not isinstance(answer, dict):
        return [f"not an OCPI envelope: {answer!r}"]
    return problems(OCPIResponse, {"data": [], **answer}, "envelope: ")


class Client:
    def __init__(self, state: State):
        self.state = state

    async def call(self, method, url, token, body=None, params=None, step="call") -> dict:
        """One request to cms, recorded in state.sent, answered as {status, headers, answer}."""
        headers = {
            "Authorization": f"Token {encode_string_base64(token)}",
            "X-Request-ID": str(uuid.uuid4()),
            "X-Correlation-ID": str(uuid.uuid4()),
        }
        exchange = {"method": method, "url": url, "params": params, "headers": headers,
                    "body": body, "status": None, "response_headers": None, "answer": None}
        self.state.sent.append(exchange)
        try:
            async with httpx.AsyncClient(trust_env=False, timeout=TIMEOUT) as client:
                response = await client.request(method, url, headers=headers, json=body,
                                                params=params)
        except httpx.HTTPError as e:
            raise Failed(step, f"{method} {url}: {e!r}")
        exchange["status"] = response.status_code
        exchange["response_headers"] = dict(response.headers)
        try:
            exchange["answer"] = response.json()
        except ValueError:
            exchange["answer"] = response.text
        exchange["links"] = {rel: link.get("url") for rel, link in response.links.items()}
        return exchange

    async def ocpi(self, method, url, token, body=None, params=None, step="call") -> dict:
        """[`call`], failing unless cms answered 2xx with an envelope of status 1000."""
        exchange = await self.call(method, url, token, body, params, step)
        found = envelope_problems(exchange["answer"])
        if found:
            raise Failed(step, "; ".join(found), exchange)
        code = exchange["answer"].get("status_code")
        if not 200 <= exchange["status"] < 300 or code != 1000:
            raise Failed(step, f"HTTP {exchange['status']}, OCPI status {code}", exchange)
        return exchange

    def peer(self):
        if self.state.peer is None:
            raise Failed("registered", "the eMSP has not registered with cms")
        return self.state.peer

    def module_url(self, identifier: str, role: Optional[str] = None) -> str:
        url = self.peer().endpoint(identifier, role)
        if not url:
            raise Failed("endpoints", f"cms's version details list no {identifier} endpoint")
        return url

    async def register(self, versions_url: str, token_a: str) -> dict:
        """The credentials handshake as the party that registers: versions, version details,
        POST credentials with token A; keeps the token cms answered with (token C)."""
        versions = await self.ocpi("GET", versions_url, token_a, step="versions")
        data = versions["answer"].get("data")
        if not isinstance(data, list):
            raise Failed("versions", "data is not a list of versions", versions)
        found = [p for i, v in enumerate(data) for p in problems(Version, v, f"data[{i}].")]
        if found:
            raise Failed("versions", "; ".join(found), versions)
        url = next((v["url"] for v in data if v["version"] == "2.2.1"), None)
        if not url:
            raise Failed("versions", "cms offers no 2.2.1", versions)
        details = await self.ocpi("GET", url, token_a, step="details")
        detail = details["answer"].get("data")
        found = problems(VersionDetail, detail, "data.")
        if found:
            raise Failed("details", "; ".join(found), details)
        credentials_url = next(
            (e["url"] for e in detail["endpoints"] if e["identifier"] == "credentials"), None)
        if not credentials_url:
            raise Failed("details", "cms lists no credentials endpoint", details)
        token_b = new_token()
        ours = jsonable_encoder(Credentials.parse_obj(self.state.credentials(token_b)))
        self.state.tokens_c.add(token_b)
        try:
            posted = await self.ocpi("POST", credentials_url, token_a, ours, step="credentials")
            theirs = posted["answer"].get("data")
            found = problems(Credentials, theirs, "data.")
            if found:
                raise Failed("credentials", "; ".join(found), posted)
        except Failed:
            self.state.tokens_c.discard(token_b)
            raise
        self.state.peer = Peer(theirs["url"], theirs["token"], detail["endpoints"],
                               theirs["roles"])
        return {"ok": True, "token_b": token_b, "token_c": theirs["token"],
                "credentials": theirs, "endpoints": detail["endpoints"]}

    async def pull(self, module: str, path: Optional[str] = None, params=None) -> dict:
        """GET cms's `module` list, page after page by its Link header; or, with `path`
        (`/{id}[/...]`, the SENDER interface's), one object. Each object is checked with its schema."""
        base = self.module_url(module, "SENDER")
        token = self.peer().token
        if path:
            url = base.rstrip("/") + path
            got = await self.ocpi("GET", url, token, step="pull")
            model = OBJECT_OF.get(module)
            if module == "locations":
                model = LOCATION_DEPTH.get(len(path.strip("/").split("/")), Location)
            item = got["answer"].get("data")
            found = problems(model, item, "data.") if model else []
            return {"ok": not found, "items": [item], "errors": found,
                    "pages": [page_of(got)]}
        items, pages, found = [], [], []
        url, query = base, dict(params or {})
        while url and len(pages) < MAX_PAGES:
            got = await self.ocpi("GET", url, token, params=query or None, step="pull")
            pages.append(page_of(got))
            data = got["answer"].get("data")
            if not isinstance(data, list):
                found.append(f"page {len(pages)}: data is not a list")
                break
            for item in data:
                found += problems(OBJECT_OF[module], item, f"item {len(items)}: ")
                items.append(item)
            # The next page's URL carries the query itself.
            url, query = got["links"].get("next"), None
        return {"ok": not found, "items": items, "errors": found, "pages": pages}

    async def push_token(self, fields: dict, method: str = "PUT") -> dict:
        """PUT (the whole Token, defaults filled in) or PATCH (the fields given, with
        last_updated) to cms's tokens RECEIVER at /{cc}/{pid}/{uid}."""
        uid = fields["uid"]
        cc = fields.get("country_code", self.state.country_code)
        pid = fields.get("party_id", self.state.party_id)
        if method == "PUT":
            token = {"country_code": cc, "party_id": pid, "type": "RFID", "contract_id": uid,
                     "issuer": self.state.name, "valid": True, "whitelist": "ALLOWED",
                     "last_updated": now(), **fields}
            body = sent = jsonable_encoder(Token.parse_obj(token))
        else:
            patch = TokenPartialUpdate.parse_obj({"last_updated": now(), **fields})
            body = jsonable_encoder(patch, exclude_unset=True)
            sent = {**self.state.tokens.get(uid.upper(), {}), **body}
        url = self.module_url("tokens", "RECEIVER").rstrip("/") + f"/{cc}/{pid}/{uid}"
        kind = fields.get("type", "RFID")
        params = {"type": kind} if kind != "RFID" else None
        got = await self.ocpi(method, url, self.peer().token, body, params, step="push")
        self.state.tokens[uid.upper()] = sent
        return {"ok": True, "status": got["status"], "answer": got["answer"], "sent": body}

    async def command(self, command: str, fields: dict) -> dict:
        """POST /{COMMAND} to cms's commands RECEIVER, its response_url the eMSP's commands
        endpoint with a uid of its own; the CommandResponse checked."""
        model = COMMANDS.get(command)
        if model is None:
            raise Failed("command", f"no command {command}: one of {sorted(COMMANDS)}")
        uid = str(uuid.uuid4())
        fields = dict(fields)
        if "token_uid" in fields:
            uid_of_token = fields.pop("token_uid")
            fields["token"] = self.state.tokens.get(uid_of_token.upper()) or {
                "country_code": self.state.country_code, "party_id": self.state.party_id,
                "uid": uid_of_token, "type": "RFID", "contract_id": uid_of_token,
                "issuer": self.state.name, "valid": True, "whitelist": "ALLOWED",
                "last_updated": now()}
        fields["response_url"] = f"{self.state.base_url}/ocpi/emsp/2.2.1/commands/{uid}"
        body = jsonable_encoder(model.parse_obj(fields))
        self.state.commands[uid] = {"command": command, "sent": body, "results": []}
        url = self.module_url("commands", "RECEIVER").rstrip("/") + f"/{command}"
        got = await self.ocpi("POST", url, self.peer().token, body, step="command")
        response = got["answer"].get("data")
        found = problems(CommandResponse, response, "data.")
        self.state.commands[uid]["answer"] = got["answer"]
        return {"ok": not found, "uid": uid, "status": got["status"], "answer": got["answer"],
                "errors": found, "sent": body}


def page_of(exchange: dict) -> dict:
    headers = exchange["response_headers"] or {}
    return {"url": exchange["url"], "status": exchange["status"],
            "total": headers.get("x-total-count"), "limit": headers.get("x-limit"),
            "link": headers.get("link"), "request_id": headers.get("x-request-id"),
            "correlation_id": headers.get("x-correlation-id"),
            "count": len(exchange["answer"].get("data") or [])
            if isinstance(exchange["answer"], dict) else 0}
