"""Tariff and cost (block I) on the OCPP 2.0.1 station of tests/interop/ocpp201_station.py: the
station's answer to CostUpdated, and the scenario `prices` (tests/e2e/ocpp201/prices.rs).

`prices`: a station whose device model has TariffCostCtrlr (Available and Enabled for Tariff and
Cost, its fallback texts and currency ReadWrite) boots, reports it in its base report, and waits
until cms has set TariffFallbackMessage, TotalCostFallbackMessage and Currency; Authorizes its
id token until the answer carries a personalMessage (cms's gateway learns the price text
through its registry, a moment after the report); runs a transaction on EVSE 1 (Started with
the token, 1000 Wh, ten minutes ago; Updated 3500 Wh; Ended 6000 Wh, now) waiting for a running
CostUpdated before the end and for the final one after it. Every wait is bounded: a wait that
times out is printed as unexpected (exit status 1). Each CostUpdated shows as a `received` line;
`{"tariff_cost": {...}}` prints the TariffCostCtrlr values as cms left them.
"""

import asyncio

from ocpp.routing import on
from ocpp.v201 import call, call_result

from ocpp201_base import Unexpected, emit, minutes_ago, now

# How long cms may take to set the variables, to tell the gateway the price, to send a cost.
WAIT_S = 15

TARIFF_COST_MODEL = [
    ("TariffCostCtrlr", None, "Available:Tariff", "true", "ReadOnly", "boolean"),
    ("TariffCostCtrlr", None, "Available:Cost", "true", "ReadOnly", "boolean"),
    ("TariffCostCtrlr", None, "Enabled:Tariff", "true", "ReadWrite", "boolean"),
    ("TariffCostCtrlr", None, "Enabled:Cost", "true", "ReadWrite", "boolean"),
    ("TariffCostCtrlr", None, "TariffFallbackMessage", "unset", "ReadWrite", "string"),
    ("TariffCostCtrlr", None, "TotalCostFallbackMessage", "unset", "ReadWrite", "string"),
    ("TariffCostCtrlr", None, "Currency", "XXX", "ReadWrite", "string"),
]
SET_BY_CMS = ["TariffFallbackMessage", "TotalCostFallbackMessage", "Currency"]


class PriceAnswers:
    """CostUpdated: Accepted (its answer has no fields), each kept in order."""

    costs = []

    @on("CostUpdated")
    def on_cost_updated(self, total_cost, transaction_id, **_):
        self.costs.append((transaction_id, total_cost))
        return call_result.CostUpdated()


async def until(what, condition):
    """Waits until `condition()` holds, at most WAIT_S; False (and unexpected) if it never did."""
    for _ in range(WAIT_S * 10):
        if condition():
            return True
        await asyncio.sleep(0.1)
    Unexpected.record(f"waited {WAIT_S}s for {what}")
    return False


def reading(wh, context, at):
    return [
        {
            "timestamp": at,
            "sampled_value": [
                {
                    "value": wh,
                    "measurand": "Energy.Active.Import.Register",
                    "context": context,
                    "unit_of_measure": {"unit": "Wh"},
                }
            ],
        }
    ]


async def prices(session, args):
    station = await session.connect()
    for name, evse, variable, value, mutability, data_type in TARIFF_COST_MODEL:
        station.model[(name, evse, variable)] = [value, mutability, data_type]
    await station.boot()
    await station.status_notification(1, 1, "Available")
    initial = {v: value for _, _, v, value, _, _ in TARIFF_COST_MODEL}

    def value(variable):
        return station.model[("TariffCostCtrlr", None, variable)][0]

    await until(
        "cms's SetVariables of TariffCostCtrlr",
        lambda: all(value(v) != initial[v] for v in SET_BY_CMS),
    )
    emit({"tariff_cost": {v: value(v) for v in SET_BY_CMS}})

    token = {"id_token": args.id_token, "type": "ISO14443"}
    for _ in range(WAIT_S * 2):
        answer = await station.send_call(call.Authorize(id_token=token))
        if answer is None or "personalMessage" in answer.get("idTokenInfo", {}):
            break
        await asyncio.sleep(0.5)
    else:
        Unexpected.record("no personalMessage in the Authorize answers")

    transaction_id = f"TX-PRICE-{args.identity}"
    info = {"transaction_id": transaction_id, "charging_state": "Charging"}
    started = minutes_ago(10)
    await station.send_call(
        call.TransactionEvent(
            event_type="Started",
            timestamp=started,
            trigger_reason="Authorized",
            seq_no=0,
            transaction_info=info,
            meter_value=reading(1000, "Transaction.Begin", started),
            id_token=token,
            evse={"id": 1, "connector_id": 1},
        )
    )
    middle = minutes_ago(5)
    await station.send_call(
        call.TransactionEvent(
            event_type="Updated",
            timestamp=middle,
            trigger_reason="MeterValuePeriodic",
            seq_no=1,
            transaction_info=info,
            meter_value=reading(3500, "Sample.Periodic", middle),
        )
    )
    await until("a running CostUpdated", lambda: len(station.costs) >= 1)
    running = len(station.costs)
    ended = now()
    await station.send_call(
        call.TransactionEvent(
            event_type="Ended",
            timestamp=ended,
            trigger_reason="StopAuthorized",
            seq_no=2,
            transaction_info={**info, "stopped_reason": "Local", "charging_state": "Idle"},
            meter_value=reading(6000, "Transaction.End", ended),
            id_token=token,
        )
    )
    await until("the final CostUpdated", lambda: len(station.costs) > running)
    await station.status_notification(1, 1, "Available")
    await session.disconnect()
