#!/usr/bin/env python3
"""A minimal OCPP 1.6J central system on the Python `ocpp` package (over `websockets`), written
as the package's documentation shows: a ChargePoint subclass with an @on handler per action.
It is one of the peers that loadtest/compare measures cms beside; it keeps nothing.

    central_system.py --port 9000     # ws://127.0.0.1:9000/ocpp/{identity}, ocpp1.6
"""

import argparse
import asyncio
import itertools
import logging
from datetime import datetime, timezone

import websockets
from ocpp.routing import on
from ocpp.v16 import ChargePoint as cp
from ocpp.v16 import call_result
from ocpp.v16.datatypes import IdTagInfo
from ocpp.v16.enums import Action, AuthorizationStatus, RegistrationStatus

# One counter for the whole central system, as transaction ids must be unique across chargers.
transaction_ids = itertools.count(1)


def now():
    return datetime.now(timezone.utc).isoformat()


class ChargePoint(cp):
    @on(Action.boot_notification)
    def on_boot_notification(self, charge_point_vendor, charge_point_model, **kwargs):
        return call_result.BootNotification(
            current_time=now(), interval=300, status=RegistrationStatus.accepted
        )

    @on(Action.heartbeat)
    def on_heartbeat(self):
        return call_result.Heartbeat(current_time=now())

    @on(Action.status_notification)
    def on_status_notification(self, connector_id, error_code, status, **kwargs):
        return call_result.StatusNotification()

    @on(Action.meter_values)
    def on_meter_values(self, connector_id, meter_value, **kwargs):
        return call_result.MeterValues()

    @on(Action.start_transaction)
    def on_start_transaction(self, connector_id, id_tag, meter_start, timestamp, **kwargs):
        return call_result.StartTransaction(
            transaction_id=next(transaction_ids),
            id_tag_info=IdTagInfo(status=AuthorizationStatus.accepted),
        )

    @on(Action.stop_transaction)
    def on_stop_transaction(self, meter_stop, timestamp, transaction_id, **kwargs):
        return call_result.StopTransaction(
            id_tag_info=IdTagInfo(status=AuthorizationStatus.accepted)
        )


async def on_connect(websocket):
    """For every charger that connects, a ChargePoint that answers it until it goes away."""
    if websocket.subprotocol != "ocpp1.6":
        logging.warning("no ocpp1.6 subprotocol offered: closing")
        return await websocket.close()
    charge_point_id = websocket.request.path.rstrip("/").rsplit("/", 1)[-1]
    try:
        await ChargePoint(charge_point_id, websocket).start()
    except websockets.exceptions.ConnectionClosed:
        pass


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9000)
    args = parser.parse_args()
    # WARNING, not the docs' INFO: at INFO the package logs every frame it receives and sends.
    logging.basicConfig(level=logging.WARNING)
    async with websockets.serve(
        on_connect, "127.0.0.1", args.port, subprotocols=["ocpp1.6"]
    ) as server:
        print(f"central system: listening on ws://127.0.0.1:{args.port}/", flush=True)
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
