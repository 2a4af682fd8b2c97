#!/usr/bin/env python3
"""A deterministic smart-charging simulation against cms: ten EV charge points and a grid meter
on one site, in one asyncio process, on the real clock (about 50 s); the test of cms's dynamic
load balancing (tests/e2e/smart_charging.rs runs it; docs/img/smart-charging.png is its plot).

Usage:
  smart_charging_sim.py --ws-url ws://HOST:PORT/ocpp --setup SETUP.json --out DIR
                        [--rest-url http://HOST:PORT --token TOKEN --site SITE_UUID] [--hold]

SETUP.json describes the bench the caller registered in cms (chargers with security profile 1,
a ct_meter on the meter's charger, the site's smart-charging settings as PUT):
  {"settings": {"grid_limit_amps": 100, "min_amps": 6, "safety_margin_amps": 4,
                "fail_safe_amps": 8, "meter_timeout_seconds": 5, ...},
   "meter": {"identity": "...", "password": "..."},
   "chargers": [{"identity": "...", "password": "...", "car_max_amps": 32,
                 "connector_max_amps": 32}, ...]}
`connector_max_amps` is what the caller told cms (the connector's max_amperage, which the
balancer caps a share at); `car_max_amps` is what the car takes at most.

Each charge point is built on the `ocpp` package's ChargePoint (tests/interop/requirements.txt),
which validates every CALL and CALLRESULT against the OCPP 1.6 JSON schemas, and connects with
HTTP Basic auth (security profile 1). An EV charge point (one connector) boots, reports Available,
and when its car arrives: Preparing, StartTransaction, Charging. Its car draws min(effective
limit, car max) on each of three phases, the effective limit following OCPP 1.6 for the profiles
it holds: the TxProfile of its running transaction (highest stackLevel), else a TxDefaultProfile
of its connector, else one of connector 0, else none (the car's max); capped by a
ChargePointMaxProfile. A limit of 0 pauses it (SuspendedEVSE). It answers SetChargingProfile as a
charger does (Rejected for a TxProfile on connector 0, or with no transaction running, or for
another transaction; for a unit other than A), ClearChargingProfile, GetCompositeSchedule,
GetConfiguration, ChangeConfiguration, TriggerMessage and the rest a central system may send
after a boot. Every second it sends MeterValues of its connector in a transaction: Current.Import
(Outlet) per phase and Energy.Active.Import.Register. When its car is full it stops drawing
(SuspendedEV); unplugged after the next sample: StopTransaction, Finishing, Available.

The grid meter is a charge point carrying the site's ct_meter: every second (while it is not
silenced) it sends MeterValues on connector 0, Current.Import Inlet L1/L2/L3 = the site's base
load (L2 0.5 A and L3 1 A below L1) plus what the ten cars draw at that instant. The cars'
readings and the meter's are sent together, so that they describe the same instant.

Scenario (seconds from the moment every charge point has booted):
   0  base load 20 A; every charger Available
   2  ten cars arrive at once
   9  the base load steps to 55 A
  16  four served cars are full and stop drawing (32 A ones, so that both 10 A connectors stay);
      after the next sample (at 17) they are unplugged and leave
  23  the base load drops back to 20 A
  30  the meter stops sending
  41  it sends again
  47  end: checks, summary, timeline CSV and PNG

The arithmetic (grid_limit 100 A, safety margin 4 A, min 6 A, fail-safe 8 A, meter timeout 5 s;
available = grid_limit - margin - base load; connectors rated 32 A but two rated 10 A):
  after  2: 100 - 4 - 20 = 76 A for 10 cars: all fit at >= 6 A (10 x 6 = 60 <= 76),
            7.6 A each (below every cap). New transactions start at the TxDefaultProfile's 8 A:
            20 + 10 x 8 = 100 A, at the limit but not over it.
  after  9: 100 - 4 - 55 = 41 A: 41 / 6 = 6.83 >= 6 but 41 / 7 = 5.86 < 6, so 6 cars are
            served at 6.83 A (6.8 in OCPP's tenths) and 4 paused at 0 A. Grid 55 + 41 = 96 A.
            The served ones' cut from 7.6 A is under 1 A, yet it is needed: kept at 7.6 A they
            would draw 55 + 6 x 7.6 = 100.6 A, over the limit.
  after 16: four served cars leave; 6 remain (the 4 paused, 2 served): 41 / 6 = 6.83 A each,
            so every connector paused before is served now (paused ones come first). Their
            draw falls to 0 A before their StopTransaction, as a full car's does: the meter has
            shown it by the time their current is freed.
  after 23: 100 - 4 - 20 = 76 A for 6: 12.67 each would pass the two 10 A connectors' cap, so
            they get 10 A and the four others (76 - 20) / 4 = 14 A. Grid 20 + 76 = 96 A.
  after 30: the meter's last reading is about 0.5 s old; 5 s later it is stale and every
            charging connector gets the fail-safe 8 A: grid 20 + 6 x 8 = 68 A <= 100.
  after 41: back to 10, 10, 14, 14, 14, 14 A.
With 55 A of base load six cars at the fail-safe would draw 55 + 48 = 103 A: that is why the base
load drops before the meter goes quiet.

Checks (each failure is named in the summary; any makes the exit status 1):
  (1) outside 4 s after each event (for the meter stop: its timeout + 4 s) the grid current
      (highest phase) stays <= grid_limit;
  (2) once settled (4 s after an event, until the next), the served connectors' limits that
      are below their cap are equal within 1 A, and each served limit is within 1 A of the
      equal water-filling share, capped at the connector's max; the number served is the
      number that fit at >= min_amps;
  (3) every connector's limit in a transaction is 0 (paused) or >= min_amps, at every sample;
  (4) the counts above (10, 6 + 4 paused, 6, 6 with two capped), and every connector paused
      before the departures is served after them;
  (5) within meter_timeout + 4 s of the meter going quiet every charging connector is at
      fail_safe_amps, until it returns; within 4 s of its return they leave the fail-safe; with
      --rest-url, GET /api/v3/sites/{site}/smart-charging/status says `fail_safe` then
      `balancing` again (it is polled every 0.5 s throughout).

Output: one JSON object a line on stdout ({"event": ...} as the scenario goes), the last being
{"summary": {...}}; DIR/timeline.csv (every 250 ms: t, grid current, grid limit, base load, the
status endpoint's state, each connector's limit and draw), DIR/profiles.csv (every
SetChargingProfile received and how it was answered) and DIR/smart-charging.png.
With --hold the charge points keep going (cars charging, meter sending) after the summary until
stdin closes, so that the caller can read cms's status meanwhile.
Exit status: 0 when every check passed, 1 otherwise, 2 for bad arguments or setup.

The simulation's modules are beside this file: sim_scenario.py (the times above and the coroutine
that plays them), sim_site.py (the site and the run: connecting, sampling, recording, polling),
sim_station.py (a charge point's state and limit) and sim_charge_point.py (its OCPP handlers),
sim_checks.py (the checks), sim_report.py (the summary and the CSVs), sim_plot.py (the PNG,
drawn with png_plot.py).
"""

import argparse
import asyncio
import json
import logging
import os
import sys

# The simulation's modules are beside this file. Python puts a script's directory first on
# sys.path, but not under -P or PYTHONSAFEPATH; and no __pycache__ is left in the tree for them.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sim_report import emit  # noqa: E402
from sim_site import Sim  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ws-url", required=True, help="ws://HOST:PORT/ocpp (identity appended)")
    parser.add_argument("--setup", required=True, help="the bench, as JSON (see above)")
    parser.add_argument("--out", required=True, help="where timeline.csv and the PNG go")
    parser.add_argument("--rest-url", help="http://HOST:PORT of cms's REST API")
    parser.add_argument("--token", help="a token with sites:read")
    parser.add_argument("--site", help="the site's uuid")
    parser.add_argument("--hold", action="store_true", help="keep going until stdin closes")
    args = parser.parse_args(argv[1:])
    if args.rest_url and not (args.token and args.site):
        parser.error("--rest-url needs --token and --site")
    try:
        with open(args.setup) as text:
            setup = json.load(text)
        for key in ("grid_limit_amps", "min_amps", "safety_margin_amps", "fail_safe_amps",
                    "meter_timeout_seconds"):
            float(setup["settings"][key])
        if not setup["chargers"] or "identity" not in setup["meter"]:
            raise ValueError("no chargers or no meter")
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"bad --setup: {error!r}", file=sys.stderr)
        return 2
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    sim = Sim(args, setup)
    summary = asyncio.run(sim.run())
    if summary is None:
        emit({"summary": {"ok": False, "failures": sim.failures.listed()}})
        print(f"FAIL: {sim.failures.listed()}", file=sys.stderr)
        return 1
    if not summary["ok"]:
        print("FAIL smart charging simulation:", file=sys.stderr)
        for failure in summary["failures"]:
            print(f"  {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
