#!/usr/bin/env python3
"""A third-party OCPP 1.6J charge point, for the interoperability test of cms.

Usage: ocpp16_charge_point.py URL IDENTITY

Built on the `ocpp` package (pinned in requirements.txt beside this file), which validates every
CALL it sends and every CALLRESULT it receives against the official OCPP 1.6 JSON schemas. The
charge point connects to URL offering the `ocpp1.6` subprotocol, walks through the actions a
charger initiates, checks what each answer says, prints one line per exchange and the
transactionId it was given, and exits 0 only if every exchange passed. It is bounded in time.

tests/e2e/interop.rs runs it and then reads what cms made of it through the REST API, so the
values sent here (firmware, meter readings and their timestamps) are the ones that test expects.
"""

import asyncio
import json
import sys
from datetime import datetime

import websockets
from ocpp.exceptions import OCPPError
from ocpp.v16 import ChargePoint, call
from ocpp.v16.datatypes import MeterValue, SampledValue
from ocpp.v16.enums import (
    AuthorizationStatus,
    ChargePointErrorCode,
    ChargePointStatus,
    DataTransferStatus,
    DiagnosticsStatus,
    FirmwareStatus,
    Location,
    Measurand,
    Phase,
    ReadingContext,
    Reason,
    RegistrationStatus,
    UnitOfMeasure,
)

OVERALL_TIMEOUT_S = 20
RESPONSE_TIMEOUT_S = 5
OPEN_TIMEOUT_S = 5
CLOSE_TIMEOUT_S = 3

ID_TAG = "04A2B3C4D5E680"
FIRMWARE = "9.9.9"

# The two readings of connector 1. The second is sampled later, so it is the one cms must report
# as the connector's latest meter value (tests/e2e/interop.rs expects it, normalised to UTC).
FIRST_READING_AT = "2026-06-01T12:00:00+02:00"
LAST_READING_AT = "2026-06-01T12:05:00+02:00"
TRANSACTION_START_AT = "2026-06-01T10:01:00Z"
TRANSACTION_STOP_AT = "2026-06-01T10:06:00Z"


class Failed(Exception):
    """An exchange whose answer was not what OCPP 1.6 and cms promise."""


class RecordingConnection:
    """The websocket, remembering the last frame each way for failure messages."""

    def __init__(self, ws):
        self._ws = ws
        self.last_sent = None
        self.last_received = None

    async def send(self, message):
        self.last_sent = message
        await self._ws.send(message)

    async def recv(self):
        message = await self._ws.recv()
        self.last_received = message
        return message


def reading(timestamp, energy_wh, currents_a, voltage_v):
    """One MeterValue: energy register, current per phase (A, Outlet), and a voltage."""
    sampled = [
        SampledValue(
            value=energy_wh,
            context=ReadingContext.sample_periodic,
            measurand=Measurand.energy_active_import_register,
            unit=UnitOfMeasure.wh,
        )
    ]
    for phase, amps in zip((Phase.l1, Phase.l2, Phase.l3), currents_a):
        sampled.append(
            SampledValue(
                value=amps,
                measurand=Measurand.current_import,
                phase=phase,
                location=Location.outlet,
                unit=UnitOfMeasure.a,
            )
        )
    sampled.append(
        SampledValue(
            value=voltage_v,
            measurand=Measurand.voltage,
            phase=Phase.l1_n,
            unit=UnitOfMeasure.v,
        )
    )
    return MeterValue(timestamp=timestamp, sampled_value=sampled)


def field(obj, name):
    """A field of a nested part of an answer (the library leaves those as dicts)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def expect(condition, what):
    if not condition:
        raise Failed(what)


def expect_ocpp_time(value, what):
    expect(isinstance(value, str), f"{what} should be a string, got {value!r}")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise Failed(f"{what} is not an ISO 8601 date-time: {value!r}") from None
    expect(parsed.tzinfo is not None, f"{what} has no time zone: {value!r}")


def acknowledged(summary):
    """The check of a notification's answer: an empty object."""

    def check(answer):
        expect(vars(answer) == {}, f"should be answered with {{}}, got {vars(answer)}")
        return summary

    return check


class InteropChargePoint(ChargePoint):
    async def exchange(self, request, check):
        """Sends `request` with the library's call(), schema validation of the request and of
        the answer on, and CALLERRORs raised; then runs `check` on the answer."""
        action = type(request).__name__
        try:
            answer = await self.call(request, suppress=False, skip_schema_validation=False)
        except OCPPError as error:
            raise Failed(
                f"{action}: {self.diagnose()}: {type(error).__name__}: {error}\n"
                f"  sent:     {self._connection.last_sent}\n"
                f"  received: {self._connection.last_received}"
            ) from None
        except asyncio.TimeoutError:
            raise Failed(
                f"{action}: no answer within {RESPONSE_TIMEOUT_S}s\n"
                f"  sent: {self._connection.last_sent}"
            ) from None
        try:
            summary = check(answer)
        except Failed as failure:
            raise Failed(
                f"{action}: {failure}\n"
                f"  sent:     {self._connection.last_sent}\n"
                f"  received: {self._connection.last_received}"
            ) from None
        print(f"ok {action}: {summary}", flush=True)
        return answer

    def diagnose(self):
        """Says which side an OCPPError from call() comes from, by the frames last seen."""
        try:
            sent = json.loads(self._connection.last_sent or "[]")
            received = json.loads(self._connection.last_received or "[]")
        except ValueError:
            return "cms sent a frame that is not JSON"
        if len(sent) < 2 or len(received) < 2 or received[1] != sent[1]:
            return "our request failed the OCPP 1.6 schema and was not sent"
        if received[0] == 4:
            return "cms answered with a CALLERROR"
        return "cms's answer fails the OCPP 1.6 schema"

    async def run(self):
        def boot(answer):
            expect(answer.status == RegistrationStatus.accepted, f"status {answer.status!r}")
            expect(
                type(answer.interval) is int and answer.interval > 0,
                f"interval should be a positive int, got {answer.interval!r}",
            )
            expect_ocpp_time(answer.current_time, "currentTime")
            return f"status={answer.status} interval={answer.interval}"

        await self.exchange(
            call.BootNotification(
                charge_point_vendor="InteropVendor",
                charge_point_model="InteropModel",
                firmware_version=FIRMWARE,
            ),
            boot,
        )

        def heartbeat(answer):
            expect_ocpp_time(answer.current_time, "currentTime")
            return f"currentTime={answer.current_time}"

        await self.exchange(call.Heartbeat(), heartbeat)

        def authorized(answer):
            status = field(answer.id_tag_info, "status")
            expect(status == AuthorizationStatus.accepted, f"idTagInfo {answer.id_tag_info!r}")
            return f"idTagInfo.status={status}"

        await self.exchange(call.Authorize(id_tag=ID_TAG), authorized)

        for connector in (1, 0):
            await self.exchange(
                call.StatusNotification(
                    connector_id=connector,
                    error_code=ChargePointErrorCode.no_error,
                    status=ChargePointStatus.available,
                ),
                acknowledged(f"connector {connector}"),
            )

        first = reading(FIRST_READING_AT, "1000", ("15.9", "16.1", "15.7"), "231.4")
        await self.exchange(
            call.MeterValues(connector_id=1, meter_value=[first]),
            acknowledged("connector 1, no transaction"),
        )

        def started(answer):
            tid = answer.transaction_id
            expect(type(tid) is int and tid > 0, f"transactionId should be an int > 0: {tid!r}")
            status = field(answer.id_tag_info, "status")
            expect(status == AuthorizationStatus.accepted, f"idTagInfo {answer.id_tag_info!r}")
            return f"transactionId={tid} idTagInfo.status={status}"

        answer = await self.exchange(
            call.StartTransaction(
                connector_id=1, id_tag=ID_TAG, meter_start=1000, timestamp=TRANSACTION_START_AT
            ),
            started,
        )
        transaction_id = answer.transaction_id
        print(f"transactionId={transaction_id}", flush=True)

        last = reading(LAST_READING_AT, "1500", ("31.9", "32.0", "31.8"), "229.8")
        await self.exchange(
            call.MeterValues(connector_id=1, meter_value=[last], transaction_id=transaction_id),
            acknowledged(f"connector 1, transaction {transaction_id}"),
        )

        def stopped(answer):
            status = field(answer.id_tag_info, "status")
            expect(status == AuthorizationStatus.accepted, f"idTagInfo {answer.id_tag_info!r}")
            return f"idTagInfo.status={status}"

        await self.exchange(
            call.StopTransaction(
                meter_stop=1500,
                timestamp=TRANSACTION_STOP_AT,
                transaction_id=transaction_id,
                id_tag=ID_TAG,
                reason=Reason.local,
            ),
            stopped,
        )

        def data_transfer(answer):
            expect(
                answer.status == DataTransferStatus.unknown_vendor_id,
                f"status {answer.status!r}, expected UnknownVendorId",
            )
            return f"status={answer.status}"

        await self.exchange(
            call.DataTransfer(vendor_id="com.interop.vendor", message_id="Ping", data="hello"),
            data_transfer,
        )
        await self.exchange(
            call.DiagnosticsStatusNotification(status=DiagnosticsStatus.idle),
            acknowledged("status Idle"),
        )
        await self.exchange(
            call.FirmwareStatusNotification(status=FirmwareStatus.installed),
            acknowledged("status Installed"),
        )


async def session(url, identity):
    async with websockets.connect(
        url,
        subprotocols=["ocpp1.6"],
        open_timeout=OPEN_TIMEOUT_S,
        close_timeout=CLOSE_TIMEOUT_S,
    ) as ws:
        if ws.subprotocol != "ocpp1.6":
            raise Failed(f"the server chose subprotocol {ws.subprotocol!r}, not 'ocpp1.6'")
        print(f"ok connected to {url} with subprotocol {ws.subprotocol}", flush=True)
        charge_point = InteropChargePoint(
            identity, RecordingConnection(ws), response_timeout=RESPONSE_TIMEOUT_S
        )
        reader = asyncio.create_task(charge_point.start())
        try:
            await charge_point.run()
        finally:
            reader.cancel()
            try:
                await reader
            except (asyncio.CancelledError, websockets.ConnectionClosed):
                pass
    # Leaving the block closed the websocket (code 1000) and waited for the server's close.
    print("ok closed the websocket", flush=True)


def main(argv):
    if len(argv) != 3:
        print(f"usage: {argv[0]} URL IDENTITY", file=sys.stderr)
        return 2
    url, identity = argv[1], argv[2]
    try:
        asyncio.run(asyncio.wait_for(session(url, identity), OVERALL_TIMEOUT_S))
    except Failed as failure:
        print(f"FAIL {failure}", file=sys.stderr)
        return 1
    except asyncio.TimeoutError:
        print(f"FAIL the whole exchange took longer than {OVERALL_TIMEOUT_S}s", file=sys.stderr)
        return 1
    except (OSError, websockets.WebSocketException) as error:
        print(f"FAIL websocket to {url}: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print("PASS all exchanges", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
