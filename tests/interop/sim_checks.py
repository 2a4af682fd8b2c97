"""The checks of the smart-charging simulation, (1) to (5) of smart_charging_sim.py's docstring,
over the timeline it recorded every 250 ms and the status endpoint's answers. Failures collects
what failed, here and anywhere else in the run (a CALL unanswered, a connection lost).
"""

import math

from sim_scenario import (
    ARRIVE_AT,
    BASE_DROP_AT,
    BASE_STEP_AT,
    DEPART_AT,
    END_AT,
    EPSILON,
    LEAVING,
    METER_BACK_AT,
    METER_STOP_AT,
    REACTION,
)

# How far a limit may be from the share it should be, and equal shares from each other (A).
TOLERANCE = 1.0


class Failures:
    """The checks that failed, each named once with how often it failed and its first case."""

    def __init__(self):
        self.seen = {}

    def add(self, check, detail):
        entry = self.seen.setdefault(check, {"check": check, "count": 0, "first": detail})
        entry["count"] += 1

    def listed(self):
        return [
            f"{e['check']}: {e['first']}"
            + (f" (and {e['count'] - 1} more)" if e["count"] > 1 else "")
            for e in self.seen.values()
        ]


def reaction_windows(sim):
    """The spans after each event when the limits may still be moving."""
    timeout = float(sim.settings["meter_timeout_seconds"])
    return [
        (ARRIVE_AT, ARRIVE_AT + REACTION),
        (BASE_STEP_AT, BASE_STEP_AT + REACTION),
        (DEPART_AT, DEPART_AT + REACTION),
        (BASE_DROP_AT, BASE_DROP_AT + REACTION),
        (METER_STOP_AT, METER_STOP_AT + timeout + REACTION),
        (METER_BACK_AT, METER_BACK_AT + REACTION),
    ]


def settled_phases(sim):
    """(name, start, end) of each phase once the limits have settled, until the next event."""
    timeout = float(sim.settings["meter_timeout_seconds"])
    return [
        ("arrivals", ARRIVE_AT + REACTION, BASE_STEP_AT),
        ("base load step", BASE_STEP_AT + REACTION, DEPART_AT),
        ("departures", DEPART_AT + REACTION, BASE_DROP_AT),
        ("base load drop", BASE_DROP_AT + REACTION, METER_STOP_AT),
        ("fail-safe", METER_STOP_AT + timeout + REACTION, METER_BACK_AT),
        ("meter returns", METER_BACK_AT + REACTION, END_AT),
    ]


def rows_between(sim, start, end):
    return [r for r in sim.rows if start - 1e-9 <= r["t"] < end - 0.1]


def check(sim):
    """Every check; returns the settled phases' summaries, the connectors paused before the
    departures, and what the status endpoint said."""
    settings = sim.settings
    grid_limit = float(settings["grid_limit_amps"])
    margin = float(settings["safety_margin_amps"])
    min_amps = float(settings["min_amps"])
    fail_safe = float(settings["fail_safe_amps"])
    failures = sim.failures
    caps = {ev.identity: ev.connector_max for ev in sim.evs}
    windows = reaction_windows(sim)

    # (1) The grid stays under its limit outside the windows after the events.
    for row in sim.rows:
        if row["t"] > END_AT:
            break
        if any(a <= row["t"] < b for a, b in windows):
            continue
        if row["grid"] > grid_limit + 1e-6:
            held = {i: lim for i, lim in row["limits"].items() if lim is not None}
            failures.add(
                "(1) grid over its limit",
                f"t={row['t']:.2f}s grid {row['grid']:.2f} A > {grid_limit:g} A, base load "
                f"{row['base']:g} A, the connectors' limits {held}",
            )

    # (3) Every limit is 0 or >= min_amps.
    for row in sim.rows:
        for identity, limit in row["limits"].items():
            if limit is not None and EPSILON < limit < min_amps - EPSILON:
                failures.add(
                    "(3) a limit between 0 and min_amps",
                    f"t={row['t']:.2f}s {identity} at {limit:g} A",
                )

    # (2), (4), (5): the settled phases.
    phases = {}
    for name, start, end in settled_phases(sim):
        rows = rows_between(sim, start, end)
        if not rows:
            failures.add("timeline", f"no samples in the settled phase {name}")
            continue
        phases[name] = check_phase(
            sim, name, start, end, rows, grid_limit, margin, min_amps, fail_safe, caps
        )

    # (4) Paused before the departures, served after them.
    before = [r for r in sim.rows if r["t"] < DEPART_AT - 0.1]
    paused_before = []
    if before:
        last = before[-1]
        paused_before = [
            i for i, limit in last["limits"].items() if limit is not None and limit <= EPSILON
        ]
    if not paused_before:
        failures.add("(4) paused first", "no connector was paused before the departures")
    for row in rows_between(sim, DEPART_AT + REACTION, BASE_DROP_AT):
        for identity in paused_before:
            limit = row["limits"].get(identity)
            if limit is not None and limit <= EPSILON:
                failures.add(
                    "(4) paused first",
                    f"t={row['t']:.2f}s {identity}, paused before the departures, "
                    "is still paused after them",
                )

    # The caps: after the base load drop a 10 A connector is held at its cap.
    drop = phases.get("base load drop")
    if drop and not drop["capped"]:
        failures.add("caps", "no connector was held at its cap after the base load drop")

    rest = check_rest(sim)
    return phases, paused_before, rest


def check_phase(sim, name, start, end, rows, grid_limit, margin, min_amps, fail_safe, caps):
    """(2), (4), (5) over one settled phase's rows; returns its summary as of the last row."""
    failures = sim.failures
    summary = None
    cars = len(sim.evs) if start < DEPART_AT else len(sim.evs) - LEAVING
    for row in rows:
        charging = {i: lim for i, lim in row["limits"].items() if row["draws"][i] is not None}
        label = f"{name} (t={row['t']:.2f}s)"
        if len(charging) != cars:
            failures.add(f"{name}: cars charging", f"{label}: {len(charging)}, not {cars}")
        if name == "fail-safe":
            # (5) Every charging connector at fail_safe_amps while the meter is quiet.
            off = {
                i: lim
                for i, lim in charging.items()
                if lim is None or abs(lim - fail_safe) > EPSILON
            }
            if off:
                failures.add(
                    "(5) fail-safe",
                    f"{label}: not at {fail_safe:g} A: {off}",
                )
            summary = {
                "window": [start, end],
                "charging": len(charging),
                "limits": charging,
            }
            continue
        available = grid_limit - margin - row["base"]
        fit = min(len(charging), int(math.floor(available / min_amps + 1e-9)))
        served = {i: lim for i, lim in charging.items() if lim is None or lim > EPSILON}
        paused = [i for i in charging if i not in served]
        level = water_fill(available, [caps[i] for i in served])
        expected = {i: min(caps[i], level) for i in served}
        if len(served) != fit:
            failures.add(
                f"(4) {name}: connectors served",
                f"{label}: {len(served)} served, {len(paused)} paused; {fit} fit in "
                f"{available:g} A at >= {min_amps:g} A: {charging}",
            )
        for identity, limit in served.items():
            if limit is None or abs(limit - expected[identity]) > TOLERANCE:
                failures.add(
                    f"(2) {name}: a share",
                    f"{label}: {identity} at {limit} A, expected {expected[identity]:.2f} A "
                    f"(available {available:g} A): {charging}",
                )
        uncapped = [
            limit
            for i, limit in served.items()
            if limit is not None and expected[i] < caps[i] - EPSILON
        ]
        if uncapped and max(uncapped) - min(uncapped) > TOLERANCE:
            failures.add(
                f"(2) {name}: equal shares",
                f"{label}: limits {sorted(uncapped)} differ by more than {TOLERANCE:g} A",
            )
        for identity in paused:
            if row["draws"][identity] > EPSILON:
                failures.add(f"{name}: paused draws", f"{label}: {identity} draws while paused")
        summary = {
            "window": [start, end],
            "available_amps": round(available, 2),
            "fit": fit,
            "served": len(served),
            "paused": len(paused),
            "share_amps": None if math.isinf(level) else round(level, 2),
            "capped": sorted(i for i in served if expected[i] < level - EPSILON),
            "limits": charging,
        }
    return summary


def check_rest(sim):
    """(5) as the status endpoint tells it, and its state in the settled phases."""
    if not sim.args.rest_url:
        return {"checked": False}
    failures = sim.failures
    timeout = float(sim.settings["meter_timeout_seconds"])
    transitions = []
    for t, state, _ in sim.polls:
        if not transitions or transitions[-1][1] != state:
            transitions.append([t, state])
    fail_safe_polls = [
        t
        for t, state, _ in sim.polls
        if state == "fail_safe" and METER_STOP_AT <= t <= METER_BACK_AT + 1.0
    ]
    if not fail_safe_polls:
        failures.add(
            "(5) status endpoint",
            f"never said fail_safe while the meter was quiet: {transitions}",
        )
    elif fail_safe_polls[0] > METER_STOP_AT + timeout + REACTION:
        failures.add(
            "(5) status endpoint",
            f"said fail_safe only at t={fail_safe_polls[0]}s: {transitions}",
        )
    for name, start, end in settled_phases(sim):
        wanted = "fail_safe" if name == "fail-safe" else "balancing"
        polled = [(t, s) for t, s, _ in sim.polls if start <= t < end - 0.1]
        if not polled:
            failures.add("(5) status endpoint", f"not polled in the settled phase {name}")
        wrong = [(t, s) for t, s in polled if s != wanted]
        if wrong:
            failures.add(
                "(5) status endpoint",
                f"{name}: expected {wanted}, saw {wrong[:3]}: {transitions}",
            )
    return {"checked": True, "transitions": transitions}


def water_fill(available, caps):
    """The equal share of `available` among connectors capped at `caps`: the level every
    uncapped one gets (inf when every one is capped)."""
    remaining = available
    ordered = sorted(caps)
    for n, cap in enumerate(ordered):
        share = remaining / (len(ordered) - n)
        if cap >= share:
            return share
        remaining -= cap
    return math.inf

