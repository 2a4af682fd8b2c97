"""The OCPP side of a simulated charge point: the `ocpp` package's ChargePoint (which validates
every CALL and CALLRESULT against the OCPP 1.6 JSON schemas), answering what a central system
sends as a charger would, on the Station it speaks for (sim_station.py).
"""

import json

from ocpp.routing import after, on
from ocpp.v16 import ChargePoint, call, call_result
from ocpp.v16.enums import (
    Action,
    AvailabilityStatus,
    ChargePointStatus,
    ChargingProfileStatus,
    ClearCacheStatus,
    ClearChargingProfileStatus,
    ConfigurationStatus,
    DataTransferStatus,
    GetCompositeScheduleStatus,
    RemoteStartStopStatus,
    ResetStatus,
    TriggerMessageStatus,
    UnlockStatus,
)

from sim_station import now_iso

RESPONSE_TIMEOUT_S = 10


class SimChargePoint(ChargePoint):
    """The OCPP side of a Station: answers what a central system sends."""

    def __init__(self, station, connection):
        super().__init__(station.identity, connection, response_timeout=RESPONSE_TIMEOUT_S)
        self.station = station

    def spawn(self, coroutine):
        """Runs a call of ours outside the handler (the reader must go on to read its answer)."""
        self.station.sim.spawn(coroutine)

    async def route_message(self, raw):
        try:
            frame = json.loads(raw)
            if isinstance(frame, list) and frame and frame[0] == 2:
                self.station.sim.count_call(frame[2])
        except ValueError:
            pass
        return await super().route_message(raw)

    @on(Action.set_charging_profile)
    def on_set_charging_profile(self, connector_id, cs_charging_profiles, **_):
        station = self.station
        status, why = station.set_profile(connector_id, cs_charging_profiles)
        station.sim.log_profile(station, connector_id, cs_charging_profiles, status, why)
        if status == "Accepted":
            self.spawn(station.follow_limit())
        return call_result.SetChargingProfile(status=ChargingProfileStatus(status))

    @on(Action.clear_charging_profile)
    def on_clear_charging_profile(
        self, id=None, connector_id=None, charging_profile_purpose=None, stack_level=None, **_
    ):
        station = self.station
        purpose = charging_profile_purpose
        cleared = station.clear_profiles(id, connector_id, purpose, stack_level)
        station.sim.log_clear(station, id, connector_id, purpose, cleared)
        self.spawn(station.follow_limit())
        status = ClearChargingProfileStatus.unknown
        if cleared:
            status = ClearChargingProfileStatus.accepted
        return call_result.ClearChargingProfile(status=status)

    @on(Action.get_composite_schedule)
    def on_get_composite_schedule(self, connector_id, duration, charging_rate_unit=None, **_):
        if charging_rate_unit not in (None, "A") or connector_id not in (0, 1):
            return call_result.GetCompositeSchedule(status=GetCompositeScheduleStatus.rejected)
        limit = self.station.limit()
        limit = self.station.car_max if limit is None else limit
        return call_result.GetCompositeSchedule(
            status=GetCompositeScheduleStatus.accepted,
            connector_id=connector_id,
            schedule_start=now_iso(),
            charging_schedule={
                "duration": duration,
                "chargingRateUnit": "A",
                "chargingSchedulePeriod": [{"startPeriod": 0, "limit": round(limit, 1)}],
            },
        )

    @on(Action.get_configuration)
    def on_get_configuration(self, key=None, **_):
        configuration = self.station.configuration
        known, unknown = [], []
        for name in key or list(configuration):
            if name in configuration:
                value, readonly = configuration[name]
                known.append({"key": name, "readonly": readonly, "value": value})
            else:
                unknown.append(name)
        return call_result.GetConfiguration(
            configuration_key=known or None, unknown_key=unknown or None
        )

    @on(Action.change_configuration)
    def on_change_configuration(self, key, value, **_):
        entry = self.station.configuration.get(key)
        if entry is None:
            return call_result.ChangeConfiguration(status=ConfigurationStatus.not_supported)
        if entry[1]:
            return call_result.ChangeConfiguration(status=ConfigurationStatus.rejected)
        # Kept and reported back; the scenario's clock (1 s samples) goes on regardless.
        entry[0] = value
        return call_result.ChangeConfiguration(status=ConfigurationStatus.accepted)

    @on(Action.trigger_message)
    def on_trigger_message(self, requested_message, connector_id=None, **_):
        supported = ("BootNotification", "Heartbeat", "MeterValues", "StatusNotification")
        if requested_message not in supported:
            return call_result.TriggerMessage(status=TriggerMessageStatus.not_implemented)
        return call_result.TriggerMessage(status=TriggerMessageStatus.accepted)

    @after(Action.trigger_message)
    def after_trigger_message(self, requested_message, connector_id=None, **_):
        station = self.station
        if requested_message == "Heartbeat":
            self.spawn(station.send(call.Heartbeat()))
        elif requested_message == "BootNotification":
            self.spawn(station.send(boot_request(station)))
        elif requested_message == "MeterValues":
            self.spawn(station.send(station.reading()))
        elif requested_message == "StatusNotification":
            status = station.status if connector_id else ChargePointStatus.available
            self.spawn(station.status_notification(connector_id or 0, status))

    @on(Action.change_availability)
    def on_change_availability(self, **_):
        return call_result.ChangeAvailability(status=AvailabilityStatus.accepted)

    @on(Action.clear_cache)
    def on_clear_cache(self, **_):
        return call_result.ClearCache(status=ClearCacheStatus.accepted)

    @on(Action.data_transfer)
    def on_data_transfer(self, **_):
        return call_result.DataTransfer(status=DataTransferStatus.unknown_vendor_id)

    @on(Action.get_local_list_version)
    def on_get_local_list_version(self, **_):
        return call_result.GetLocalListVersion(list_version=0)

    @on(Action.remote_start_transaction)
    def on_remote_start_transaction(self, **_):
        # The cars come and go as the scenario says.
        return call_result.RemoteStartTransaction(status=RemoteStartStopStatus.rejected)

    @on(Action.remote_stop_transaction)
    def on_remote_stop_transaction(self, **_):
        return call_result.RemoteStopTransaction(status=RemoteStartStopStatus.rejected)

    @on(Action.reset)
    def on_reset(self, **_):
        return call_result.Reset(status=ResetStatus.rejected)

    @on(Action.unlock_connector)
    def on_unlock_connector(self, **_):
        return call_result.UnlockConnector(status=UnlockStatus.not_supported)


def boot_request(station):
    return call.BootNotification(
        charge_point_vendor="SimVendor",
        charge_point_model="GridMeter" if station.is_meter else "SimWallbox",
        charge_point_serial_number=f"SN-{station.identity}"[:25],
        firmware_version="1.0.0-sim",
    )

