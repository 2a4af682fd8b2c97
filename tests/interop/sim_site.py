"""The simulated site and its run: the grid meter's and the EV chargers' Stations, the base load
and the grid current they make, the run's clock, and its tasks: connecting and booting, every
second's readings, the timeline recorded every 250 ms and the status endpoint polled every 0.5 s.
"""

import asyncio
import base64
import json
import sys
import threading
import urllib.error
import urllib.request

import websockets
from ocpp.v16.enums import ChargePointStatus, RegistrationStatus

from sim_charge_point import SimChargePoint, boot_request
from sim_checks import Failures
from sim_report import emit, report
from sim_scenario import BASE_LOAD, SAMPLE_EVERY, play
from ocpp201_smart import Station201
from sim_station import Station

RECORD_EVERY = 0.25
STATUS_EVERY = 0.5
# The base load per phase is skewed a little: L1 carries the most.
PHASE_SKEW = {"L1": 0.0, "L2": -0.5, "L3": -1.0}
VOLTAGE = 230.0

OPEN_TIMEOUT_S = 5
BOOT_TIMEOUT_S = 20


class Sim:
    """The site, as SETUP.json describes it, and a run of the scenario on it."""

    def __init__(self, args, setup):
        self.args = args
        self.settings = setup["settings"]
        self.failures = Failures()
        self.base_load = BASE_LOAD
        self.meter_sending = True
        meter = setup["meter"]
        self.meter = Station(self, meter["identity"], meter["password"], 0, 0, is_meter=True)
        # `"ocpp": "2.0.1"`: a 2.0.1 station (ocpp201_smart.py) on the same site.
        self.evs = [
            (Station201 if c.get("ocpp") == "2.0.1" else Station)(
                self,
                c["identity"],
                c["password"],
                float(c["car_max_amps"]),
                float(c.get("connector_max_amps", 32)),
            )
            for c in setup["chargers"]
        ]
        self.loop = None
        self.t0 = None
        self.rows = []
        self.events = []
        self.polls = []  # (t, state or an error, data)
        self.calls = {}
        self.profile_log = []
        self.sockets = []
        self.stopping = False
        self.background = set()

    # --- clock and bookkeeping -------------------------------------------------------------

    def t(self):
        return self.loop.time() - self.t0

    def spawn(self, coroutine):
        """Runs `coroutine` on its own, held in a set until it ends: the loop keeps only a weak
        reference to a task."""
        task = asyncio.create_task(coroutine)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def until(self, at):
        delay = at - self.t()
        if delay > 0:
            await asyncio.sleep(delay)

    def event(self, name, at, **detail):
        self.events.append({"name": name, "at": at, "actual": round(self.t(), 3)})
        emit({"event": name, "t": round(self.t(), 3), **detail})

    def count_call(self, action):
        self.calls[action] = self.calls.get(action, 0) + 1

    def logged_at(self):
        """The run's time for profiles.csv; None for what comes before the clock starts."""
        return round(self.t(), 3) if self.t0 is not None else None

    def log_profile(self, station, connector_id, profile, status, why):
        periods = profile["charging_schedule"].get("charging_schedule_period") or [{}]
        self.profile_log.append(
            {
                "t": self.logged_at(),
                "identity": station.identity,
                "connector": connector_id,
                "purpose": profile.get("charging_profile_purpose"),
                "stack": profile.get("stack_level"),
                "id": profile.get("charging_profile_id"),
                "transaction_id": profile.get("transaction_id"),
                "unit": profile["charging_schedule"].get("charging_rate_unit"),
                "limit": periods[0].get("limit"),
                "status": status,
                "why": why or "",
            }
        )

    def log_clear(self, station, id, connector_id, purpose, cleared):
        self.profile_log.append(
            {
                "t": self.logged_at(),
                "identity": station.identity,
                "connector": connector_id,
                "purpose": f"Clear {purpose or ''}".strip(),
                "stack": None,
                "id": id,
                "transaction_id": None,
                "unit": None,
                "limit": None,
                "status": "Accepted" if cleared else "Unknown",
                "why": f"{cleared} cleared",
            }
        )

    def grid_phases(self):
        drawn = sum(ev.draw() for ev in self.evs)
        return {phase: self.base_load + skew + drawn for phase, skew in PHASE_SKEW.items()}

    def grid(self):
        return max(self.grid_phases().values())

    # --- connecting ------------------------------------------------------------------------

    async def connect(self, station):
        url = f"{self.args.ws_url.rstrip('/')}/{station.identity}"
        basic = f"{station.identity}:{station.password}".encode()
        ws = await websockets.connect(
            url,
            subprotocols=[getattr(station, "subprotocol", "ocpp1.6")],
            additional_headers={"Authorization": "Basic " + base64.b64encode(basic).decode()},
            open_timeout=OPEN_TIMEOUT_S,
            proxy=None,
        )
        self.sockets.append(ws)
        v201 = isinstance(station, Station201)
        station.cp = station.charge_point(ws) if v201 else SimChargePoint(station, ws)
        self.spawn(self.serve(station))
        answer = await station.send(station.boot_request() if v201 else boot_request(station))
        if answer is None or answer.status != RegistrationStatus.accepted:
            raise RuntimeError(f"{station.identity}: BootNotification answered {answer!r}")
        await station.status_notification(0, ChargePointStatus.available)
        await station.status_notification(1, ChargePointStatus.available)

    async def serve(self, station):
        try:
            await station.cp.start()
        except websockets.ConnectionClosed as closed:
            if not self.stopping:
                self.failures.add("connection", f"{station.identity} was disconnected: {closed}")
        except Exception as error:  # a bug here must not pass silently
            self.failures.add("connection", f"{station.identity}: {error!r}")

    # --- the periodic tasks ----------------------------------------------------------------

    async def sampler(self):
        """Every second, at k + 0.5 s: every car in a transaction and the meter report, together."""
        k = 0
        while True:
            await self.until(k * SAMPLE_EVERY + 0.5)
            k += 1
            readings = [(ev, ev.reading()) for ev in self.evs if ev.charging]
            if self.meter_sending:
                readings.append((self.meter, self.meter.reading()))
            for station, request in readings:
                self.spawn(station.send(request))

    async def recorder(self):
        """The timeline, a row every 250 ms; each car's energy counts up with its draw."""
        k = 0
        while True:
            await self.until(k * RECORD_EVERY)
            t = k * RECORD_EVERY
            k += 1
            if k > 1:
                for ev in self.evs:
                    ev.energy_wh += ev.draw() * VOLTAGE * 3 * RECORD_EVERY / 3600
            row = {
                "t": t,
                "grid": self.grid(),
                "grid_limit": float(self.settings["grid_limit_amps"]),
                "base": self.base_load,
                "meter_sending": self.meter_sending,
                "state": self.polls[-1][1] if self.polls else "",
                "limits": {},
                "draws": {},
            }
            for ev in self.evs:
                row["limits"][ev.identity] = ev.limit() if ev.charging else None
                row["draws"][ev.identity] = ev.draw() if ev.charging else None
            self.rows.append(row)

    def fetch_status(self):
        base = self.args.rest_url.rstrip("/")
        url = f"{base}/api/v3/sites/{self.args.site}/smart-charging/status"
        headers = {"Authorization": f"Bearer {self.args.token}", "Accept": "application/json"}
        request = urllib.request.Request(url, headers=headers)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=2) as answer:
                body = json.loads(answer.read())
            return body.get("data", {}).get("state", "?"), body
        except urllib.error.HTTPError as error:
            return f"http {error.code}", None
        except (OSError, ValueError) as error:
            return f"error {type(error).__name__}", None

    async def status_poller(self):
        k = 0
        while True:
            await self.until(k * STATUS_EVERY + 0.1)
            k += 1
            t = self.t()
            state, body = await asyncio.to_thread(self.fetch_status)
            self.polls.append((round(t, 3), state, body))

    # --- the run ---------------------------------------------------------------------------

    async def run(self):
        self.loop = asyncio.get_running_loop()
        stations = [self.meter] + self.evs
        try:
            await asyncio.wait_for(
                asyncio.gather(*(self.connect(s) for s in stations)), BOOT_TIMEOUT_S
            )
        except (
            OSError,
            asyncio.TimeoutError,
            websockets.WebSocketException,
            RuntimeError,
        ) as error:
            self.failures.add("boot", f"{type(error).__name__}: {error}")
            return None
        self.t0 = self.loop.time()
        emit({"event": "booted", "t": 0, "chargers": [s.identity for s in stations]})
        periodic = [
            asyncio.create_task(self.sampler()),
            asyncio.create_task(self.recorder()),
        ]
        if self.args.rest_url:
            periodic.append(asyncio.create_task(self.status_poller()))
        await play(self)
        result = report(self)
        if self.args.hold:
            # Everything goes on (the meter sending, the cars charging) until stdin closes.
            await hold_until_stdin_closes()
        self.stopping = True
        for task in periodic:
            task.cancel()
        for ws in self.sockets:
            await ws.close()
        return result


async def hold_until_stdin_closes():
    loop = asyncio.get_running_loop()
    closed = asyncio.Event()

    def read():
        for _ in sys.stdin:
            pass
        loop.call_soon_threadsafe(closed.set)

    threading.Thread(target=read, daemon=True).start()
    await closed.wait()
