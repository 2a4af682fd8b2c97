"""The scenario of the smart-charging simulation: when each event happens and what it does
(smart_charging_sim.py's docstring tells it, with the arithmetic the checks hold cms to), and
the pace of the bench. The checks and the plot read the same times, hence a module of its own.
"""

import asyncio

# The scenario, in seconds from the moment every charge point has booted.
ARRIVE_AT = 2.0
BASE_STEP_AT = 9.0
DEPART_AT = 16.0
# The leaving cars stop drawing at DEPART_AT, and are unplugged after the next sample.
UNPLUG_AFTER = 1.0
BASE_DROP_AT = 23.0
METER_STOP_AT = 30.0
METER_BACK_AT = 41.0
END_AT = 47.0
BASE_LOAD = 20.0
STEPPED_BASE_LOAD = 55.0
LEAVING = 4
# How long cms may take to react to an event: the meter's sample interval (1 s) + the balancer's
# poll (0.5 s) + the materialiser (0.1 s) + the SetChargingProfile round trip + the charger's
# next sample (1 s), with room to spare.
REACTION = 4.0
SAMPLE_EVERY = 1.0
# A limit this close to 0 A is a pause.
EPSILON = 0.01


async def play(sim):
    """The events, each at its time, until just after END_AT."""
    await sim.until(ARRIVE_AT)
    sim.event("arrivals", ARRIVE_AT, cars=len(sim.evs))
    await asyncio.gather(*(ev.arrive() for ev in sim.evs))

    await sim.until(BASE_STEP_AT)
    sim.base_load = STEPPED_BASE_LOAD
    sim.event("base load step", BASE_STEP_AT, base_load=sim.base_load)

    await sim.until(DEPART_AT)
    leaving = choose_leaving(sim)
    sim.event("departures", DEPART_AT, leaving=[ev.identity for ev in leaving])
    await asyncio.gather(*(ev.stop_drawing() for ev in leaving))
    await sim.until(DEPART_AT + UNPLUG_AFTER)
    await asyncio.gather(*(ev.leave() for ev in leaving))

    await sim.until(BASE_DROP_AT)
    sim.base_load = BASE_LOAD
    sim.event("base load drop", BASE_DROP_AT, base_load=sim.base_load)

    await sim.until(METER_STOP_AT)
    sim.meter_sending = False
    sim.event("meter stops", METER_STOP_AT)

    await sim.until(METER_BACK_AT)
    sim.meter_sending = True
    sim.event("meter returns", METER_BACK_AT)

    await sim.until(END_AT + 0.01)


def choose_leaving(sim):
    """Four served cars, 32 A ones first (so that the 10 A connectors stay), by identity."""
    charging = [ev for ev in sim.evs if ev.charging]
    served = [ev for ev in charging if (ev.limit() is None or ev.limit() > EPSILON)]
    served.sort(key=lambda ev: (ev.connector_max < 32, ev.identity))
    if len(served) < LEAVING:
        sim.failures.add(
            "departures",
            f"only {len(served)} cars served before the departures, {LEAVING} were to leave",
        )
        served += [ev for ev in charging if ev not in served]
    return served[:LEAVING]
