"""How the OCPP 2.0.1 station of tests/interop/ocpp201_station.py answers the Core calls a CSMS
makes, with the `ocpp` package's schema validation of each call and answer on.

The answers:
  GetBaseReport Accepted, then its device model in two NotifyReports (seqNo 0 with tbc, 1);
  GetReport Accepted (EmptyResultSet when nothing asked for is there), then a NotifyReport of
  what was asked; GetVariables the value of each variable asked (Rejected for a WriteOnly one,
  UnknownComponent / UnknownVariable); SetVariables Accepted and kept for a ReadWrite or
  WriteOnly variable, Rejected for a ReadOnly one, UnknownComponent / UnknownVariable;
  Reset Accepted; RequestStartTransaction Accepted, then TransactionEvent Started (triggerReason
  RemoteStart, its remoteStartId and idToken, on the EVSE asked or 1, connector 1);
  RequestStopTransaction Accepted for a transaction it runs, then TransactionEvent Ended
  (stoppedReason Remote), else Rejected; UnlockConnector Unlocked; TriggerMessage Accepted for
  the messages it can send, then sends it, else NotImplemented; ChangeAvailability Accepted;
  ClearCache Accepted; DataTransfer Accepted with the data sent; GetTransactionStatus
  messagesInQueue false and, for a transactionId, whether it runs. The display messages'
  calls as ocpp201_display.py says.
"""

from ocpp.routing import after, on
from ocpp.v201 import ChargePoint, call, call_result

from ocpp201_base import Calls, Unexpected, now
from ocpp201_display import DisplayAnswers
from ocpp201_fwres import FwresAnswers
from ocpp201_lists import ListAnswers
from ocpp201_security import SecurityAnswers
from ocpp201_smart import SmartAnswers
from ocpp201_prices import PriceAnswers

# What --password-like secrets a station holds look like in its device model: the test checks
# that cms never shows this value.
SECRET = "interop-secret-7f3a9c21"
HEARTBEAT_INTERVAL = "300"


def device_model(identity):
    """(component, evse id or None, variable, value, mutability, data type), as reported."""
    return [
        ("OCPPCommCtrlr", None, "HeartbeatInterval", HEARTBEAT_INTERVAL, "ReadWrite", "integer"),
        ("AuthCtrlr", None, "AuthorizeRemoteStart", "true", "ReadWrite", "boolean"),
        ("TxCtrlr", None, "EVConnectionTimeOut", "60", "ReadWrite", "integer"),
        ("SecurityCtrlr", None, "Identity", identity, "ReadOnly", "string"),
        ("SecurityCtrlr", None, "BasicAuthPassword", SECRET, "WriteOnly", "string"),
        ("EVSE", 1, "AvailabilityState", "Available", "ReadOnly", "OptionList"),
    ]


def component_of(name, evse):
    component = {"name": name}
    if evse is not None:
        component["evse"] = {"id": evse}
    return component


def variable_of(variable):
    """A model's variable name, `Name` or `Name:Instance`, as a VariableType."""
    name, _, instance = variable.partition(":")
    return {"name": name, "instance": instance} if instance else {"name": name}


def report_data(entry):
    name, evse, variable, value, mutability, data_type = entry
    return {
        "component": component_of(name, evse),
        "variable": variable_of(variable),
        "variable_attribute": [{"type": "Actual", "value": value, "mutability": mutability}],
        "variable_characteristics": {"data_type": data_type, "supports_monitoring": False},
    }


class Transaction:
    def __init__(self, transaction_id, evse_id, id_token, remote_start_id):
        self.transaction_id = transaction_id
        self.evse_id = evse_id
        self.id_token = id_token
        self.remote_start_id = remote_start_id
        self.seq_no = 0
        self.energy_wh = 1000


class AnsweringStation(
    DisplayAnswers,
    FwresAnswers,
    ListAnswers,
    PriceAnswers,
    SecurityAnswers,
    SmartAnswers,
    Calls,
    ChargePoint,
):
    """The station: its device model and transactions outlive a connection (see `rebind`)."""

    def __init__(self, identity, connection, response_timeout):
        super().__init__(identity, connection, response_timeout=response_timeout)
        self.model = {(c, e, v): [value, m, t] for c, e, v, value, m, t in device_model(identity)}
        self.transactions = {}

    def rebind(self, connection):
        """Goes on over a new websocket, keeping what the station holds."""
        self._connection = connection

    # -- the device model ---------------------------------------------------------------------

    def find(self, component, variable):
        """The model's key for a component and variable as a call names them, or a status."""
        evse = (component.get("evse") or {}).get("id")
        names = {(c, e) for c, e, _ in self.model}
        if (component["name"], evse) not in names:
            return None, "UnknownComponent"
        instance = variable.get("instance")
        name = f'{variable["name"]}:{instance}' if instance else variable["name"]
        key = (component["name"], evse, name)
        if key not in self.model:
            return None, "UnknownVariable"
        return key, None

    def entries(self, keys=None):
        keys = list(self.model) if keys is None else keys
        return [(c, e, v, *self.model[(c, e, v)]) for c, e, v in keys]

    async def notify_report(self, request_id, entries):
        """The report in messages of at most three variables, numbered from 0."""
        chunks = [entries[i : i + 3] for i in range(0, len(entries), 3)] or [[]]
        for seq_no, chunk in enumerate(chunks):
            await self.send_call(
                call.NotifyReport(
                    request_id=request_id,
                    generated_at=now(),
                    seq_no=seq_no,
                    report_data=[report_data(e) for e in chunk] or None,
                    tbc=seq_no < len(chunks) - 1 or None,
                )
            )

    @on("GetBaseReport")
    def on_get_base_report(self, request_id, report_base, **_):
        return call_result.GetBaseReport(status="Accepted")

    @after("GetBaseReport")
    async def after_get_base_report(self, request_id, **_):
        await self.notify_report(request_id, self.entries())

    def asked(self, component_variable):
        keys = []
        for item in component_variable or []:
            variable = item.get("variable")
            if variable is None:
                keys += [k for k in self.model if k[0] == item["component"]["name"]]
                continue
            key, _ = self.find(item["component"], variable)
            if key is not None:
                keys.append(key)
        return keys if component_variable else list(self.model)

    @on("GetReport")
    def on_get_report(self, request_id, component_variable=None, **_):
        found = self.asked(component_variable)
        return call_result.GetReport(status="Accepted" if found else "EmptyResultSet")

    @after("GetReport")
    async def after_get_report(self, request_id, component_variable=None, **_):
        found = self.asked(component_variable)
        if found:
            await self.notify_report(request_id, self.entries(found))

    @on("GetVariables")
    def on_get_variables(self, get_variable_data, **_):
        results = []
        for item in get_variable_data:
            result = {"component": item["component"], "variable": item["variable"]}
            key, status = self.find(item["component"], item["variable"])
            if key is not None and self.model[key][1] == "WriteOnly":
                status = "Rejected"
            elif key is not None:
                status = "Accepted"
                result["attribute_value"] = self.model[key][0]
            result["attribute_status"] = status
            results.append(result)
        return call_result.GetVariables(get_variable_result=results)

    @on("SetVariables")
    def on_set_variables(self, set_variable_data, **_):
        results = []
        for item in set_variable_data:
            key, status = self.find(item["component"], item["variable"])
            if key is not None and self.model[key][1] == "ReadOnly":
                status = "Rejected"
            elif key is not None:
                status = "Accepted"
                self.model[key][0] = item["attribute_value"]
            results.append(
                {
                    "attribute_status": status,
                    "component": item["component"],
                    "variable": item["variable"],
                }
            )
        return call_result.SetVariables(set_variable_result=results)

    # -- transactions -------------------------------------------------------------------------

    async def transaction_event(self, transaction, event_type, trigger_reason, **extra):
        info = {"transaction_id": transaction.transaction_id}
        if event_type == "Started" and transaction.remote_start_id is not None:
            info["remote_start_id"] = transaction.remote_start_id
        info.update(extra.pop("info", {}))
        reading = {
            "timestamp": now(),
            "sampled_value": [
                {
                    "value": transaction.energy_wh,
                    "measurand": "Energy.Active.Import.Register",
                    "context": extra.pop("context"),
                    "unit_of_measure": {"unit": "Wh"},
                }
            ],
        }
        answer = await self.send_call(
            call.TransactionEvent(
                event_type=event_type,
                timestamp=now(),
                trigger_reason=trigger_reason,
                seq_no=transaction.seq_no,
                transaction_info=info,
                meter_value=[reading],
                **extra,
            )
        )
        transaction.seq_no += 1
        return answer

    @on("RequestStartTransaction")
    def on_request_start_transaction(self, id_token, remote_start_id, **_):
        return call_result.RequestStartTransaction(status="Accepted")

    @after("RequestStartTransaction")
    async def after_request_start_transaction(self, id_token, remote_start_id, evse_id=None, **_):
        evse_id = evse_id or 1
        transaction = Transaction(f"RS-{remote_start_id}", evse_id, id_token, remote_start_id)
        self.transactions[transaction.transaction_id] = transaction
        await self.transaction_event(
            transaction,
            "Started",
            "RemoteStart",
            context="Transaction.Begin",
            info={"charging_state": "Charging"},
            evse={"id": evse_id, "connector_id": 1},
            id_token=id_token,
        )

    @on("RequestStopTransaction")
    def on_request_stop_transaction(self, transaction_id, **_):
        running = transaction_id in self.transactions
        return call_result.RequestStopTransaction(status="Accepted" if running else "Rejected")

    @after("RequestStopTransaction")
    async def after_request_stop_transaction(self, transaction_id, **_):
        transaction = self.transactions.pop(transaction_id, None)
        if transaction is None:
            return
        transaction.energy_wh += 500
        await self.transaction_event(
            transaction,
            "Ended",
            "RemoteStop",
            context="Transaction.End",
            info={"stopped_reason": "Remote", "charging_state": "Idle"},
        )

    @on("GetTransactionStatus")
    def on_get_transaction_status(self, transaction_id=None, **_):
        ongoing = None if transaction_id is None else transaction_id in self.transactions
        return call_result.GetTransactionStatus(
            messages_in_queue=False, ongoing_indicator=ongoing
        )

    # -- the rest of Core ---------------------------------------------------------------------

    @on("Reset")
    def on_reset(self, **_):
        return call_result.Reset(status="Accepted")

    @on("UnlockConnector")
    def on_unlock_connector(self, **_):
        return call_result.UnlockConnector(status="Unlocked")

    @on("ChangeAvailability")
    def on_change_availability(self, **_):
        return call_result.ChangeAvailability(status="Accepted")

    @on("ClearCache")
    def on_clear_cache(self, **_):
        return call_result.ClearCache(status="Accepted")

    @on("DataTransfer")
    def on_data_transfer(self, vendor_id, data=None, **_):
        return call_result.DataTransfer(status="Accepted", data=data)

    TRIGGERED = {
        "BootNotification",
        "FirmwareStatusNotification",
        "Heartbeat",
        "LogStatusNotification",
        "MeterValues",
        "SignChargingStationCertificate",
        "StatusNotification",
    }

    @on("TriggerMessage")
    def on_trigger_message(self, requested_message, **_):
        status = "Accepted" if requested_message in self.TRIGGERED else "NotImplemented"
        return call_result.TriggerMessage(status=status)

    @after("TriggerMessage")
    async def after_trigger_message(self, requested_message, evse=None, **_):
        evse_id = (evse or {}).get("id") or 1
        try:
            await self.send_triggered(requested_message, evse_id)
        except Exception as error:  # the package would drop it unseen
            Unexpected.record(f"sending the triggered {requested_message}: {error!r}")

    async def send_triggered(self, requested_message, evse_id):
        if requested_message == "BootNotification":
            await self.boot("Triggered")
        elif requested_message == "FirmwareStatusNotification":
            await self.send_call(call.FirmwareStatusNotification(status="Idle"))
        elif requested_message == "Heartbeat":
            await self.send_call(call.Heartbeat())
        elif requested_message == "LogStatusNotification":
            await self.send_call(call.LogStatusNotification(status="Idle"))
        elif requested_message == "MeterValues":
            reading = {
                "timestamp": now(),
                "sampled_value": [{"value": 1234, "unit_of_measure": {"unit": "Wh"}}],
            }
            await self.send_call(call.MeterValues(evse_id=evse_id, meter_value=[reading]))
        elif requested_message == "StatusNotification":
            await self.status_notification(evse_id, 1, "Available")
        elif requested_message == "SignChargingStationCertificate":
            await self.sign_certificate()

    # -- what a station says of its own accord -------------------------------------------------

    async def boot(self, reason="PowerUp"):
        return await self.send_call(
            call.BootNotification(
                charging_station={
                    "model": "Interop201",
                    "vendor_name": "InteropVendor",
                    "firmware_version": "2.0.1-interop",
                    "serial_number": "INTEROP-0001",
                },
                reason=reason,
            )
        )

    async def status_notification(self, evse_id, connector_id, status, timestamp=None):
        return await self.send_call(
            call.StatusNotification(
                timestamp=timestamp or now(),
                connector_status=status,
                evse_id=evse_id,
                connector_id=connector_id,
            )
        )
