"""`loadtest/open-loop`: chargers reading their meters on a fixed schedule against the bare
server, `cms up`, one `cms gateway` with the broker, and the chain (gateway, broker, API
replicas on PostgreSQL), rate after rate: the highest rate answered within 50 ms at p99, every
process's CPU a frame, how fresh a reading is on every replica, and how fast one API replica
takes a backlog (docs/performance.md, "The fleet deployment, open loop")."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import (RELEASE, ROOT, Failed, Processes, children_of, cpu_s,  # noqa: E402
                       free_port, get_text, listener_pid, metric_sum, run, wait_until)

TARGETS = ("bare", "cms-up", "gateway", "chain")
PROBES = 4
# What counts as sustained: every reading answered within this at p99, the offered rate
# answered (within 3%), no error.
P99_MS = 50.0
ANSWERED = 0.97


def log(message):
    print(f"open-loop: {message}", file=sys.stderr, flush=True)


def options():
    p = argparse.ArgumentParser(prog="loadtest/open-loop", description=__doc__)
    p.add_argument("--targets", default=",".join(TARGETS),
                   help="of bare, cms-up, gateway (one cms gateway and the broker alone), "
                        "chain (gateway, broker, API replicas, PostgreSQL)")
    p.add_argument("--chargers", type=int, default=1000)
    p.add_argument("--rates", default="2.5,5,10,20,40,80",
                   help="readings a second per charger, tried in turn until one is not "
                        "sustained; then once halfway back")
    p.add_argument("--duration", type=int, default=15, help="seconds each rate is held")
    p.add_argument("--replicas", type=int, default=2, help="API replicas of the chain")
    p.add_argument("--partitions", type=int, default=16)
    p.add_argument("--broker-storage", default="memory", choices=("memory", "sqlite"),
                   help="tansu's storage: in memory, or a SQLite file (libsql)")
    p.add_argument("--kafka-linger", default="5ms")
    p.add_argument("--kafka-compression", default="lz4")
    p.add_argument("--api-arg", action="append", default=[],
                   help="a further argument of every `cms api` (repeatable, in order), e.g. "
                        "--api-arg=--kafka-option --api-arg=fetch.min.bytes=65536")
    p.add_argument("--gateway-arg", action="append", default=[],
                   help="a further flag of the `cms gateway`, likewise")
    p.add_argument("--no-drain", action="store_true",
                   help="skip timing one API replica through the gateway's backlog")
    p.add_argument("--no-build", action="store_true", help="(read by the wrapper)")
    p.add_argument("--out", default=str(ROOT / "target" / "open-loop" / "open-loop.json"))
    p.add_argument("--keep", action="store_true", help="keep the logs and data")
    return p.parse_args()


class Run:
    """One sitting: the processes, the registered chargers, the figures."""

    def __init__(self, args, work):
        self.args, self.work, self.procs = args, work, Processes()
        self.rates = [float(r) for r in args.rates.split(",")]
        self.results = {"chargers": args.chargers, "duration_s": args.duration,
                        "kafka_linger": args.kafka_linger,
                        "kafka_compression": args.kafka_compression, "targets": {}}
        self.ids = work / "chargers.txt"
        with open(self.ids, "w") as f:
            f.writelines(f"LOAD-{n:05}\n" for n in range(1, args.chargers + 1))
            f.writelines(f"PROBE-{n:05}\n" for n in range(1, PROBES + 1))

    # --- the targets ---------------------------------------------------------------------

    def bare(self):
        port = free_port()
        p = self.procs.start("bare", [str(RELEASE / "cms-bare-central"), "--listen",
                                      f"127.0.0.1:{port}"], self.work / "bare.log")
        wait_until("bare listening", p, lambda: listener_pid(port) is not None, 20)
        self.ladder("bare", lambda rate: self.step("bare", f"127.0.0.1:{port}", rate,
                                                   {"bare": [p.pid]}))
        self.procs.stop(p)

    def cms_up(self):
        data = self.work / "up-data"
        self.register(["--data-dir", str(data)])
        token = self.token(["--data-dir", str(data)])
        ocpp, http = free_port(), free_port()
        p = self.procs.start("cms up", [str(RELEASE / "cms"), "up", "--data-dir", str(data),
                                        "--ocpp-addr", f"127.0.0.1:{ocpp}",
                                        "--http-addr", f"127.0.0.1:{http}"],
                             self.work / "cms-up.log")
        wait_until("cms up ready", p, lambda: get_text(f"http://127.0.0.1:{http}/readyz")[0] == 200)
        self.ladder("cms-up", lambda rate: self.step(
            "cms-up", f"127.0.0.1:{ocpp}", rate, {"cms": [p.pid]}, apis=[http], token=token,
            threads_of=p.pid))
        self.procs.stop(p)

    def kafka(self, targets):
        """`gateway`: one gateway and the broker alone (the API that fed it the registry
        stopped), then one API replica timed through the backlog the gateway left. `chain`:
        the gateway and the API replicas, on a broker and database of their own for each
        rate: the test broker (tansu's in-memory storage) lists a partition's every batch on
        each fetch, so its cost grows with what it holds, and a rate must not pay for those
        before it."""
        if "gateway" in targets:
            d = self.deploy(replicas=1)
            self.procs.stop(d["apis"].pop()[0])
            watch = {"gateway": [d["gateway"].pid], "broker": [d["broker"].pid]}
            self.ladder("gateway", lambda rate: self.step(
                "gateway", d["ocpp"], rate, watch, threads_of=d["gateway"].pid,
                broker_port=d["broker_port"]))
            if not self.args.no_drain:
                self.results["drain"] = self.drain(d["database"], d["postgres"])
            self.undeploy(d)
        if "chain" in targets:
            self.ladder("chain", self.chain_step)

    def chain_step(self, rate):
        d = self.deploy(replicas=self.args.replicas)
        apis = d["apis"]
        watch = {"gateway": [d["gateway"].pid], "broker": [d["broker"].pid]}
        watch.update({api.name: [api.pid] for api, _ in apis})
        if d["postgres"]:
            watch["postgres"] = [d["postgres"]] + children_of(d["postgres"])
        step = self.step("chain", d["ocpp"], rate, watch, apis=[h for _, h in apis],
                         token=d["token"], threads_of=d["gateway"].pid,
                         metrics=[f"http://127.0.0.1:{h}/metrics" for _, h in apis]
                         + [f"http://127.0.0.1:{d['ops']}/metrics"])
        self.undeploy(d)
        return step

    def deploy(self, replicas):
        """A fresh broker and database, the chargers registered, `replicas` API replicas and
        one gateway, all ready."""
        broker_port = free_port()
        broker = self.procs.start("tansu", ["tansu", "broker", "--listener-url",
                                            f"tcp://127.0.0.1:{broker_port}",
                                            "--advertised-listener-url",
                                            f"tcp://127.0.0.1:{broker_port}",
                                            "--storage-engine", self.broker_storage()],
                                  self.work / "tansu.log", cwd=self.work)
        wait_until("the broker listening", broker, lambda: listener_pid(broker_port), 30)
        self.brokers = f"127.0.0.1:{broker_port}"
        database = self.database()
        self.register(["--database-url", database])
        token = self.token(["--database-url", database])
        postgres = listener_pid(int(database.rsplit(":", 1)[1].split("/")[0]))
        apis = [self.start_api(database, n) for n in range(1, replicas + 1)]
        gateway, ocpp, ops = self.start_gateway()
        return {"broker": broker, "broker_port": broker_port, "database": database,
                "token": token, "postgres": postgres, "apis": apis, "gateway": gateway,
                "ocpp": ocpp, "ops": ops}

    def undeploy(self, d):
        for api, _ in d["apis"]:
            self.procs.stop(api)
        self.procs.stop(d["gateway"])
        self.procs.stop(d["broker"])

    def broker_storage(self):
        if self.args.broker_storage == "sqlite":
            return "sqlite://tansu.db"  # in the broker's working directory
        return "memory://tansu/"

    def kafka_flags(self):
        return ["--kafka-brokers", self.brokers, "--kafka-partitions",
                str(self.args.partitions), "--kafka-linger", self.args.kafka_linger,
                "--kafka-compression", self.args.kafka_compression]

    def start_api(self, database, n):
        http = free_port()
        api = self.procs.start(f"api-{n}", [str(RELEASE / "cms"), "api", "--database-url",
                                            database, "--http-addr", f"127.0.0.1:{http}"]
                               + self.kafka_flags() + self.args.api_arg,
                               self.work / f"api-{n}.log")
        wait_until(f"api-{n} ready", api,
                   lambda: get_text(f"http://127.0.0.1:{http}/readyz")[0] == 200, 300)
        return api, http

    def start_gateway(self):
        ocpp, ops = free_port(), free_port()
        gw = self.procs.start("gateway", [str(RELEASE / "cms"), "gateway", "--ocpp-addr",
                                          f"127.0.0.1:{ocpp}", "--http-addr",
                                          f"127.0.0.1:{ops}", "--node-id", "gw-1",
                                          "--heartbeat-interval", "300s"]
                              + self.kafka_flags() + self.args.gateway_arg,
                              self.work / "gateway.log")
        # Ready once it has read the whole registry: it then knows every charger.
        wait_until("the gateway ready", gw,
                   lambda: get_text(f"http://127.0.0.1:{ops}/readyz")[0] == 200, 120)
        return gw, f"127.0.0.1:{ocpp}", ops

    def database(self):
        base = os.environ.get("CMS_TEST_POSTGRES_URL")
        if not base:
            raise Failed("no PostgreSQL: CMS_TEST_POSTGRES_URL is not set (the wrapper sets it)")
        name = f"open_loop_{os.getpid()}_{int(time.time())}"
        psql = sorted(Path("/usr/lib/postgresql").glob("*/bin/psql"))[-1]
        run([str(psql), base, "-qc", f"CREATE DATABASE {name}"], "CREATE DATABASE", 30)
        return base.rsplit("/", 1)[0] + "/" + name

    def register(self, store):
        run([str(RELEASE / "cms"), "charger", "import", "--file", str(self.ids),
             "--security-profile", "0", "--quota-chargers", str(self.args.chargers + PROBES)]
            + store, "cms charger import", 300)

    def token(self, store):
        out = run([str(RELEASE / "cms"), "token", "create", "--email", "probe@example.com",
                   "--name", "open-loop", "--scopes", "chargers:read,meter-values:read"]
                  + store, "cms token create", 60)
        return out.stdout.strip().splitlines()[-1]

    # --- measuring -----------------------------------------------------------------------

    def ladder(self, target, measure):
        """`measure` each rate in turn until one is not sustained (those up to 10,000
        frames/s always: the issue's figures), then once halfway back."""
        steps, passed = [], None
        for rate in self.rates:
            step = measure(rate)
            steps.append(step)
            if step["sustained"]:
                passed = rate
                continue
            if step["offered_per_s"] <= 10_000:
                continue
            if passed is not None and (passed + rate) / 2 not in (passed, rate):
                steps.append(measure(round((passed + rate) / 2, 2)))
            break
        best = max((s for s in steps if s["sustained"]), key=lambda s: s["frames_per_s"],
                   default=None)
        self.results["targets"][target] = {"steps": steps, "best": best}
        self.save()

    def step(self, target, ocpp, rate, watch, apis=(), token=None, metrics=(), threads_of=None,
             broker_port=None):
        offered = rate * self.args.chargers
        log(f"{target}: {offered:,.0f} frames/s ({rate:g} a charger)")
        argv = [str(RELEASE / "cms-loadtest"), "--target", ocpp, "--chargers",
                str(self.args.chargers), "--ramp", "2000", "--meter-rate", str(rate),
                "--open-loop", "--duration", str(self.args.duration), "--heartbeat", "300",
                "--json", "--quiet"]
        for name, pids in watch.items():
            argv += ["--watch", f"{name}={','.join(map(str, pids))}"]
        if threads_of:
            argv += ["--pid", str(threads_of)]
        bytes_before = broker_bytes(broker_port)
        fleet = self.procs.start(f"fleet {target} {rate}", argv, self.work / "fleet.log",
                                 stdout=self.work / "fleet.json")
        probe = None
        if apis and token:
            # Once the fleet is up: the probe chargers' boots are timed in the steady load,
            # not in the fleet's boot storm.
            settle = self.args.chargers / 2000 + 2
            time.sleep(settle)
            env = dict(os.environ, CMS_LOADTEST_TOKEN=token)
            probe_argv = [str(RELEASE / "cms-loadtest"), "--probe", "--target", ocpp,
                          "--probe-chargers", str(PROBES), "--http-base",
                          ",".join(f"http://127.0.0.1:{h}" for h in apis),
                          "--duration", str(max(3, int(self.args.duration - settle))),
                          "--json"]
            if metrics:
                probe_argv += ["--probe-metrics", ",".join(metrics)]
            probe = self.procs.start(f"probe {target} {rate}", probe_argv,
                                     self.work / "probe.log",
                                     stdout=self.work / "probe.json", env=env)
        try:
            fleet.wait(self.args.duration + 120)
        except subprocess.TimeoutExpired:
            pass
        self.procs.stop(fleet)
        bytes_after = broker_bytes(broker_port)
        try:
            summary = json.loads((self.work / "fleet.json").read_text())
        except ValueError:
            raise Failed(f"cms-loadtest gave no summary ({fleet.returncode}):\n"
                         f"{(self.work / 'fleet.log').read_text()[-2000:]}")
        fresh = None
        if probe is not None:
            try:
                probe.wait(self.args.duration + 60)
                fresh = json.loads((self.work / "probe.json").read_text())
            except (subprocess.TimeoutExpired, ValueError) as e:
                log(f"the probe gave nothing ({e}): {(self.work / 'probe.log').read_text()[-500:]}")
            self.procs.stop(probe)
        frames = summary["frames_per_s"] * summary["duration_s"]
        lat = summary["latency_ms"]
        step = {
            "rate": rate, "offered_per_s": offered, "frames_per_s": summary["frames_per_s"],
            "p50_ms": lat["p50"], "p99_ms": lat["p99"], "p999_ms": lat["p999"],
            # The bare server's empty answers are refused boots: not errors of the frame path.
            "errors": summary["errors"] - summary["boot_rejected"] * (target == "bare"),
            "us_per_frame": {n: p.get("us_per_frame") for n, p in summary["processes"].items()},
            "loadtest_us_per_frame": (summary["cpu"].get("loadtest_s") or 0) * 1e6 / frames
            if frames else None,
        }
        if threads_of and frames:
            threads = summary["cpu"].get("target_threads", {})
            step["threads_us_per_frame"] = {n: t["cpu_s"] * 1e6 / frames
                                            for n, t in threads.items()}
            step["threads_switches_per_frame"] = {n: t.get("switches", 0) / frames
                                                  for n, t in threads.items()}
        if bytes_before is not None and bytes_after is not None and frames:
            step["broker_bytes_per_frame"] = (bytes_after - bytes_before) / frames
        if fresh:
            step["freshness_ms"] = fresh.get("freshness_all_ms")
            step["freshness_by_replica_ms"] = fresh.get("freshness_ms")
            step["connection_ms"] = fresh.get("connection_all_ms")
            step["probe_missed"] = fresh.get("failures")
        step["sustained"] = (step["errors"] == 0 and lat["p99"] <= P99_MS
                             and summary["frames_per_s"] >= ANSWERED * offered)
        log(f"  {summary['frames_per_s']:,.0f}/s, p99 {lat['p99']:.1f} ms, "
            f"{'sustained' if step['sustained'] else 'NOT sustained'}; "
            + ", ".join(f"{n} {v:.1f} µs" for n, v in step["us_per_frame"].items() if v)
            + (f"; fresh p50/p99 {step['freshness_ms']['p50']:.0f}/"
               f"{step['freshness_ms']['p99']:.0f} ms" if fresh and step.get("freshness_ms")
               else ""))
        return step

    def drain(self, database, postgres):
        """One API replica started on the gateway's backlog: records materialised a second
        until it is caught up (ready), and its CPU (and PostgreSQL's) a record."""
        http = free_port()
        pg = [postgres] + children_of(postgres) if postgres else []
        pg_before = cpu_s(pg)
        started = time.monotonic()
        api = self.procs.start("api-drain", [str(RELEASE / "cms"), "api", "--database-url",
                                             database, "--http-addr", f"127.0.0.1:{http}"]
                               + self.kafka_flags() + self.args.api_arg,
                               self.work / "api-drain.log")
        samples = []
        deadline = started + 600
        while time.monotonic() < deadline:
            if api.poll() is not None:
                raise Failed(f"the draining API exited:\n{(self.work / 'api-drain.log').read_text()[-2000:]}")
            _, text = get_text(f"http://127.0.0.1:{http}/metrics")
            records = metric_sum(text, "cms_materialiser_records_total")
            now = time.monotonic()
            if records is not None:
                samples.append((now, records, cpu_s([api.pid])))
            ready = get_text(f"http://127.0.0.1:{http}/readyz")[0] == 200
            if ready and len(samples) >= 3 and samples[-1][1] == samples[-3][1]:
                break
            time.sleep(0.25)
        pg_used = cpu_s(pg + children_of(postgres) if postgres else []) - pg_before
        moving = [s for s in samples if s[1] > 0]
        last = max((s for s in moving), key=lambda s: s[1], default=None)
        first_move = next((s for s in samples if s[1] > 0), None)
        self.procs.stop(api)
        if not last or not first_move or last[0] <= first_move[0]:
            return {"records": 0}
        # From the first record taken to the last: the replica's start-up left out.
        end = next(s for s in samples if s[1] == last[1])
        records = end[1]
        seconds = end[0] - first_move[0]
        return {"records": records, "seconds": seconds, "records_per_s": records / seconds,
                "api_us_per_record": end[2] * 1e6 / records,
                "postgres_us_per_record": pg_used * 1e6 / records if pg else None}

    def save(self):
        out = Path(self.args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(self.results, indent=1))


def broker_bytes(port):
    """Bytes sent so far over established connections to the broker (`ss`); None without it."""
    if port is None or not shutil.which("ss"):
        return None
    out = subprocess.run(["ss", "-tinH", "state", "established", f"( dport = :{port} )"],
                         capture_output=True, text=True).stdout
    return sum(int(w.split(":", 1)[1]) for w in out.split() if w.startswith("bytes_sent:"))


def table(results):
    """The figures as one markdown table, a row a target."""
    def at(steps, offered):
        return next((s for s in steps if abs(s["offered_per_s"] - offered) < 1), None)

    def cpu(step):
        if not step:
            return "-"
        parts = [f"{n} {v:.0f}" for n, v in step["us_per_frame"].items() if v]
        shards = (step.get("threads_us_per_frame") or {}).get("ocpp-shard")
        if shards:
            parts.append(f"(shards {shards:.0f})")
        return ", ".join(parts)

    def online(step):
        c = (step or {}).get("connection_ms")
        return f"{c['p99']:.0f}" if c else "-"

    def fresh(step):
        f = (step or {}).get("freshness_ms")
        return f"{f['p50']:.0f} / {f['p99']:.0f}" if f else "-"

    rows = ["| target | highest sustained frames/s (its p99) | p99 at 5,000/s | CPU µs a frame "
            "at 5,000/s | CPU µs a frame at the highest | freshness p50 / p99 ms at 5,000/s; "
            "10,000/s | shown online p99 ms at 5,000/s; 10,000/s |",
            "|---|---|---|---|---|---|---|"]
    for name, t in results["targets"].items():
        best, five, ten = t["best"], at(t["steps"], 5000), at(t["steps"], 10000)
        rows.append(
            f"| {name} | "
            + (f"{best['frames_per_s']:,.0f} ({best['p99_ms']:.1f} ms)" if best else "none")
            + f" | {five['p99_ms']:.1f} ms | {cpu(five)} | {cpu(best)} | "
            + f"{fresh(five)}; {fresh(ten)} | "
            + f"{online(five)}; {online(ten)} |")
    drain = results.get("drain")
    if drain and drain.get("records"):
        rows.append(f"\nOne API replica through a backlog of {drain['records']:,.0f} records: "
                    f"{drain['records_per_s']:,.0f} records/s, {drain['api_us_per_record']:.1f} "
                    "µs of its CPU a record"
                    + (f", PostgreSQL {drain['postgres_us_per_record']:.1f}"
                       if drain.get("postgres_us_per_record") is not None else ""))
    return "\n".join(rows)


def main():
    args = options()
    targets = [t for t in args.targets.split(",") if t]
    unknown = set(targets) - set(TARGETS)
    if unknown:
        sys.exit(f"open-loop: unknown targets {sorted(unknown)} (of {', '.join(TARGETS)})")
    work = Path(tempfile.mkdtemp(prefix="cms-open-loop-"))
    sitting = Run(args, work)
    try:
        if "bare" in targets:
            sitting.bare()
        if "cms-up" in targets:
            sitting.cms_up()
        if "gateway" in targets or "chain" in targets:
            sitting.kafka(targets)
    except Failed as e:
        log(str(e))
        sitting.save()
        return 1
    finally:
        sitting.procs.stop_all()
        if args.keep:
            log(f"logs and data kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(table(sitting.results))
    log(f"every figure: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
