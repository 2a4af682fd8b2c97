"""OCPP 2.0.1 stations in the smart-charging simulation (tests/interop/smart_charging_sim.py), for
a mixed site: the `ocpp` package's v201 ChargePoint (schema validation of every CALL and
CALLRESULT on), one EVSE with one connector, whose car draws what its profile allows, exactly as
the 1.6 charge points of sim_station.py do.

A Station201 is a sim_station.Station (the same car, the same profile rules: a TxProfile on
EVSE 1 for its running transaction, a TxDefaultProfile on EVSE 0 or 1, the highest stackLevel
in force) that speaks 2.0.1: StatusNotification (Available, Occupied), TransactionEvent
Started/Ended for its transaction (its own transactionId, a uuid), MeterValues of EVSE 1.
At its car's arrival it sends NotifyEVChargingNeeds (AC three-phase, the car's maximum) and
NotifyChargingLimit (an EMS limit on EVSE 1 at its connector's rating, in A), which cms keeps
and shows (GET /api/v3/chargers/{uuid}/charging-limits) and the balancer respects.
"""

import time
import uuid

from ocpp.routing import after, on
from ocpp.v201 import ChargePoint, call, call_result

from sim_charge_point import RESPONSE_TIMEOUT_S
from sim_station import Station, now_iso

SUBPROTOCOL = "ocpp2.0.1"
# A 1.6 status as the 2.0.1 connectorStatus a station reports.
CONNECTOR_STATUS = {"Available": "Available", "Unavailable": "Unavailable", "Faulted": "Faulted"}


def profile_as_16(profile):
    """A 2.0.1 chargingProfile (snake_case, as the package gives it) in the shape the 1.6
    Station keeps: its first schedule, its id as charging_profile_id."""
    schedule = dict(profile["charging_schedule"][0])
    return {
        "charging_profile_id": profile["id"],
        "stack_level": profile["stack_level"],
        "charging_profile_purpose": profile["charging_profile_purpose"],
        "charging_profile_kind": profile["charging_profile_kind"],
        "recurrency_kind": profile.get("recurrency_kind"),
        "transaction_id": profile.get("transaction_id"),
        "valid_from": profile.get("valid_from"),
        "valid_to": profile.get("valid_to"),
        "charging_schedule": schedule,
    }


class SmartStation201(ChargePoint):
    """The 2.0.1 side of a Station201: answers the calls cms makes of a balanced station."""

    def __init__(self, station, connection):
        super().__init__(station.identity, connection, response_timeout=RESPONSE_TIMEOUT_S)
        self.station = station

    def spawn(self, coroutine):
        self.station.sim.spawn(coroutine)

    async def route_message(self, raw):
        import json

        try:
            frame = json.loads(raw)
            if isinstance(frame, list) and frame and frame[0] == 2:
                self.station.sim.count_call(frame[2])
        except ValueError:
            pass
        return await super().route_message(raw)

    @on("SetChargingProfile")
    def on_set_charging_profile(self, evse_id, charging_profile, **_):
        station = self.station
        profile = profile_as_16(charging_profile)
        status, why = station.set_profile(evse_id, profile)
        station.sim.log_profile(station, evse_id, profile, status, why)
        if status == "Accepted":
            self.spawn(station.follow_limit())
        return call_result.SetChargingProfile(status=status)

    @on("ClearChargingProfile")
    def on_clear_charging_profile(self, charging_profile_id=None, charging_profile_criteria=None, **_):
        station = self.station
        criteria = charging_profile_criteria or {}
        purpose = criteria.get("charging_profile_purpose")
        stack = criteria.get("stack_level")
        evse = criteria.get("evse_id")
        cleared = station.clear_profiles(charging_profile_id, evse, purpose, stack)
        station.sim.log_clear(station, charging_profile_id, evse, purpose, cleared)
        self.spawn(station.follow_limit())
        return call_result.ClearChargingProfile(status="Accepted" if cleared else "Unknown")

    @on("GetBaseReport")
    def on_get_base_report(self, request_id, report_base, **_):
        # Nothing to report beyond its boot: the simulation's settings are its own.
        return call_result.GetBaseReport(status="EmptyResultSet")


class Station201(Station):
    """A simulated 2.0.1 station with one EVSE: the 1.6 Station's car and profiles, 2.0.1's
    words."""

    subprotocol = SUBPROTOCOL

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seq_no = 0

    def charge_point(self, connection):
        return SmartStation201(self, connection)

    def boot_request(self):
        return call.BootNotification(
            charging_station={
                "model": "SimWallbox201",
                "vendor_name": "SimVendor",
                "serial_number": f"SN-{self.identity}"[:25],
                "firmware_version": "2.0.1-sim",
            },
            reason="PowerUp",
        )

    async def status_notification(self, connector, status):
        if connector == 0:
            return  # a 2.0.1 station reports its EVSEs' connectors only
        self.status = status
        await self.send(
            call.StatusNotification(
                timestamp=now_iso(),
                connector_status=CONNECTOR_STATUS.get(str(status.value), "Occupied"),
                evse_id=1,
                connector_id=1,
            )
        )

    def reading(self):
        draw = self.draw()
        sampled = [
            {
                "value": int(self.energy_wh),
                "context": "Sample.Periodic",
                "measurand": "Energy.Active.Import.Register",
                "location": "Outlet",
                "unit_of_measure": {"unit": "Wh"},
            }
        ] + [
            {
                "value": round(draw, 2),
                "context": "Sample.Periodic",
                "measurand": "Current.Import",
                "phase": phase,
                "location": "Outlet",
                "unit_of_measure": {"unit": "A"},
            }
            for phase in ("L1", "L2", "L3")
        ]
        return call.MeterValues(
            evse_id=1, meter_value=[{"timestamp": now_iso(), "sampled_value": sampled}]
        )

    async def transaction_event(self, event_type, trigger_reason, **extra):
        answer = await self.send(
            call.TransactionEvent(
                event_type=event_type,
                timestamp=now_iso(),
                trigger_reason=trigger_reason,
                seq_no=self.seq_no,
                **extra,
            )
        )
        self.seq_no += 1
        return answer

    async def arrive(self):
        from ocpp.v16.enums import ChargePointStatus

        await self.status_notification(1, ChargePointStatus.preparing)
        transaction_id = str(uuid.uuid4())
        energy = {
            "timestamp": now_iso(),
            "sampled_value": [
                {
                    "value": int(self.energy_wh),
                    "context": "Transaction.Begin",
                    "measurand": "Energy.Active.Import.Register",
                    "unit_of_measure": {"unit": "Wh"},
                }
            ],
        }
        # The transaction is running before cms hears of it: a TxProfile may come at once.
        self.transaction_id = transaction_id
        self.tx_started = time.time()
        answer = await self.transaction_event(
            "Started",
            "CablePluggedIn",
            transaction_info={"transaction_id": transaction_id, "charging_state": "Charging"},
            evse={"id": 1, "connector_id": 1},
            meter_value=[energy],
        )
        if answer is None:
            return
        await self.send(
            call.NotifyEVChargingNeeds(
                evse_id=1,
                charging_needs={
                    "requested_energy_transfer": "AC_three_phase",
                    "ac_charging_parameters": {
                        "energy_amount": 30000,
                        "ev_min_current": 6,
                        "ev_max_current": int(self.car_max),
                        "ev_max_voltage": 400,
                    },
                },
            )
        )
        await self.send(
            call.NotifyChargingLimit(
                charging_limit={"charging_limit_source": "EMS", "is_grid_critical": False},
                evse_id=1,
                charging_schedule=[
                    {
                        "id": 1,
                        "charging_rate_unit": "A",
                        "charging_schedule_period": [
                            {"start_period": 0, "limit": float(self.connector_max)}
                        ],
                    }
                ],
            )
        )
        await self.status_notification(1, self.wanted_status())

    async def leave(self):
        from ocpp.v16.enums import ChargePointStatus

        transaction_id = self.transaction_id
        self.transaction_id = None
        self.tx_started = None
        self.full = False
        # A TxProfile lasts as long as its transaction.
        self.profiles = [p for p in self.profiles if p["purpose"] != "TxProfile"]
        await self.transaction_event(
            "Ended",
            "EVCommunicationLost",
            transaction_info={
                "transaction_id": transaction_id,
                "charging_state": "Idle",
                "stopped_reason": "EVDisconnected",
            },
        )
        await self.status_notification(1, ChargePointStatus.available)


# -- the interop station's smart charging (ocpp201_station.py) -------------------------------


class SmartAnswers:
    """AnsweringStation's answers to block K's calls: SetChargingProfile Accepted and held (by
    EVSE and id; a TxProfile only for a transaction it runs, else Rejected), ClearChargingProfile
    Accepted for a profile it holds (by id), else Unknown; GetChargingProfiles Accepted, then
    one ReportChargingProfiles per EVSE of what it holds of the purpose asked (NoProfiles when
    none);
    GetCompositeSchedule Rejected (it computes none)."""

    def held_profiles(self):
        if not hasattr(self, "_held_profiles"):
            self._held_profiles = {}
        return self._held_profiles

    @on("SetChargingProfile")
    def on_set_charging_profile(self, evse_id, charging_profile, **_):
        if charging_profile["charging_profile_purpose"] == "TxProfile":
            running = getattr(self, "transactions", {})
            if charging_profile.get("transaction_id") not in running:
                return call_result.SetChargingProfile(status="Rejected")
        self.held_profiles()[(evse_id, charging_profile["id"])] = charging_profile
        return call_result.SetChargingProfile(status="Accepted")

    @on("ClearChargingProfile")
    def on_clear_charging_profile(self, charging_profile_id=None, **_):
        held = self.held_profiles()
        cleared = [key for key in held if key[1] == charging_profile_id]
        for key in cleared:
            del held[key]
        return call_result.ClearChargingProfile(status="Accepted" if cleared else "Unknown")

    def matching(self, criteria, evse_id):
        """The profiles held on `evse_id` (any when None) of the criteria's purpose, by EVSE."""
        purpose = criteria.get("charging_profile_purpose")
        by_evse = {}
        for (evse, _id), profile in self.held_profiles().items():
            if evse_id is not None and evse != evse_id:
                continue
            if purpose is not None and profile["charging_profile_purpose"] != purpose:
                continue
            by_evse.setdefault(evse, []).append(profile)
        return by_evse

    @on("GetChargingProfiles")
    def on_get_charging_profiles(self, request_id, charging_profile, evse_id=None, **_):
        wanted = self.matching(charging_profile, evse_id)
        return call_result.GetChargingProfiles(status="Accepted" if wanted else "NoProfiles")

    @after("GetChargingProfiles")
    async def after_get_charging_profiles(self, request_id, charging_profile, evse_id=None, **_):
        by_evse = self.matching(charging_profile, evse_id)
        evses = sorted(by_evse)
        for n, evse in enumerate(evses):
            await self.send_call(
                call.ReportChargingProfiles(
                    request_id=request_id,
                    charging_limit_source="CSO",
                    evse_id=evse,
                    charging_profile=by_evse[evse],
                    tbc=n + 1 < len(evses),
                )
            )

    @on("GetCompositeSchedule")
    def on_get_composite_schedule(self, **_):
        return call_result.GetCompositeSchedule(status="Rejected")


async def smart(session, args):
    """Boots, reports EVSE 1 Available, tells NotifyChargingLimit (EMS, 13 A on EVSE 1), starts
    transaction TX-SMART-IDENTITY on EVSE 1 (the id token authorised), tells
    NotifyEVChargingNeeds (AC three-phase, 6 to 32 A, 30 kWh), and stays connected answering
    cms's calls until its stdin closes or --for seconds passed; a line `clear-limit` on its
    stdin sends ClearedChargingLimit (EMS, EVSE 1)."""
    import asyncio
    import sys
    import threading

    from ocpp201_answers import Transaction

    station = await session.connect()
    await station.boot()
    await station.status_notification(1, 1, "Available")
    # The limit first: the balancer knows it before the transaction it caps.
    await station.send_call(
        call.NotifyChargingLimit(
            charging_limit={"charging_limit_source": "EMS", "is_grid_critical": True},
            evse_id=1,
            charging_schedule=[
                {
                    "id": 1,
                    "charging_rate_unit": "A",
                    "charging_schedule_period": [{"start_period": 0, "limit": 13.0}],
                }
            ],
        )
    )
    id_token = {"id_token": args.id_token, "type": "ISO14443"}
    transaction = Transaction(f"TX-SMART-{args.identity}", 1, id_token, None)
    station.transactions[transaction.transaction_id] = transaction
    await station.transaction_event(
        transaction,
        "Started",
        "Authorized",
        context="Transaction.Begin",
        info={"charging_state": "Charging"},
        evse={"id": 1, "connector_id": 1},
        id_token=id_token,
    )
    await station.status_notification(1, 1, "Occupied")
    await station.send_call(
        call.NotifyEVChargingNeeds(
            evse_id=1,
            charging_needs={
                "requested_energy_transfer": "AC_three_phase",
                "ac_charging_parameters": {
                    "energy_amount": 30000,
                    "ev_min_current": 6,
                    "ev_max_current": 32,
                    "ev_max_voltage": 400,
                },
            },
        )
    )
    loop = asyncio.get_running_loop()
    stdin_closed = asyncio.Event()

    cleared = call.ClearedChargingLimit(charging_limit_source="EMS", evse_id=1)

    def wait_stdin():
        # `clear-limit`: the EMS lifts its limit (ClearedChargingLimit).
        for line in sys.stdin:
            if line.strip() == "clear-limit":
                asyncio.run_coroutine_threadsafe(station.send_call(cleared), loop)
        loop.call_soon_threadsafe(stdin_closed.set)

    threading.Thread(target=wait_stdin, daemon=True).start()
    try:
        await asyncio.wait_for(stdin_closed.wait(), args.seconds)
    except asyncio.TimeoutError:
        pass
    await session.disconnect()
