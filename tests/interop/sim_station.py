"""A simulated charge point's state (an EV charger's, or the grid meter's), outliving its
connection's handlers: its car, its transaction, the charging profiles it holds and the limit
they make under OCPP 1.6's rules, what the car draws, its readings, and the CALLs it makes
(sim_charge_point.py answers the central system's).
"""

import asyncio
import time
from datetime import datetime, timezone

import websockets
from ocpp.exceptions import OCPPError
from ocpp.v16 import call
from ocpp.v16.datatypes import MeterValue, SampledValue
from ocpp.v16.enums import (
    ChargePointErrorCode,
    ChargePointStatus,
    Location,
    Measurand,
    Phase,
    ReadingContext,
    Reason,
    UnitOfMeasure,
)

from sim_scenario import SAMPLE_EVERY


def now_iso():
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Station:
    """A charge point's state, outliving the handlers: its car, transaction, profiles, draw."""

    def __init__(self, sim, identity, password, car_max, connector_max, is_meter=False):
        self.sim = sim
        self.identity = identity
        self.password = password
        self.car_max = car_max
        self.connector_max = connector_max
        self.is_meter = is_meter
        self.cp = None
        self.status = ChargePointStatus.available
        self.transaction_id = None
        self.tx_started = None  # wall-clock seconds
        # The car is full: it draws nothing, its transaction still open (SuspendedEV).
        self.full = False
        self.energy_wh = 0.0
        # Installed profiles: dicts with connector, id, stack, purpose, kind, schedule,
        # transaction_id, valid_from, valid_to, received (wall seconds).
        self.profiles = []
        self.configuration = {
            "HeartbeatInterval": ["300", False],
            "MeterValueSampleInterval": [str(int(SAMPLE_EVERY)), False],
            "ClockAlignedDataInterval": ["0", False],
            "MeterValuesSampledData": [
                "Current.Import" if is_meter else "Energy.Active.Import.Register,Current.Import",
                False,
            ],
            "NumberOfConnectors": ["1", True],
            "SupportedFeatureProfiles": ["Core,SmartCharging,RemoteTrigger", True],
            "ChargeProfileMaxStackLevel": ["8", True],
            "ChargingScheduleAllowedChargingRateUnit": ["Current", True],
            "ChargingScheduleMaxPeriods": ["24", True],
            "MaxChargingProfilesInstalled": ["16", True],
            "AuthorizeRemoteTxRequests": ["true", False],
            "StopTransactionOnEVSideDisconnect": ["true", True],
            "WebSocketPingInterval": ["0", False],
        }

    # --- what it draws ---------------------------------------------------------------------

    @property
    def charging(self):
        return self.transaction_id is not None

    def limit(self, at=None):
        """The effective limit of connector 1 (A) under OCPP 1.6's rules, None when no profile
        applies."""
        at = time.time() if at is None else at
        if self.is_meter:
            return None
        chosen = None
        if self.charging:
            chosen = self.top_limit(at, "TxProfile", 1)
        if chosen is None:
            chosen = self.top_limit(at, "TxDefaultProfile", 1)
        if chosen is None:
            chosen = self.top_limit(at, "TxDefaultProfile", 0)
        cap = self.top_limit(at, "ChargePointMaxProfile", 0)
        if cap is not None:
            chosen = cap if chosen is None else min(chosen, cap)
        return chosen

    def top_limit(self, at, purpose, connector):
        """The limit of the highest-stackLevel profile of `purpose` on `connector` in force."""
        best = None
        for profile in self.profiles:
            if profile["purpose"] != purpose or profile["connector"] != connector:
                continue
            value = self._in_force(profile, at)
            if value is not None and (best is None or profile["stack"] > best[0]):
                best = (profile["stack"], value)
        return None if best is None else best[1]

    def _in_force(self, profile, at):
        """The period limit of `profile` at `at` (wall seconds), None when none applies."""
        if profile["valid_from"] is not None and at < profile["valid_from"]:
            return None
        if profile["valid_to"] is not None and at >= profile["valid_to"]:
            return None
        schedule = profile["schedule"]
        if profile["kind"] == "Relative":
            start = self.tx_started if self.tx_started is not None else profile["received"]
        elif schedule.get("start_schedule"):
            start = parse_time(schedule["start_schedule"])
        else:
            start = profile["received"]
        elapsed = at - start
        if profile["kind"] == "Recurring":
            period = 7 * 86400 if profile.get("recurrency") == "Weekly" else 86400
            elapsed %= period
        # Both clocks are this machine's; a startSchedule a moment ahead is taken as now.
        if elapsed < 0:
            if elapsed < -2:
                return None
            elapsed = 0
        duration = schedule.get("duration")
        if duration is not None and elapsed >= duration:
            return None
        value = None
        for period in sorted(schedule["charging_schedule_period"], key=lambda p: p["start_period"]):
            if period["start_period"] <= elapsed:
                value = float(period["limit"])
        return value

    def draw(self):
        """What the car draws per phase now (A)."""
        if not self.charging or self.full:
            return 0.0
        limit = self.limit()
        return self.car_max if limit is None else max(0.0, min(limit, self.car_max))

    def wanted_status(self):
        if not self.charging:
            return self.status
        if self.full:
            return ChargePointStatus.suspended_ev
        return ChargePointStatus.charging if self.draw() > 0 else ChargePointStatus.suspended_evse

    # --- talking ---------------------------------------------------------------------------

    async def send(self, request):
        """One CALL of ours; a CALLERROR or no answer is a failure."""
        action = type(request).__name__
        cp = self.cp
        if cp is None:
            self.sim.failures.add("call", f"{self.identity} is not connected for {action}")
            return None
        try:
            return await cp.call(request, suppress=False)
        except OCPPError as error:
            self.sim.failures.add("call", f"{self.identity}: {action} answered {error!r}")
        except asyncio.TimeoutError:
            self.sim.failures.add("call", f"{self.identity}: {action} got no answer")
        except websockets.ConnectionClosed as error:
            self.sim.failures.add("call", f"{self.identity}: {action}: connection closed {error}")
        return None

    async def status_notification(self, connector, status):
        if connector > 0:
            self.status = status
        await self.send(
            call.StatusNotification(
                connector_id=connector,
                error_code=ChargePointErrorCode.no_error,
                status=status,
                timestamp=now_iso(),
            )
        )

    async def follow_limit(self):
        """After a profile change: says Charging or SuspendedEVSE when that changed."""
        wanted = self.wanted_status()
        if self.charging and wanted != self.status:
            await self.status_notification(1, wanted)

    def reading(self):
        """The MeterValues of its connector now (the meter: the grid's, on connector 0)."""
        stamp = now_iso()
        context = ReadingContext.sample_periodic
        if self.is_meter:
            phases = self.sim.grid_phases()
            values = [
                SampledValue(
                    value=f"{phases[phase]:.2f}",
                    context=context,
                    measurand=Measurand.current_import,
                    phase=Phase(phase),
                    location=Location.inlet,
                    unit=UnitOfMeasure.a,
                )
                for phase in ("L1", "L2", "L3")
            ]
            return call.MeterValues(
                connector_id=0, meter_value=[MeterValue(timestamp=stamp, sampled_value=values)]
            )
        draw = self.draw()
        values = [
            SampledValue(
                value=str(int(self.energy_wh)),
                context=context,
                measurand=Measurand.energy_active_import_register,
                location=Location.outlet,
                unit=UnitOfMeasure.wh,
            )
        ] + [
            SampledValue(
                value=f"{draw:.2f}",
                context=context,
                measurand=Measurand.current_import,
                phase=Phase(phase),
                location=Location.outlet,
                unit=UnitOfMeasure.a,
            )
            for phase in ("L1", "L2", "L3")
        ]
        return call.MeterValues(
            connector_id=1,
            meter_value=[MeterValue(timestamp=stamp, sampled_value=values)],
            transaction_id=self.transaction_id,
        )

    async def arrive(self):
        await self.status_notification(1, ChargePointStatus.preparing)
        answer = await self.send(
            call.StartTransaction(
                connector_id=1,
                id_tag=f"SIM-{self.identity}"[-20:],
                meter_start=int(self.energy_wh),
                timestamp=now_iso(),
            )
        )
        if answer is None:
            return
        status = answer.id_tag_info.get("status") if isinstance(answer.id_tag_info, dict) else None
        if status != "Accepted":
            self.sim.failures.add("start", f"{self.identity}: idTagInfo {answer.id_tag_info}")
        self.transaction_id = answer.transaction_id
        self.tx_started = time.time()
        await self.status_notification(1, self.wanted_status())

    async def stop_drawing(self):
        self.full = True
        await self.status_notification(1, ChargePointStatus.suspended_ev)

    async def leave(self):
        transaction_id = self.transaction_id
        self.transaction_id = None
        self.tx_started = None
        self.full = False
        # A TxProfile lasts as long as its transaction.
        self.profiles = [p for p in self.profiles if p["purpose"] != "TxProfile"]
        await self.send(
            call.StopTransaction(
                meter_stop=int(self.energy_wh),
                timestamp=now_iso(),
                transaction_id=transaction_id,
                reason=Reason.ev_disconnected,
            )
        )
        await self.status_notification(1, ChargePointStatus.finishing)
        await self.status_notification(1, ChargePointStatus.available)

    # --- what the central system asks ------------------------------------------------------

    def set_profile(self, connector_id, profile):
        """SetChargingProfile as a charger takes it: (status, why rejected or None)."""
        purpose = profile["charging_profile_purpose"]
        schedule = profile["charging_schedule"]
        stack = profile["stack_level"]
        if connector_id not in (0, 1):
            return "Rejected", f"no connector {connector_id}"
        if purpose == "TxProfile":
            if connector_id == 0:
                return "Rejected", "a TxProfile on connector 0"
            if not self.charging:
                return "Rejected", "a TxProfile with no transaction running"
            wanted = profile.get("transaction_id")
            if wanted is not None and wanted != self.transaction_id:
                return "Rejected", f"transaction {wanted}, running {self.transaction_id}"
        if purpose == "ChargePointMaxProfile" and connector_id != 0:
            return "Rejected", "a ChargePointMaxProfile on a connector"
        if schedule.get("charging_rate_unit") != "A":
            return "Rejected", f"unit {schedule.get('charging_rate_unit')}"
        if stack > int(self.configuration["ChargeProfileMaxStackLevel"][0]):
            return "Rejected", f"stackLevel {stack}"
        periods = schedule.get("charging_schedule_period") or []
        if not periods or len(periods) > int(self.configuration["ChargingScheduleMaxPeriods"][0]):
            return "Rejected", f"{len(periods)} periods"
        if any(p["limit"] < 0 for p in periods):
            return "Rejected", "a negative limit"
        kind = profile.get("charging_profile_kind")
        if kind == "Recurring" and not schedule.get("start_schedule"):
            return "Rejected", "a Recurring profile without startSchedule"
        installed = {
            "connector": connector_id,
            "id": profile["charging_profile_id"],
            "stack": stack,
            "purpose": purpose,
            "kind": kind,
            "recurrency": profile.get("recurrency_kind"),
            "schedule": schedule,
            "transaction_id": profile.get("transaction_id"),
            "valid_from": parse_time(profile["valid_from"]) if profile.get("valid_from") else None,
            "valid_to": parse_time(profile["valid_to"]) if profile.get("valid_to") else None,
            "received": time.time(),
        }
        # The same id, or the same stackLevel and purpose on the connector, is replaced.
        self.profiles = [
            p
            for p in self.profiles
            if p["id"] != installed["id"]
            and not (
                p["connector"] == connector_id and p["stack"] == stack and p["purpose"] == purpose
            )
        ]
        if len(self.profiles) >= int(self.configuration["MaxChargingProfilesInstalled"][0]):
            return "Rejected", "no room for another profile"
        self.profiles.append(installed)
        return "Accepted", None

    def clear_profiles(self, id=None, connector_id=None, purpose=None, stack_level=None):
        kept = []
        for p in self.profiles:
            if id is not None:
                matches = p["id"] == id
            else:
                matches = (
                    (connector_id is None or p["connector"] == connector_id)
                    and (purpose is None or p["purpose"] == purpose)
                    and (stack_level is None or p["stack"] == stack_level)
                )
            if not matches:
                kept.append(p)
        cleared = len(self.profiles) - len(kept)
        self.profiles = kept
        return cleared
