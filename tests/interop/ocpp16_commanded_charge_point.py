#!/usr/bin/env python3
"""A third-party OCPP 1.6J charge point that a central system commands, for the end-to-end tests
of cms's Chargers > Actions and Settings (tests/e2e/actions.rs, tests/e2e/kafka_actions.rs).

Usage: ocpp16_commanded_charge_point.py URL IDENTITY [--password P] [--config JSON] [--for S]

Built on the `ocpp` package's ChargePoint (pinned in requirements.txt beside this file), which
validates every CALL and CALLRESULT, both ways, against the official OCPP 1.6 JSON schemas. It
connects to URL (the whole ws:// URL, identity included) offering `ocpp1.6`, with
`Authorization: Basic IDENTITY:P` when --password is given; sends BootNotification and a
StatusNotification of connector 0; then answers every one of the 19 calls a central system
makes, until its stdin closes or --for seconds have passed.

Stdout, one JSON object a line (flushed at once), so that a test can assert what arrived:
  {"ready": URL, "connection": N, "at": T}         booted on connection N (1, 2, ... per connect)
  {"received": ACTION, "unique_id": ID, "payload": {...}, "connection": N,
   "unanswered": [IDS], "at": T}                    a CALL from the central system, in the order
                                                    they arrived; `unanswered` lists the calls of
                                                    this connection not yet answered when it came
                                                    (empty unless the sender broke "one call in
                                                    flight", or a `cms.test.silent` call is open)
  {"answered": ACTION, "unique_id": ID, "payload": {...} | "error": [CODE, DESCRIPTION],
   "connection": N, "at": T}                        what it answered (CALLRESULT or CALLERROR)
  {"sent": ACTION, "payload": {...}, "answer": {...}, "at": T}    a CALL of its own, answered
  {"disconnected": URL, "connection": N, "by": "us" | "server", "code": C, "at": T}
  {"unexpected": WHAT, "at": T}                     also on stderr; makes the exit status 1
T is UTC with microseconds, `2026-11-21T10:00:00.123456Z`.

Stdin, one command a line (the test's way to move the charger):
  disconnect       closes the websocket (close code 1000) and stays offline
  connect [URL]    connects again (to URL, else the last one) and boots again
  reconnect [URL]  both
  local-list-version N   sets its local list's version to N (the entries stay): a list
                   changed behind the central system's back
  authorize TAG                 sends Authorize
  start CONNECTOR TAG [WH [T]]  sends StartTransaction (meterStart WH or 1000, at T or now)
  stop TRANSACTION_ID [TAG|- [WH [T]]]
                                sends StopTransaction (meterStop WH or 2000, at T or now, with
                                idTag if given and not `-`)
  signed-stop TRANSACTION_ID WH T START END
                                sends StopTransaction (meterStop WH at T) whose
                                transactionData has the signed readings START (with register
                                0, context Transaction.Begin) and END (register WH,
                                Transaction.End), as an Eichrecht meter's (no spaces in them)
  meter CONNECTOR TRANSACTION_ID WH T
                                sends MeterValues: the energy register WH (Wh) sampled at T
  status CONNECTOR STATUS [T]   sends StatusNotification (NoError) at T or now
  Each is printed as a `sent` line with cms's answer.

The answers:
  CancelReservation Accepted; ChangeAvailability Accepted (Rejected for a connector above
  NumberOfConnectors); ClearCache Accepted; ClearChargingProfile Accepted; GetCompositeSchedule
  Accepted, the connector and duration asked, one period of 16.0 at 0 s in the unit asked (A
  by default); GetDiagnostics fileName `diagnostics.zip`; GetLocalListVersion the version of
  its local list (0 while the list is empty); RemoteStartTransaction Accepted;
  RemoteStopTransaction Accepted; ReserveNow Accepted; Reset Accepted (it does not reboot);
  SendLocalList as OCPP 1.6 says (below); SetChargingProfile Accepted; TriggerMessage Accepted, then it sends
  the message asked for (StatusNotification and MeterValues of the connector asked, else 0 and
  1); UnlockConnector Unlocked; UpdateFirmware {}.
  GetConfiguration: every key (no `key` asked), or the keys asked that it has, the others in
  `unknownKey`. ChangeConfiguration: NotSupported for a key it does not have, Rejected for a
  read-only one, RebootRequired for `WebSocketPingInterval` (it keeps the new value, for after
  the reboot), Accepted otherwise; the value is kept and GetConfiguration then reports it.
  An accepted AuthorizationKey is, hex-decoded, the Basic-auth password of its next
  connections (the OCPP 1.6 security whitepaper); a value that is not hex is Rejected.
  The configuration: HeartbeatInterval=300, MeterValueSampleInterval=60, WebSocketPingInterval=60,
  AuthorizeRemoteTxRequests=true, NumberOfConnectors=2 (read-only) and SupportedFeatureProfiles
  (read-only); --config JSON adds or overrides keys: {"Key": "value"} (writable),
  {"Key": null} (writable, no value), {"Key": {"value": "v" | null, "readonly": true}}.
  SendLocalList keeps a local list (it outlives connections): Failed when the call carries more
  entries than SendLocalListMaxLength or would leave more than LocalAuthListMaxLength (when the
  configuration has them); for a Differential update VersionMismatch unless its listVersion is
  above the list's; else Accepted: a Full update replaces the list, a Differential one adds or
  replaces the entries with idTagInfo and removes those without (idTags compared
  case-insensitively), and the list is printed:
    {"local_list": VERSION, "update": "Full" | "Differential", "entries": [{"idTag", "status",
     "expiryDate"?, "parentIdTag"?}, ...] by idTag uppercased, "at": T}
  DataTransfer, by vendorId:
    cms.test.error    a CALLERROR: the code named by messageId (NotSupported when absent; any
                      code of the package's exceptions: NotImplemented, InternalError,
                      GenericError, ...), the description `data` (when absent:
                      "cms.test.error refuses this DataTransfer")
    cms.test.silent   never answers
    cms.test.malformed  answers with a CALLRESULT that has no payload, [3, "<its id>"], and no
                      other answer
    cms.test.invalid  an answer breaking the DataTransferResponse schema, chosen by messageId:
                      absent or "type": {"status": "Accepted", "data": 42} (`data` not a string);
                      "enum": {"status": "Perhaps"}; "missing": {"data": "no status"};
                      "extra": {"status": "Accepted", "extra": true}
    cms.test.slow     answers as below after `data` milliseconds
    anything else     {"status": "Accepted", "data": <the data sent>} (no data when none came)

Exit status: 0 unless something unexpected happened: it could not connect or boot, a CALL from
the central system broke its schema, a handler failed, the central system answered one of its
own calls with a CALLERROR or an invalid answer. 2 for bad arguments.
"""

import argparse
import asyncio
import base64
import json
import logging
import sys
import threading
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

import websockets
from ocpp.charge_point import remove_nones, snake_to_camel_case
from ocpp.exceptions import OCPPError
from ocpp.messages import Call, CallResult, validate_payload
from ocpp.routing import after, on
from ocpp.v16 import ChargePoint, call, call_result
from ocpp.v16.datatypes import MeterValue, SampledValue
from ocpp.v16.enums import (
    Action,
    AvailabilityStatus,
    CancelReservationStatus,
    ChargePointErrorCode,
    ChargePointStatus,
    ChargingProfileStatus,
    ClearCacheStatus,
    ClearChargingProfileStatus,
    ConfigurationStatus,
    DataTransferStatus,
    DiagnosticsStatus,
    FirmwareStatus,
    GetCompositeScheduleStatus,
    Measurand,
    ReadingContext,
    RegistrationStatus,
    RemoteStartStopStatus,
    ReservationStatus,
    ResetStatus,
    TriggerMessageStatus,
    UnitOfMeasure,
    UnlockStatus,
    UpdateStatus,
    ValueFormat,
)
import ocpp.exceptions

OPEN_TIMEOUT_S = 5
CLOSE_TIMEOUT_S = 2
RESPONSE_TIMEOUT_S = 10
REBOOT_REQUIRED_KEY = "WebSocketPingInterval"

DEFAULT_CONFIGURATION = {
    "HeartbeatInterval": {"value": "300", "readonly": False},
    "MeterValueSampleInterval": {"value": "60", "readonly": False},
    REBOOT_REQUIRED_KEY: {"value": "60", "readonly": False},
    "AuthorizeRemoteTxRequests": {"value": "true", "readonly": False},
    "NumberOfConnectors": {"value": "2", "readonly": True},
    "SupportedFeatureProfiles": {
        "value": "Core,FirmwareManagement,LocalAuthListManagement,Reservation,SmartCharging,"
        "RemoteTrigger",
        "readonly": True,
    },
}


def now():
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def emit(line):
    line["at"] = now()
    print(json.dumps(line, separators=(",", ":")), flush=True)


def ocpp_form(dataclass):
    """A request or answer of the package as it goes on the wire: camelCase, no nulls."""
    return snake_to_camel_case(remove_nones(asdict(dataclass)))


class MeantErrorsUnlogged(logging.Filter):
    """The package logs every exception a handler raises; the CALLERRORs meant are no news."""

    def filter(self, record):
        error = record.exc_info[1] if record.exc_info else None
        return not getattr(error, "meant", False)


class Unexpected:
    """What went wrong that should not have: each is printed, and any makes the exit status 1."""

    seen = []

    @classmethod
    def record(cls, what):
        cls.seen.append(what)
        emit({"unexpected": what})
        print(f"UNEXPECTED {what}", file=sys.stderr, flush=True)


@dataclass
class InvalidDataTransferAnswer:
    """A DataTransfer.conf as no schema allows it (fields left None are not sent)."""

    status: Any = None
    data: Any = None
    extra: Any = None


INVALID_ANSWERS = {
    "type": InvalidDataTransferAnswer(status="Accepted", data=42),
    "enum": InvalidDataTransferAnswer(status="Perhaps"),
    "missing": InvalidDataTransferAnswer(data="no status"),
    "extra": InvalidDataTransferAnswer(status="Accepted", extra=True),
}


def call_error_class(code):
    """The package's exception whose OCPP error code is `code`."""
    for value in vars(ocpp.exceptions).values():
        if isinstance(value, type) and issubclass(value, OCPPError) and value is not OCPPError:
            if getattr(value, "code", None) == code:
                return value
    raise ValueError(f"no OCPP error code {code!r} in the ocpp package")


class Charger:
    """What outlives a connection: the configuration and the local list version."""

    def __init__(self, identity, configuration):
        self.identity = identity
        self.configuration = configuration
        self.local_list_version = 0
        # Its local list, by idTag uppercased: {"idTag", "status", "expiryDate"?, "parentIdTag"?}.
        self.local_list = {}
        self.connections = 0
        # Its Basic-auth password (--password, then an accepted AuthorizationKey); None: none.
        self.password = None

    def limit(self, key):
        """A positive integer of the configuration, or None."""
        try:
            value = int(self.configuration[key]["value"])
        except (KeyError, TypeError, ValueError):
            return None
        return value if value > 0 else None


class Connection:
    """The websocket as the ChargePoint sees it. Marks a call answered the moment its answer is
    handed to the socket, before the central system can possibly send the next one."""

    def __init__(self, ws, number):
        self._ws = ws
        self.number = number
        self.unanswered = {}
        # The calls meant to be answered with a CALLERROR (DataTransfer cms.test.error): any
        # other CALLERROR of ours means a call broke its schema or a handler failed.
        self.errors_meant = set()

    async def send(self, message):
        frame = json.loads(message)
        if frame[0] in (3, 4):
            action = self.unanswered.pop(frame[1], "?")
            line = {"answered": action, "unique_id": frame[1], "connection": self.number}
            if frame[0] == 3 and len(frame) < 3:
                line["malformed"] = True
            elif frame[0] == 3:
                line["payload"] = frame[2]
            else:
                line["error"] = [frame[2], frame[3]]
                if frame[1] not in self.errors_meant:
                    Unexpected.record(f"we answered {action} {frame[1]} with {frame[2:]}")
            emit(line)
        await self._ws.send(message)

    async def recv(self):
        return await self._ws.recv()


class CommandedChargePoint(ChargePoint):
    def __init__(self, charger, connection):
        super().__init__(charger.identity, connection, response_timeout=RESPONSE_TIMEOUT_S)
        self.charger = charger
        self.handlers = set()

    async def serve(self):
        """Reads frames until the connection closes. Each CALL is handled in a task of its own,
        so that a silent or slow one does not stop the next from being read (and seen)."""
        connection = self._connection
        while True:
            raw = await connection.recv()
            try:
                frame = json.loads(raw)
            except ValueError:
                Unexpected.record(f"a frame that is not JSON: {raw!r}")
                continue
            if isinstance(frame, list) and len(frame) == 4 and frame[0] == 2:
                emit(
                    {
                        "received": frame[2],
                        "unique_id": frame[1],
                        "payload": frame[3],
                        "connection": connection.number,
                        "unanswered": list(connection.unanswered),
                    }
                )
                connection.unanswered[frame[1]] = frame[2]
                payload = frame[3] if isinstance(frame[3], dict) else {}
                if frame[2] == "DataTransfer" and payload.get("vendorId") == "cms.test.error":
                    connection.errors_meant.add(frame[1])
                task = asyncio.create_task(self.route_message(raw))
                self.handlers.add(task)
                task.add_done_callback(self.handlers.discard)
            else:
                await self.route_message(raw)

    async def send_call(self, request):
        """One CALL of its own, checked: a CALLERROR or an invalid answer is unexpected."""
        action = type(request).__name__
        try:
            answer = await self.call(request, suppress=False)
        except OCPPError as error:
            Unexpected.record(f"our {action} was answered with {type(error).__name__}: {error}")
            return None
        except asyncio.TimeoutError:
            Unexpected.record(f"our {action} got no answer within {RESPONSE_TIMEOUT_S}s")
            return None
        emit({"sent": action, "payload": ocpp_form(request), "answer": ocpp_form(answer)})
        return answer

    async def boot(self):
        answer = await self.send_call(
            call.BootNotification(
                charge_point_vendor="InteropVendor",
                charge_point_model="CommandedModel",
                charge_point_serial_number=f"SN-{self.charger.identity}"[:25],
                firmware_version="1.6.0-commanded",
            )
        )
        if answer is None or answer.status != RegistrationStatus.accepted:
            Unexpected.record(f"BootNotification not accepted: {answer!r}")
            return False
        await self.status_notification(0)
        return True

    async def status_notification(self, connector):
        await self.send_call(
            call.StatusNotification(
                connector_id=connector,
                error_code=ChargePointErrorCode.no_error,
                status=ChargePointStatus.available,
            )
        )

    def connectors(self):
        try:
            return int(self.charger.configuration["NumberOfConnectors"]["value"])
        except (KeyError, TypeError, ValueError):
            return 1

    @on(Action.cancel_reservation)
    def on_cancel_reservation(self, **_):
        return call_result.CancelReservation(status=CancelReservationStatus.accepted)

    @on(Action.change_availability)
    def on_change_availability(self, connector_id, **_):
        if connector_id > self.connectors():
            return call_result.ChangeAvailability(status=AvailabilityStatus.rejected)
        return call_result.ChangeAvailability(status=AvailabilityStatus.accepted)

    @on(Action.change_configuration)
    def on_change_configuration(self, key, value, **_):
        entry = self.charger.configuration.get(key)
        if entry is None:
            return call_result.ChangeConfiguration(status=ConfigurationStatus.not_supported)
        if entry["readonly"]:
            return call_result.ChangeConfiguration(status=ConfigurationStatus.rejected)
        entry["value"] = value
        if key == "AuthorizationKey":
            # The security whitepaper's rule: the value is the new Basic-auth password,
            # hex-encoded; the charge point uses it from its next connection on.
            try:
                self.charger.password = bytes.fromhex(value).decode()
            except ValueError:
                return call_result.ChangeConfiguration(status=ConfigurationStatus.rejected)
        if key == REBOOT_REQUIRED_KEY:
            return call_result.ChangeConfiguration(status=ConfigurationStatus.reboot_required)
        return call_result.ChangeConfiguration(status=ConfigurationStatus.accepted)

    @on(Action.clear_cache)
    def on_clear_cache(self, **_):
        return call_result.ClearCache(status=ClearCacheStatus.accepted)

    @on(Action.clear_charging_profile)
    def on_clear_charging_profile(self, **_):
        return call_result.ClearChargingProfile(status=ClearChargingProfileStatus.accepted)

    @on(Action.data_transfer, skip_schema_validation=True)
    async def on_data_transfer(self, vendor_id, call_unique_id, message_id=None, data=None, **_):
        # Schema validation is off for this route so that cms.test.invalid can break it: the
        # request, and every other answer, are checked here instead.
        request = {"vendorId": vendor_id}
        if message_id is not None:
            request["messageId"] = message_id
        if data is not None:
            request["data"] = data
        await validate_payload(Call(call_unique_id, "DataTransfer", request), "1.6")
        if vendor_id == "cms.test.error":
            code = message_id or "NotSupported"
            error = call_error_class(code)(data or "cms.test.error refuses this DataTransfer")
            error.meant = True
            raise error
        if vendor_id == "cms.test.silent":
            await asyncio.Event().wait()
        if vendor_id == "cms.test.malformed":
            await self._connection.send(json.dumps([3, call_unique_id]))
            await asyncio.Event().wait()
        if vendor_id == "cms.test.invalid":
            return INVALID_ANSWERS[message_id or "type"]
        if vendor_id == "cms.test.slow":
            await asyncio.sleep(int(data or "0") / 1000)
        answer = {"status": "Accepted"}
        if data is not None:
            answer["data"] = data
        await validate_payload(CallResult(call_unique_id, answer, "DataTransfer"), "1.6")
        return call_result.DataTransfer(status=DataTransferStatus.accepted, data=data)

    @on(Action.get_composite_schedule)
    def on_get_composite_schedule(self, connector_id, duration, charging_rate_unit=None, **_):
        return call_result.GetCompositeSchedule(
            status=GetCompositeScheduleStatus.accepted,
            connector_id=connector_id,
            schedule_start=now(),
            charging_schedule={
                "duration": duration,
                "chargingRateUnit": charging_rate_unit or "A",
                "chargingSchedulePeriod": [{"startPeriod": 0, "limit": 16.0}],
            },
        )

    @on(Action.get_configuration)
    def on_get_configuration(self, key=None, **_):
        configuration = self.charger.configuration
        asked = key or list(configuration)
        known = []
        unknown = []
        for name in asked:
            entry = configuration.get(name)
            if entry is None:
                unknown.append(name)
                continue
            reported = {"key": name, "readonly": entry["readonly"]}
            if entry["value"] is not None:
                reported["value"] = entry["value"]
            known.append(reported)
        return call_result.GetConfiguration(
            configuration_key=known or None, unknown_key=unknown or None
        )

    @on(Action.get_diagnostics)
    def on_get_diagnostics(self, **_):
        return call_result.GetDiagnostics(file_name="diagnostics.zip")

    @on(Action.get_local_list_version)
    def on_get_local_list_version(self, **_):
        version = self.charger.local_list_version if self.charger.local_list else 0
        return call_result.GetLocalListVersion(list_version=version)

    @on(Action.remote_start_transaction)
    def on_remote_start_transaction(self, **_):
        return call_result.RemoteStartTransaction(status=RemoteStartStopStatus.accepted)

    @on(Action.remote_stop_transaction)
    def on_remote_stop_transaction(self, **_):
        return call_result.RemoteStopTransaction(status=RemoteStartStopStatus.accepted)

    @on(Action.reserve_now)
    def on_reserve_now(self, **_):
        return call_result.ReserveNow(status=ReservationStatus.accepted)

    @on(Action.reset)
    def on_reset(self, **_):
        return call_result.Reset(status=ResetStatus.accepted)

    @on(Action.send_local_list)
    def on_send_local_list(self, list_version, update_type, local_authorization_list=None, **_):
        charger = self.charger
        entries = local_authorization_list or []
        max_send = charger.limit("SendLocalListMaxLength")
        if max_send is not None and len(entries) > max_send:
            return call_result.SendLocalList(status=UpdateStatus.failed)
        if update_type == "Full":
            held = {}
        elif list_version <= charger.local_list_version:
            return call_result.SendLocalList(status=UpdateStatus.version_mismatch)
        else:
            held = dict(charger.local_list)
        for entry in entries:
            key = entry["id_tag"].upper()
            info = entry.get("id_tag_info")
            if info is None:
                held.pop(key, None)
                continue
            kept = {"idTag": entry["id_tag"], "status": info["status"]}
            if info.get("expiry_date") is not None:
                kept["expiryDate"] = info["expiry_date"]
            if info.get("parent_id_tag") is not None:
                kept["parentIdTag"] = info["parent_id_tag"]
            held[key] = kept
        max_entries = charger.limit("LocalAuthListMaxLength")
        if max_entries is not None and len(held) > max_entries:
            return call_result.SendLocalList(status=UpdateStatus.failed)
        charger.local_list = held
        charger.local_list_version = list_version
        listed = [held[key] for key in sorted(held)]
        emit({"local_list": list_version, "update": update_type, "entries": listed})
        return call_result.SendLocalList(status=UpdateStatus.accepted)

    @on(Action.set_charging_profile)
    def on_set_charging_profile(self, **_):
        return call_result.SetChargingProfile(status=ChargingProfileStatus.accepted)

    @on(Action.trigger_message)
    def on_trigger_message(self, **_):
        return call_result.TriggerMessage(status=TriggerMessageStatus.accepted)

    @after(Action.trigger_message)
    async def after_trigger_message(self, requested_message, connector_id=None, **_):
        try:
            await self.send_triggered(requested_message, connector_id)
        except Exception as error:  # the package would drop it unseen
            Unexpected.record(f"sending the triggered {requested_message}: {error!r}")

    async def send_triggered(self, requested_message, connector_id):
        if requested_message == "BootNotification":
            await self.boot()
        elif requested_message == "DiagnosticsStatusNotification":
            await self.send_call(call.DiagnosticsStatusNotification(status=DiagnosticsStatus.idle))
        elif requested_message == "FirmwareStatusNotification":
            await self.send_call(call.FirmwareStatusNotification(status=FirmwareStatus.idle))
        elif requested_message == "Heartbeat":
            await self.send_call(call.Heartbeat())
        elif requested_message == "MeterValues":
            reading = SampledValue(
                value="1234",
                measurand=Measurand.energy_active_import_register,
                unit=UnitOfMeasure.wh,
            )
            await self.send_call(
                call.MeterValues(
                    connector_id=connector_id or 1,
                    meter_value=[MeterValue(timestamp=now(), sampled_value=[reading])],
                )
            )
        elif requested_message == "StatusNotification":
            await self.status_notification(connector_id or 0)

    @on(Action.unlock_connector)
    def on_unlock_connector(self, **_):
        return call_result.UnlockConnector(status=UnlockStatus.unlocked)

    @on(Action.update_firmware)
    def on_update_firmware(self, **_):
        return call_result.UpdateFirmware()


class Session:
    """One websocket at a time to the central system, and its reader."""

    def __init__(self, charger, password):
        self.charger = charger
        charger.password = password
        self.url = None
        self.ws = None
        self.reader = None
        self.charge_point = None

    async def connect(self, url):
        self.url = url
        headers = {}
        if self.charger.password is not None:
            basic = f"{self.charger.identity}:{self.charger.password}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(basic).decode()
        try:
            ws = await websockets.connect(
                url,
                subprotocols=["ocpp1.6"],
                additional_headers=headers,
                open_timeout=OPEN_TIMEOUT_S,
                close_timeout=CLOSE_TIMEOUT_S,
                proxy=None,
            )
        except (OSError, asyncio.TimeoutError, websockets.WebSocketException) as error:
            Unexpected.record(f"could not connect to {url}: {type(error).__name__}: {error}")
            return False
        if ws.subprotocol != "ocpp1.6":
            Unexpected.record(f"the server chose subprotocol {ws.subprotocol!r}")
        self.charger.connections += 1
        connection = Connection(ws, self.charger.connections)
        charge_point = CommandedChargePoint(self.charger, connection)
        self.ws = ws
        self.charge_point = charge_point
        self.reader = asyncio.create_task(self.read(ws, url, connection, charge_point))
        if await charge_point.boot():
            emit({"ready": url, "connection": connection.number})
            return True
        return False

    async def read(self, ws, url, connection, charge_point):
        """Serves one connection until it closes; says so when the server closed it."""
        try:
            await charge_point.serve()
        except websockets.ConnectionClosed as closed:
            if self.ws is ws:
                self.ws = None
                code = closed.rcvd.code if closed.rcvd else None
                emit(
                    {
                        "disconnected": url,
                        "connection": connection.number,
                        "by": "server",
                        "code": code,
                    }
                )
        except Exception as error:  # a bug here must not pass silently
            Unexpected.record(f"the reader failed: {type(error).__name__}: {error!r}")
        finally:
            for task in list(charge_point.handlers):
                task.cancel()

    async def disconnect(self):
        ws = self.ws
        if ws is None:
            return
        self.ws = None
        await ws.close(1000)
        await self.reader
        emit(
            {
                "disconnected": self.url,
                "connection": self.charger.connections,
                "by": "us",
                "code": 1000,
            }
        )


def read_stdin(loop, commands):
    """Stdin lines into the loop's queue, then None at its end (a daemon thread, which never
    holds up the exit)."""
    for line in sys.stdin:
        loop.call_soon_threadsafe(commands.put_nowait, line.strip())
    loop.call_soon_threadsafe(commands.put_nowait, None)


async def run(args, charger):
    loop = asyncio.get_running_loop()
    commands = asyncio.Queue()
    threading.Thread(target=read_stdin, args=(loop, commands), daemon=True).start()
    session = Session(charger, args.password)
    if not await session.connect(args.url):
        return
    deadline = None if args.seconds is None else loop.time() + args.seconds
    while True:
        timeout = None if deadline is None else max(0.0, deadline - loop.time())
        try:
            command = await asyncio.wait_for(commands.get(), timeout)
        except asyncio.TimeoutError:
            break
        if command is None:
            break
        verb, _, rest = command.partition(" ")
        if verb == "local-list-version":
            charger.local_list_version = int(rest)
            continue
        url = rest.strip() or session.url
        if verb in ("disconnect", "reconnect"):
            await session.disconnect()
        if verb in ("connect", "reconnect"):
            await session.connect(url)
        elif verb in CHARGER_CALLS and session.ws is not None:
            try:
                request = CHARGER_CALLS[verb](*rest.split())
            except (TypeError, ValueError) as error:
                Unexpected.record(f"bad arguments for {verb}: {rest!r}: {error}")
                continue
            await session.charge_point.send_call(request)
        elif verb not in ("disconnect", ""):
            Unexpected.record(f"unknown command on stdin: {command!r}")
    await session.disconnect()


def signed_reading(at, wh, signed, context):
    """A meter value with the energy register WH and the meter's signed reading of it."""
    register = SampledValue(
        value=str(int(wh)),
        context=context,
        measurand=Measurand.energy_active_import_register,
        unit=UnitOfMeasure.wh,
    )
    proof = SampledValue(
        value=signed,
        context=context,
        format=ValueFormat.signed_data,
        measurand=Measurand.energy_active_import_register,
    )
    return MeterValue(timestamp=at, sampled_value=[register, proof])


# The calls a test may make the charger send: stdin verb -> request from the verb's arguments.
CHARGER_CALLS = {
    "authorize": lambda tag: call.Authorize(id_tag=tag),
    "start": lambda connector, tag, wh=1000, at=None: call.StartTransaction(
        connector_id=int(connector), id_tag=tag, meter_start=int(wh), timestamp=at or now()
    ),
    "stop": lambda transaction_id, tag=None, wh=2000, at=None: call.StopTransaction(
        transaction_id=int(transaction_id),
        meter_stop=int(wh),
        timestamp=at or now(),
        id_tag=None if tag == "-" else tag,
    ),
    "signed-stop": lambda transaction_id, wh, at, start, end: call.StopTransaction(
        transaction_id=int(transaction_id),
        meter_stop=int(wh),
        timestamp=at,
        transaction_data=[
            signed_reading(at, 0, start, ReadingContext.transaction_begin),
            signed_reading(at, wh, end, ReadingContext.transaction_end),
        ],
    ),
    "meter": lambda connector, transaction_id, wh, at: call.MeterValues(
        connector_id=int(connector),
        transaction_id=int(transaction_id),
        meter_value=[
            MeterValue(
                timestamp=at,
                sampled_value=[
                    SampledValue(
                        value=str(int(wh)),
                        measurand=Measurand.energy_active_import_register,
                        unit=UnitOfMeasure.wh,
                    )
                ],
            )
        ],
    ),
    "status": lambda connector, status, at=None: call.StatusNotification(
        connector_id=int(connector), error_code="NoError", status=status, timestamp=at or now()
    ),
}


def configuration_from(text):
    configuration = {k: dict(v) for k, v in DEFAULT_CONFIGURATION.items()}
    if text is None:
        return configuration
    given = json.loads(text)
    if not isinstance(given, dict):
        raise ValueError("--config must be a JSON object")
    for key, entry in given.items():
        if entry is None or isinstance(entry, str):
            configuration[key] = {"value": entry, "readonly": False}
        elif isinstance(entry, dict):
            configuration[key] = {
                "value": entry.get("value"),
                "readonly": bool(entry.get("readonly", False)),
            }
        else:
            raise ValueError(f"--config {key}: a string, null or an object, not {entry!r}")
    return configuration


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("identity")
    parser.add_argument("--password")
    parser.add_argument("--config")
    parser.add_argument("--for", dest="seconds", type=float)
    args = parser.parse_args(argv[1:])
    try:
        configuration = configuration_from(args.config)
    except ValueError as error:
        print(f"bad --config: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    logging.getLogger("ocpp").addFilter(MeantErrorsUnlogged())
    asyncio.run(run(args, Charger(args.identity, configuration)))
    if Unexpected.seen:
        print(f"FAIL {len(Unexpected.seen)} unexpected: {Unexpected.seen}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
