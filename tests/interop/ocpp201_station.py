#!/usr/bin/env python3
"""A third-party OCPP 2.0.1 charging station, for cms's end-to-end tests (tests/e2e/ocpp201.rs).

Usage: ocpp201_station.py URL IDENTITY SCENARIO [--password P] [--id-token T]
                          [--unknown-token T] [--for S]

Built on the `ocpp` package's v201 ChargePoint (pinned in requirements.txt beside this file),
which validates every CALL and CALLRESULT, both ways, against the official OCPP 2.0.1 JSON
schemas. It connects to URL (the whole ws:// URL, identity included) offering `ocpp2.0.1`, with
`Authorization: Basic IDENTITY:P` when --password is given, and answers every Core call cms
makes at any time (ocpp201_answers.py says how). Stdout is one JSON object a line
(ocpp201_base.py lists them). SCENARIO:
  boot       BootNotification (PowerUp), and nothing else.
  core       BootNotification; StatusNotification EVSE 1 connector 1 Available; Heartbeat;
             Authorize of --id-token and of --unknown-token (ISO14443); a transaction on EVSE 1
             (TransactionEvent Started with the id token, Updated x3, Ended with stoppedReason
             Local; the energy register 1000, 1250, 1500, 1750, 2000 Wh); MeterValues of EVSE 1
             (2000 Wh, 7.4 kW); NotifyReport; NotifyEvent; SecurityEventNotification;
             FirmwareStatusNotification and LogStatusNotification (Idle); DataTransfer.
  offline    boots, then goes offline while a transaction runs (1000 to 2500 Wh); reconnects,
             boots, and sends the queued TransactionEvents with `offline: true` in the seqNo
             order 2, 0, 3, 1.
  commanded  boots, reports EVSE 1 connector 1 Available, then stays connected answering
             cms's calls until its stdin closes or --for seconds passed.
  lists      keeps a local authorisation list (ocpp201_lists.py says how).
  security   a security event, a CSR signed and renewed, then a profile-3 connection with the
             certificate (ocpp201_security.py; --security-dir, --tls-url, --server-ca).
  smart      (ocpp201_smart.py) boots, starts a transaction on EVSE 1, sends NotifyChargingLimit
             and NotifyEVChargingNeeds, then stays connected as `commanded` does.
  prices     tariff and cost (ocpp201_prices.py says how).
The times of the transactions are fixed (TIMES below), so that a test knows what to expect.

Exit status: 0 when the scenario ran to its end with nothing unexpected (an answer of cms that
breaks the schema, a CALLERROR, a call of cms its handler refused), 1 otherwise, 2 for bad
arguments, 3 when the upgrade was refused (the `refused` line gives the HTTP status).
Everything is bounded in time.
"""

import argparse
import asyncio
import base64
import logging
import sys
import threading

import websockets
from ocpp.v201 import call

from ocpp201_answers import AnsweringStation
from ocpp201_base import SUBPROTOCOL, Connection, Unexpected, emit, now
from ocpp201_lists import lists
from ocpp201_security import security
from ocpp201_smart import smart
from ocpp201_prices import prices

OPEN_TIMEOUT_S = 5
CLOSE_TIMEOUT_S = 2
RESPONSE_TIMEOUT_S = 10
SCENARIO_TIMEOUT_S = 40

ID_TOKEN = "04A2B3C4D5E680"
UNKNOWN_TOKEN = "DEADBEEF000001"

# The transaction of `core` and of `offline`: the times each event and reading carries.
TIMES = {
    "core": [f"2026-06-01T10:0{m}:00Z" for m in range(6)],
    "offline": [f"2026-06-02T08:{m}0:00Z" for m in range(4)],
}
CORE_ENERGY = [1000, 1250, 1500, 1750, 2000]
OFFLINE_ENERGY = [1000, 1400, 1800, 2500]
OFFLINE_ORDER = [2, 0, 3, 1]


class Refused(Exception):
    pass


class Session:
    """One websocket at a time to cms, and its reader; the station outlives it."""

    def __init__(self, args):
        self.args = args
        self.station = None
        self.ws = None
        self.reader = None
        self.connections = 0

    async def connect(self):
        headers = {}
        if self.args.password is not None:
            basic = f"{self.args.identity}:{self.args.password}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(basic).decode()
        try:
            ws = await websockets.connect(
                self.args.url,
                subprotocols=[SUBPROTOCOL],
                additional_headers=headers,
                open_timeout=OPEN_TIMEOUT_S,
                close_timeout=CLOSE_TIMEOUT_S,
                proxy=None,
            )
        except websockets.InvalidStatus as refused:
            emit({"refused": refused.response.status_code, "url": self.args.url})
            raise Refused() from None
        if ws.subprotocol != SUBPROTOCOL:
            Unexpected.record(f"the server chose subprotocol {ws.subprotocol!r}")
        self.connections += 1
        connection = Connection(ws, self.connections)
        if self.station is None:
            self.station = AnsweringStation(self.args.identity, connection, RESPONSE_TIMEOUT_S)
        else:
            self.station.rebind(connection)
        self.ws = ws
        self.reader = asyncio.create_task(self.read(ws, connection))
        number = connection.number
        emit({"connected": self.args.url, "subprotocol": ws.subprotocol, "connection": number})
        return self.station

    async def read(self, ws, connection):
        try:
            await self.station.start()
        except websockets.ConnectionClosed as closed:
            if self.ws is ws:
                self.ws = None
                code = closed.rcvd.code if closed.rcvd else None
                emit(
                    {
                        "disconnected": self.args.url,
                        "connection": connection.number,
                        "by": "server",
                        "code": code,
                    }
                )
        except Exception as error:  # a bug here must not pass silently
            Unexpected.record(f"the reader failed: {type(error).__name__}: {error!r}")

    async def disconnect(self):
        ws, self.ws = self.ws, None
        if ws is None:
            return
        await ws.close(1000)
        await self.reader
        number = self.connections
        emit({"disconnected": self.args.url, "connection": number, "by": "us", "code": 1000})


def energy(wh, context, at, power_w=None):
    """One meterValue: the energy register (Wh), and the power when given."""
    sampled = [
        {
            "value": wh,
            "measurand": "Energy.Active.Import.Register",
            "context": context,
            "unit_of_measure": {"unit": "Wh"},
        }
    ]
    if power_w is not None:
        sampled.append(
            {
                "value": power_w,
                "measurand": "Power.Active.Import",
                "context": context,
                "unit_of_measure": {"unit": "W"},
            }
        )
    return [{"timestamp": at, "sampled_value": sampled}]


def transaction_events(transaction_id, id_token, times, energies, **extra):
    """Started, Updated..., Ended of one transaction on EVSE 1 connector 1."""
    last = len(energies) - 1
    events = []
    for seq_no, (at, wh) in enumerate(zip(times, energies)):
        info = {"transaction_id": transaction_id, "charging_state": "Charging"}
        if seq_no == 0:
            kind, reason, context, power = "Started", "Authorized", "Transaction.Begin", None
            more = {"id_token": id_token, "evse": {"id": 1, "connector_id": 1}}
        elif seq_no == last:
            kind, reason, context = "Ended", "StopAuthorized", "Transaction.End"
            info.update(stopped_reason="Local", charging_state="Idle")
            more, power = {"id_token": id_token}, None
        else:
            kind, reason, context = "Updated", "MeterValuePeriodic", "Sample.Periodic"
            more, power = {}, 7400
        events.append(
            call.TransactionEvent(
                event_type=kind,
                timestamp=at,
                trigger_reason=reason,
                seq_no=seq_no,
                transaction_info=info,
                meter_value=energy(wh, context, at, power),
                **more,
                **extra,
            )
        )
    return events


def token(value):
    return {"id_token": value, "type": "ISO14443"}


async def core(session, args):
    station = await session.connect()
    await station.boot()
    await station.status_notification(1, 1, "Available")
    await station.send_call(call.Heartbeat())
    await station.send_call(call.Authorize(id_token=token(args.id_token)))
    await station.send_call(call.Authorize(id_token=token(args.unknown_token)))
    times = TIMES["core"]
    events = transaction_events(f"TX-{args.identity}", token(args.id_token), times, CORE_ENERGY)
    for event in events:
        await station.send_call(event)
    reading = energy(CORE_ENERGY[-1], "Sample.Periodic", times[-1], power_w=7400)
    await station.send_call(call.MeterValues(evse_id=1, meter_value=reading))
    await station.notify_report(7, station.entries()[:2])
    component = {"name": "Connector", "evse": {"id": 1, "connector_id": 1}}
    event = {
        "event_id": 1,
        "timestamp": now(),
        "trigger": "Delta",
        "actual_value": "Available",
        "component": component,
        "variable": {"name": "AvailabilityState"},
        "event_notification_type": "HardWiredNotification",
    }
    await station.send_call(call.NotifyEvent(generated_at=now(), seq_no=0, event_data=[event]))
    await station.send_call(
        call.SecurityEventNotification(type="StartupOfTheDevice", timestamp=now())
    )
    await station.send_call(call.FirmwareStatusNotification(status="Idle"))
    await station.send_call(call.LogStatusNotification(status="Idle"))
    await station.send_call(
        call.DataTransfer(vendor_id="com.interop.vendor", message_id="Ping", data="hello")
    )
    await session.disconnect()


async def offline(session, args):
    station = await session.connect()
    await station.boot()
    await station.status_notification(1, 1, "Available")
    await session.disconnect()
    transaction_id = f"TX-OFF-{args.identity}"
    events = transaction_events(
        transaction_id, token(args.id_token), TIMES["offline"], OFFLINE_ENERGY, offline=True
    )
    station = await session.connect()
    await station.boot()
    for seq_no in OFFLINE_ORDER:
        await station.send_call(events[seq_no])
    await station.status_notification(1, 1, "Available")
    await session.disconnect()


async def commanded(session, args):
    station = await session.connect()
    await station.boot()
    await station.status_notification(1, 1, "Available")
    loop = asyncio.get_running_loop()
    stdin_closed = asyncio.Event()

    def wait_stdin():
        for _ in sys.stdin:
            pass
        loop.call_soon_threadsafe(stdin_closed.set)

    threading.Thread(target=wait_stdin, daemon=True).start()
    try:
        await asyncio.wait_for(stdin_closed.wait(), args.seconds)
    except asyncio.TimeoutError:
        pass
    await session.disconnect()


async def boot(session, args):
    station = await session.connect()
    await station.boot()
    await session.disconnect()


SCENARIOS = {"boot": boot, "core": core, "offline": offline, "commanded": commanded}
SCENARIOS["lists"] = lists  # ocpp201_lists.py
SCENARIOS["security"] = security  # ocpp201_security.py
SCENARIOS["smart"] = smart  # ocpp201_smart.py: a transaction, block K's notifications
SCENARIOS["prices"] = prices  # ocpp201_prices.py


async def run(args):
    session = Session(args)
    commanded_by_stdin = args.scenario in ("commanded", "lists", "smart")
    limit = args.seconds + 10 if commanded_by_stdin else SCENARIO_TIMEOUT_S
    try:
        await asyncio.wait_for(SCENARIOS[args.scenario](session, args), limit)
    except asyncio.TimeoutError:
        Unexpected.record(f"the scenario {args.scenario} took longer than {limit}s")
        return
    except (OSError, websockets.WebSocketException) as error:
        Unexpected.record(f"websocket to {args.url}: {type(error).__name__}: {error}")
        return
    emit({"done": args.scenario})


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("identity")
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--password")
    parser.add_argument("--id-token", default=ID_TOKEN)
    parser.add_argument("--unknown-token", default=UNKNOWN_TOKEN)
    parser.add_argument("--for", dest="seconds", type=float, default=60.0)
    # `security` (ocpp201_security.py): where its keys and certificates go, the wss URL and the
    # CA of the server's certificate for its profile-3 connection.
    parser.add_argument("--security-dir")
    parser.add_argument("--tls-url")
    parser.add_argument("--server-ca")
    args = parser.parse_args(argv[1:])
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    try:
        asyncio.run(run(args))
    except Refused:
        return 3
    if Unexpected.seen:
        print(f"FAIL {len(Unexpected.seen)} unexpected: {Unexpected.seen}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
