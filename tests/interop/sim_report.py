"""What a smart-charging run tells its caller: one JSON object a line on stdout (the events, then
the summary the Rust test reads), and in the output directory timeline.csv, profiles.csv and the
plot.
"""

import csv
import json
import os
import time

from sim_checks import check
from sim_plot import plot


def emit(line):
    print(json.dumps(line, separators=(",", ":")), flush=True)


def fmt(value):
    return "" if value is None else f"{value:.2f}"


def report(sim):
    """Checks the run, writes its files and prints its summary, which it returns."""
    phases, paused_before, rest = check(sim)
    out = sim.args.out
    os.makedirs(out, exist_ok=True)
    csv_path = os.path.join(out, "timeline.csv")
    png_path = os.path.join(out, "smart-charging.png")
    write_timeline(sim, csv_path)
    write_profiles(sim, os.path.join(out, "profiles.csv"))
    plot(png_path, sim)
    statuses = {}
    for entry in sim.profile_log:
        statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
    summary = {
        "ok": not sim.failures.seen,
        "failures": sim.failures.listed(),
        "settings": sim.settings,
        "events": sim.events,
        "phases": phases,
        "paused_before_departures": paused_before,
        "final": final(sim),
        "rest": rest,
        "calls": sim.calls,
        "profiles_answered": statuses,
        "rejected": [e for e in sim.profile_log if e["status"] == "Rejected"][:10],
        "csv": csv_path,
        "png": png_path,
    }
    emit({"summary": summary})
    return summary


def final(sim):
    """The bench as the summary leaves it, for the caller to hold cms's status against (the
    chargers go on with --hold)."""
    phases = sim.grid_phases()
    return {
        "grid_amps": round(sim.grid(), 2),
        "grid_phases": {k: round(v, 2) for k, v in phases.items()},
        "base_load_amps": sim.base_load,
        "connectors": {
            ev.identity: {
                "transaction_id": ev.transaction_id,
                "limit_amps": ev.limit(),
                "draw_amps": ev.draw(),
                "connector_max_amps": ev.connector_max,
            }
            for ev in sim.evs
            if ev.charging
        },
        "default_limits": {
            st.identity: st.top_limit(time.time(), "TxDefaultProfile", 0)
            for st in sim.evs + [sim.meter]
        },
    }


def write_timeline(sim, path):
    identities = [ev.identity for ev in sim.evs]
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["t", "grid_amps", "grid_limit_amps", "base_load_amps", "meter_sending", "state"]
            + [f"{i}_limit_amps" for i in identities]
            + [f"{i}_draw_amps" for i in identities]
        )
        for row in sim.rows:
            writer.writerow(
                [f"{row['t']:.2f}", fmt(row["grid"]), fmt(row["grid_limit"]), fmt(row["base"]),
                 int(row["meter_sending"]), row["state"]]
                + [fmt(row["limits"][i]) for i in identities]
                + [fmt(row["draws"][i]) for i in identities]
            )


def write_profiles(sim, path):
    fields = ["t", "identity", "connector", "purpose", "stack", "id", "transaction_id", "unit",
              "limit", "status", "why"]
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        writer.writerows(sim.profile_log)
