"""Firmware, logs and reservations (blocks L, N and H) as the OCPP 2.0.1 station of
tests/interop/ocpp201_station.py answers them: a mixin of its AnsweringStation.

The answers:
  UpdateFirmware Accepted, then FirmwareStatusNotification Downloading, Downloaded, Installing,
  Installed with the call's requestId; GetLog Accepted (filename `log-<requestId>.txt`), then
  LogStatusNotification Uploading, Uploaded with its requestId; ReserveNow Accepted, kept, and
  then, by the id token reserved for: `USE-RESERVATION` starts a transaction on the EVSE (1 if
  any) with the reservationId, `EXPIRE-RESERVATION` tells ReservationStatusUpdate Expired, any
  other is held; CancelReservation Accepted for a reservation it holds, else Rejected.
"""

import asyncio

from ocpp.routing import after, on
from ocpp.v201 import call, call_result

# The id tokens whose reservations the station uses at once, or lets expire at once.
USE = "USE-RESERVATION"
EXPIRE = "EXPIRE-RESERVATION"
# A pause between notifications, as a station takes time to download and install.
STEP_S = 0.1


class FwresAnswers:
    """Firmware updates, log uploads and reservations; needs AnsweringStation's send_call,
    transaction_event and Transaction."""

    reservations = None

    def held_reservations(self):
        if self.reservations is None:
            self.reservations = {}
        return self.reservations

    @on("UpdateFirmware")
    def on_update_firmware(self, request_id, firmware, **_):
        return call_result.UpdateFirmware(status="Accepted")

    @after("UpdateFirmware")
    async def after_update_firmware(self, request_id, **_):
        for status in ["Downloading", "Downloaded", "Installing", "Installed"]:
            await asyncio.sleep(STEP_S)
            notification = call.FirmwareStatusNotification(status=status, request_id=request_id)
            await self.send_call(notification)

    @on("GetLog")
    def on_get_log(self, log, log_type, request_id, **_):
        return call_result.GetLog(status="Accepted", filename=f"log-{request_id}.txt")

    @after("GetLog")
    async def after_get_log(self, request_id, **_):
        for status in ["Uploading", "Uploaded"]:
            await asyncio.sleep(STEP_S)
            notification = call.LogStatusNotification(status=status, request_id=request_id)
            await self.send_call(notification)

    @on("ReserveNow")
    def on_reserve_now(self, id, expiry_date_time, id_token, evse_id=None, **_):
        self.held_reservations()[id] = (evse_id or 1, id_token)
        return call_result.ReserveNow(status="Accepted")

    @after("ReserveNow")
    async def after_reserve_now(self, id, id_token, evse_id=None, **_):
        if id_token["id_token"] == USE:
            self.held_reservations().pop(id, None)
            await self.start_reserved(id, evse_id or 1, id_token)
        elif id_token["id_token"] == EXPIRE:
            self.held_reservations().pop(id, None)
            await self.send_call(
                call.ReservationStatusUpdate(reservation_id=id, reservation_update_status="Expired")
            )

    async def start_reserved(self, reservation_id, evse_id, id_token):
        from ocpp201_answers import Transaction

        transaction = Transaction(f"RSV-{reservation_id}", evse_id, id_token, None)
        self.transactions[transaction.transaction_id] = transaction
        await self.transaction_event(
            transaction,
            "Started",
            "Authorized",
            context="Transaction.Begin",
            info={"charging_state": "Charging"},
            evse={"id": evse_id, "connector_id": 1},
            id_token=id_token,
            reservation_id=reservation_id,
        )

    @on("CancelReservation")
    def on_cancel_reservation(self, reservation_id, **_):
        held = self.held_reservations().pop(reservation_id, None) is not None
        return call_result.CancelReservation(status="Accepted" if held else "Rejected")
