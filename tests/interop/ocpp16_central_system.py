#!/usr/bin/env python3
"""A third-party OCPP 1.6J (or, with --ocpp 2.0.1, OCPP 2.0.1) central system that cms relays
chargers to, for the end-to-end tests of proxy relaying (tests/e2e/proxy_harness.rs,
tests/e2e/support/central_system.rs).

Usage: ocpp16_central_system.py [--port N] [--tls-cert FILE --tls-key FILE] [--basic USER:PASS]
                                [--interval N] [--transaction-id N] [--silent | --silent-after N]
                                [--ocpp 1.6 | 2.0.1] [--for S]

Built on the `ocpp` package's ChargePoint (pinned in requirements.txt beside this file), which
validates every CALL and CALLRESULT, both ways, against the official OCPP 1.6 JSON schemas. It
serves websockets on 127.0.0.1:N (--port 0, the default, picks a free port), wss with
--tls-cert and --tls-key (a PEM chain and its key). Any path `/ANYTHING/IDENTITY` (or
`/IDENTITY`) is a charger: the identity is the last path segment, percent-decoded. The upgrade
must offer subprotocol `ocpp1.6` (else 400, and unexpected: cms always offers it); with
--basic USER:PASS it must carry `Authorization: Basic USER:PASS` (else 401, a `refused` line, not
unexpected: a test may mean it). Each connection gets one ChargePoint that answers every call a
charger makes:
  BootNotification Accepted, interval --interval (300), currentTime now; Heartbeat currentTime
  now; Authorize Accepted; StartTransaction transactionId --transaction-id (4242, the same for
  every one), Accepted; StopTransaction {} (idTagInfo Accepted when an idTag came); DataTransfer
  Accepted with the data sent (none when none came); StatusNotification, MeterValues,
  DiagnosticsStatusNotification and FirmwareStatusNotification {}.
With --ocpp 2.0.1 the upgrade must offer `ocpp2.0.1` instead, and the `ocpp` package's v201
ChargePoint answers, checked against the OCPP 2.0.1 schemas: BootNotification Accepted, interval
--interval; Heartbeat; Authorize idTokenInfo Accepted (Blocked for the idToken `BLOCKED-AT-LEADER`);
TransactionEvent {} (idTokenInfo as Authorize's when an idToken came); StatusNotification,
MeterValues, NotifyReport, NotifyEvent, SecurityEventNotification, FirmwareStatusNotification,
LogStatusNotification {}; DataTransfer Accepted with the data sent.
--silent answers no call at all (a central system that hangs); --silent-after N answers the
first N calls it receives, over all connections, and none after.

Stdout, one JSON object a line (flushed at once), so that a test can assert what arrived:
  {"listening": "ws://127.0.0.1:PORT" | "wss://...", "at": T}    always the first line
  {"connected": IDENTITY, "path": PATH, "connection": N, "user": USER | null, "at": T}
                                                  N counts connections from 1, over all chargers;
                                                  `user` is that of the Basic credentials, if any
  {"refused": PATH, "status": 401, "user": USER | null, "at": T}   bad or no Basic credentials
  {"received": ACTION, "unique_id": ID, "payload": {...}, "identity": IDENTITY,
   "connection": N, "at": T}                      a CALL from a charger, in the order they arrived
  {"answered": ACTION, "unique_id": ID, "payload": {...} | "error": [CODE, DESCRIPTION],
   "identity": IDENTITY, "connection": N, "at": T}   what it answered (a CALLERROR is unexpected:
                                                  the call broke its schema or has no handler)
  {"sent": ACTION, "identity": IDENTITY, "connection": N, "unique_id": ID, "payload": {...},
   "answer": {...} | "error": [CODE, DESCRIPTION] | "timeout": true, "at": T}
                                                  a CALL of its own (stdin `call`) and how the
                                                  charger answered: a CALLERROR is an outcome the
                                                  test asserts on, not unexpected; no answer
                                                  within 10 s is a time-out
  {"disconnected": IDENTITY, "connection": N, "code": C | null, "at": T}   closed by either side
  {"unexpected": WHAT, "at": T}                   also on stderr; makes the exit status 1
T is UTC with microseconds, `2026-11-21T10:00:00.123456Z`.

Stdin, one command a line:
  call IDENTITY ACTION JSON_PAYLOAD   sends a CALL to the latest connection of IDENTITY, e.g.
                                      `call CP-1 RemoteStartTransaction {"idTag":"ABC"}`; the
                                      payload is checked against the schema before it goes
  close IDENTITY                      closes the latest connection of IDENTITY (close code 1000)
Calls run concurrently across connections, one at a time on each (OCPP's one call in flight).
At stdin's end, or after --for seconds, it closes every connection (1001) and exits.

Exit status: 0 unless something unexpected happened: a charger's CALL broke its schema or had no
handler, an upgrade without `ocpp1.6` or without an identity, a frame that is not OCPP-J, a
charger's answer that broke its schema, a bad or impossible stdin command (a `call` or `close`
of an identity not connected, a payload against the schema). 2 for bad arguments.
"""

import argparse
import asyncio
import base64
import binascii
import hmac
import json
import logging
import ssl
import sys
import threading
import urllib.parse
import uuid
from dataclasses import asdict
from datetime import datetime, timezone
from http import HTTPStatus

import websockets
from websockets.asyncio.server import serve
from ocpp.charge_point import camel_to_snake_case, remove_nones, snake_to_camel_case
from ocpp.exceptions import OCPPError
from ocpp.messages import Call, validate_payload
from ocpp.routing import on
from ocpp import v201
from ocpp.v16 import ChargePoint, call, call_result
from ocpp.v16.enums import Action, AuthorizationStatus, DataTransferStatus, RegistrationStatus

RESPONSE_TIMEOUT_S = 10
CLOSE_TIMEOUT_S = 2
SUBPROTOCOL = {"1.6": "ocpp1.6", "2.0.1": "ocpp2.0.1"}
# The idToken a 2.0.1 leader refuses, so that a test tells its verdict from cms's.
BLOCKED_AT_LEADER = "BLOCKED-AT-LEADER"


def now():
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def emit(line):
    line["at"] = now()
    print(json.dumps(line, separators=(",", ":")), flush=True)


class Unexpected:
    """What went wrong that should not have: each is printed, and any makes the exit status 1."""

    seen = []

    @classmethod
    def record(cls, what):
        cls.seen.append(what)
        emit({"unexpected": what})
        print(f"UNEXPECTED {what}", file=sys.stderr, flush=True)


class OutcomesUnlogged(logging.Filter):
    """The package warns of every CALLERROR answering our calls: here they are outcomes, printed
    as `sent` lines."""

    def filter(self, record):
        return not str(record.msg).startswith("Received a CALLError")


class Silence:
    """How many more calls it answers, over all connections: None for all of them."""

    def __init__(self, answers_left):
        self.answers_left = answers_left

    def answers(self):
        if self.answers_left is None:
            return True
        if self.answers_left <= 0:
            return False
        self.answers_left -= 1
        return True


class Link:
    """One charger's websocket as the ChargePoint sees it: prints every answer handed to the
    socket, and keeps the charger's answers to our own calls as they came on the wire (the
    package's call() turns a CALLERROR and an invalid answer into the same exception types)."""

    def __init__(self, ws, identity, number):
        self.ws = ws
        self.identity = identity
        self.number = number
        self.unanswered = {}
        # Answers to our calls, by unique id: the raw frame, [3, id, payload] or [4, id, ...].
        self.answers = {}

    async def send(self, message):
        frame = json.loads(message)
        if frame[0] in (3, 4):
            action = self.unanswered.pop(frame[1], "?")
            line = {"answered": action, "unique_id": frame[1]}
            if frame[0] == 3:
                line["payload"] = frame[2]
            else:
                line["error"] = [frame[2], frame[3]]
                Unexpected.record(
                    f"we answered {self.identity}'s {action} {frame[1]} with {frame[2:]}"
                )
            line.update(identity=self.identity, connection=self.number)
            emit(line)
        await self.ws.send(message)

    async def recv(self):
        return await self.ws.recv()


class Serving:
    """The central system's side of one connection, in either version: reading frames, and our
    own calls. The version's ChargePoint class comes after it in the bases, with the answers."""

    OCPP_VERSION = None
    CALLS = None

    def __init__(self, link, args, silence):
        super().__init__(link.identity, link, response_timeout=RESPONSE_TIMEOUT_S)
        self.args = args
        self.silence = silence
        self.handlers = set()

    async def serve(self):
        """Reads frames until the connection closes. Each CALL is handled in a task of its own,
        so that a silent handler does not stop the answers to our own calls from being read."""
        link = self._connection
        while True:
            raw = await link.recv()
            try:
                frame = json.loads(raw)
            except ValueError:
                Unexpected.record(f"{link.identity} sent a frame that is not JSON: {raw!r}")
                continue
            if not isinstance(frame, list) or len(frame) < 3 or frame[0] not in (2, 3, 4):
                Unexpected.record(f"{link.identity} sent a frame that is not OCPP-J: {raw!r}")
                continue
            if frame[0] in (3, 4):
                link.answers[frame[1]] = frame
                await self.route_message(raw)
                continue
            emit(
                {
                    "received": frame[2],
                    "unique_id": frame[1],
                    "payload": frame[3] if len(frame) > 3 else None,
                    "identity": link.identity,
                    "connection": link.number,
                }
            )
            if not self.silence.answers():
                continue
            link.unanswered[frame[1]] = frame[2]
            task = asyncio.create_task(self.route_message(raw))
            self.handlers.add(task)
            task.add_done_callback(self.handlers.discard)

    async def send_call(self, action, payload):
        """One CALL of ours, checked against the schema, and the charger's answer as a `sent`
        line. A CALLERROR is an outcome; an answer that breaks its schema is unexpected."""
        link = self._connection
        unique_id = str(uuid.uuid4())
        line = {
            "sent": action,
            "identity": link.identity,
            "connection": link.number,
            "unique_id": unique_id,
            "payload": payload,
        }
        try:
            await validate_payload(Call(unique_id, action, payload), self.OCPP_VERSION)
            # The package's request dataclass of the action, so that call() sends it as asked.
            request = getattr(self.CALLS, action)(**camel_to_snake_case(payload))
        except (OCPPError, AttributeError, TypeError) as error:
            Unexpected.record(f"cannot send {action} {payload}: {type(error).__name__}: {error}")
            return
        try:
            await self.call(request, suppress=False, unique_id=unique_id)
        except asyncio.TimeoutError:
            line["timeout"] = True
        except OCPPError as error:
            frame = link.answers.get(unique_id)
            if frame is None or frame[0] != 4:
                Unexpected.record(
                    f"{link.identity} answered our {action} {unique_id} against its schema: "
                    f"{type(error).__name__}: {error} ({frame})"
                )
                return
        except websockets.ConnectionClosed:
            Unexpected.record(f"the connection of {link.identity} closed as we sent {action}")
            return
        frame = link.answers.pop(unique_id, None)
        if frame is not None and frame[0] == 3:
            line["answer"] = frame[2]
        elif frame is not None:
            line["error"] = [frame[2], frame[3] if len(frame) > 3 else ""]
        emit(line)


class RelayedChargePoint(Serving, ChargePoint):
    """The 1.6 central system's answers."""

    OCPP_VERSION = "1.6"
    CALLS = call

    @on(Action.boot_notification)
    def on_boot_notification(self, **_):
        return call_result.BootNotification(
            current_time=now(), interval=self.args.interval, status=RegistrationStatus.accepted
        )

    @on(Action.heartbeat)
    def on_heartbeat(self, **_):
        return call_result.Heartbeat(current_time=now())

    @on(Action.status_notification)
    def on_status_notification(self, **_):
        return call_result.StatusNotification()

    @on(Action.meter_values)
    def on_meter_values(self, **_):
        return call_result.MeterValues()

    @on(Action.authorize)
    def on_authorize(self, **_):
        return call_result.Authorize(id_tag_info={"status": AuthorizationStatus.accepted})

    @on(Action.start_transaction)
    def on_start_transaction(self, **_):
        return call_result.StartTransaction(
            transaction_id=self.args.transaction_id,
            id_tag_info={"status": AuthorizationStatus.accepted},
        )

    @on(Action.stop_transaction)
    def on_stop_transaction(self, id_tag=None, **_):
        info = None if id_tag is None else {"status": AuthorizationStatus.accepted}
        return call_result.StopTransaction(id_tag_info=info)

    @on(Action.data_transfer)
    def on_data_transfer(self, data=None, **_):
        return call_result.DataTransfer(status=DataTransferStatus.accepted, data=data)

    @on(Action.diagnostics_status_notification)
    def on_diagnostics_status_notification(self, **_):
        return call_result.DiagnosticsStatusNotification()

    @on(Action.firmware_status_notification)
    def on_firmware_status_notification(self, **_):
        return call_result.FirmwareStatusNotification()


class Relayed201ChargePoint(Serving, v201.ChargePoint):
    """The 2.0.1 central system's answers."""

    OCPP_VERSION = "2.0.1"
    CALLS = v201.call

    @staticmethod
    def verdict(id_token):
        refused = id_token is not None and id_token.get("id_token") == BLOCKED_AT_LEADER
        return {"status": "Blocked" if refused else "Accepted"}

    @on("BootNotification")
    def on_boot_notification(self, **_):
        return v201.call_result.BootNotification(
            current_time=now(), interval=self.args.interval, status="Accepted"
        )

    @on("Heartbeat")
    def on_heartbeat(self, **_):
        return v201.call_result.Heartbeat(current_time=now())

    @on("Authorize")
    def on_authorize(self, id_token, **_):
        return v201.call_result.Authorize(id_token_info=self.verdict(id_token))

    @on("TransactionEvent")
    def on_transaction_event(self, id_token=None, **_):
        info = None if id_token is None else self.verdict(id_token)
        return v201.call_result.TransactionEvent(id_token_info=info)

    @on("DataTransfer")
    def on_data_transfer(self, data=None, **_):
        return v201.call_result.DataTransfer(status="Accepted", data=data)

    @on("StatusNotification")
    def on_status_notification(self, **_):
        return v201.call_result.StatusNotification()

    @on("MeterValues")
    def on_meter_values(self, **_):
        return v201.call_result.MeterValues()

    @on("NotifyReport")
    def on_notify_report(self, **_):
        return v201.call_result.NotifyReport()

    @on("NotifyEvent")
    def on_notify_event(self, **_):
        return v201.call_result.NotifyEvent()

    @on("SecurityEventNotification")
    def on_security_event_notification(self, **_):
        return v201.call_result.SecurityEventNotification()

    @on("FirmwareStatusNotification")
    def on_firmware_status_notification(self, **_):
        return v201.call_result.FirmwareStatusNotification()

    @on("LogStatusNotification")
    def on_log_status_notification(self, **_):
        return v201.call_result.LogStatusNotification()


class CentralSystem:
    """The server: who is connected, and the handshake's checks."""

    def __init__(self, args):
        self.args = args
        self.silence = Silence(0 if args.silent else args.silent_after)
        # The latest connection of each identity: (Link, RelayedChargePoint).
        self.links = {}
        self.connections = 0
        # The stdin commands under way (calls, closes), kept so that none is collected early.
        self.tasks = set()

    @staticmethod
    def identity_of(path):
        segment = urllib.parse.urlsplit(path).path.rstrip("/").rpartition("/")[2]
        return urllib.parse.unquote(segment)

    @staticmethod
    def basic_user(request):
        """The user of the request's Basic credentials and the password, or (None, None)."""
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "basic":
            return None, None
        try:
            decoded = base64.b64decode(token.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None, None
        user, _, password = decoded.partition(":")
        return user, password

    def process_request(self, connection, request):
        offered = request.headers.get_all("Sec-WebSocket-Protocol")
        offered = [p.strip() for value in offered for p in value.split(",")]
        subprotocol = SUBPROTOCOL[self.args.ocpp]
        if subprotocol not in offered:
            Unexpected.record(f"an upgrade to {request.path} offered {offered}, not {subprotocol}")
            return connection.respond(HTTPStatus.BAD_REQUEST, f"subprotocol {subprotocol} only\n")
        if not self.identity_of(request.path):
            Unexpected.record(f"an upgrade to {request.path}, which names no charger")
            return connection.respond(HTTPStatus.NOT_FOUND, "no identity in the path\n")
        if self.args.basic is None:
            return None
        user, password = self.basic_user(request)
        expected_user, _, expected_password = self.args.basic.partition(":")
        # Both compared whatever the first gives, in constant time: a habit worth keeping.
        good_user = hmac.compare_digest((user or "").encode(), expected_user.encode())
        good_password = hmac.compare_digest((password or "").encode(), expected_password.encode())
        if user is not None and good_user and good_password:
            return None
        emit({"refused": request.path, "status": 401, "user": user})
        response = connection.respond(HTTPStatus.UNAUTHORIZED, "bad or no Basic credentials\n")
        response.headers["WWW-Authenticate"] = 'Basic realm="central system"'
        return response

    async def handle(self, ws):
        path = ws.request.path
        identity = self.identity_of(path)
        self.connections += 1
        link = Link(ws, identity, self.connections)
        serving = Relayed201ChargePoint if self.args.ocpp == "2.0.1" else RelayedChargePoint
        charge_point = serving(link, self.args, self.silence)
        self.links[identity] = (link, charge_point)
        user, _ = self.basic_user(ws.request)
        emit({"connected": identity, "path": path, "connection": link.number, "user": user})
        try:
            await charge_point.serve()
        except websockets.ConnectionClosed:
            pass
        except Exception as error:  # a bug here must not pass silently
            Unexpected.record(f"serving {identity} failed: {type(error).__name__}: {error!r}")
        finally:
            for task in list(charge_point.handlers):
                task.cancel()
            if self.links.get(identity, (None,))[0] is link:
                del self.links[identity]
            emit({"disconnected": identity, "connection": link.number, "code": ws.close_code})

    def command(self, line):
        verb, _, rest = line.partition(" ")
        if verb == "call":
            identity, action, payload = (rest.split(" ", 2) + ["", ""])[:3]
            try:
                payload = json.loads(payload or "{}")
            except ValueError as error:
                Unexpected.record(f"the payload of `{line}` is not JSON: {error}")
                return
            if not isinstance(payload, dict):
                Unexpected.record(f"the payload of `{line}` is not a JSON object")
                return
            if identity not in self.links:
                Unexpected.record(f"`{line}`: {identity} is not connected")
                return
            task = asyncio.create_task(self.links[identity][1].send_call(action, payload))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        elif verb == "close":
            if rest not in self.links:
                Unexpected.record(f"`{line}`: {rest} is not connected")
                return
            task = asyncio.create_task(self.links[rest][0].ws.close(1000))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        elif verb:
            Unexpected.record(f"unknown command on stdin: {line!r}")


def read_stdin(loop, commands):
    """Stdin lines into the loop's queue, then None at its end (a daemon thread, which never
    holds up the exit)."""
    for line in sys.stdin:
        loop.call_soon_threadsafe(commands.put_nowait, line.strip())
    loop.call_soon_threadsafe(commands.put_nowait, None)


async def run(args, tls):
    loop = asyncio.get_running_loop()
    commands = asyncio.Queue()
    threading.Thread(target=read_stdin, args=(loop, commands), daemon=True).start()
    central = CentralSystem(args)
    async with serve(
        central.handle,
        "127.0.0.1",
        args.port,
        subprotocols=[SUBPROTOCOL[args.ocpp]],
        process_request=central.process_request,
        ssl=tls,
        close_timeout=CLOSE_TIMEOUT_S,
    ) as server:
        port = server.sockets[0].getsockname()[1]
        emit({"listening": f"{'wss' if tls else 'ws'}://127.0.0.1:{port}"})
        deadline = None if args.seconds is None else loop.time() + args.seconds
        while True:
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                command = await asyncio.wait_for(commands.get(), timeout)
            except asyncio.TimeoutError:
                break
            if command is None:
                break
            central.command(command)
        for task in list(central.tasks):
            task.cancel()
        # Leaving the block closes every connection with 1001 (going away) and waits for the
        # handlers, so that each prints its `disconnected` line.


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--basic", metavar="USER:PASS")
    parser.add_argument("--interval", type=int, default=300)
    parser.add_argument("--transaction-id", type=int, default=4242)
    silence = parser.add_mutually_exclusive_group()
    silence.add_argument("--silent", action="store_true")
    silence.add_argument("--silent-after", type=int, metavar="N")
    parser.add_argument("--ocpp", choices=sorted(SUBPROTOCOL), default="1.6")
    parser.add_argument("--for", dest="seconds", type=float)
    args = parser.parse_args(argv[1:])
    if not 0 <= args.port <= 65535:
        parser.error("--port must be 0 to 65535")
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    if args.basic is not None and ":" not in args.basic:
        parser.error("--basic takes USER:PASS")
    if args.silent_after is not None and args.silent_after < 0:
        parser.error("--silent-after takes N >= 0")
    tls = None
    if args.tls_cert is not None:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            tls.load_cert_chain(args.tls_cert, args.tls_key)
        except (OSError, ssl.SSLError) as error:
            parser.error(f"--tls-cert/--tls-key: {error}")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    logging.getLogger("ocpp").addFilter(OutcomesUnlogged())
    asyncio.run(run(args, tls))
    if Unexpected.seen:
        print(f"FAIL {len(Unexpected.seen)} unexpected: {Unexpected.seen}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
