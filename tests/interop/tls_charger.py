#!/usr/bin/env python3
"""A third-party TLS client of cms (OpenSSL, through Python's ssl), for tests/e2e/tls.rs.

Usage: tls_charger.py URL [--ca FILE] [--certificate FILE --private-key FILE] [--bearer TOKEN]
                      [--ocpp 1.6|2.0.1]

- ws:// or wss://: a charge point. It opens the websocket offering `ocpp1.6` (Basic credentials
  go in the URL, wss://IDENTITY:PASSWORD@HOST/ocpp/IDENTITY, as chargers are configured), with
  an SSLContext that trusts only --ca and presents the client certificate if given; once in, the
  `ocpp` package's ChargePoint sends a BootNotification and a Heartbeat and checks both answers
  against the OCPP 1.6 schemas, then closes. With `--ocpp 2.0.1` it is a 2.0.1 charging station
  instead: it offers `ocpp2.0.1` and the package's v201 ChargePoint does the same against the
  2.0.1 schemas (answering cms's GetBaseReport NotSupported).
- https:// or http://: an operator's HTTP client; it GETs the URL (with `Authorization: Bearer
  TOKEN` if given) and reads the answer.

Prints one JSON line saying how the attempt went and exits 0, whatever the server did: a
refusal is an outcome the test asserts on, and so is any other exception (its message is in
`error`); only bad usage exits otherwise. Outcomes:
  {"outcome": "connected", "subprotocol", "server_certificate", "boot", "heartbeat"}
  {"outcome": "answered", "status", "body", "server_certificate"}  (http and https)
  {"outcome": "refused", "status", "body"}  the upgrade was answered with an HTTP error
  {"outcome": "tls_failed", "error"}  the TLS handshake (or its alert) ended the connection
  {"outcome": "failed", "error"}  anything else: reset, time-out, a bad answer
`server_certificate` is the leaf the server presented: {"der_base64", "serial", "not_after"}.
"""

import argparse
import asyncio
import base64
import http.client
import json
import ssl
import sys
import urllib.parse

import websockets
from websockets.asyncio.client import ClientConnection
from ocpp.routing import on
from ocpp.v16 import ChargePoint, call, call_result
from ocpp.v16.enums import Action
from ocpp import v201

OVERALL_TIMEOUT_S = 10
RESPONSE_TIMEOUT_S = 5
OPEN_TIMEOUT_S = 5
CLOSE_TIMEOUT_S = 3


class TlsChargePoint(ChargePoint):
    @on(Action.get_configuration)
    def on_get_configuration(self, **_):
        """cms reads the configuration after a boot: there is none worth telling here."""
        return call_result.GetConfiguration(configuration_key=[])


class TlsStation201(v201.ChargePoint):
    @on("GetBaseReport")
    def on_get_base_report(self, **_):
        """cms asks for the device model after a boot: this station keeps it to itself."""
        return v201.call_result.GetBaseReport(status="NotSupported")


async def boot_and_heartbeat_16(point):
    boot = await point.call(
        call.BootNotification(
            charge_point_vendor="InteropVendor",
            charge_point_model="InteropTLS",
            firmware_version="tls-1.0",
        ),
        suppress=False,
    )
    heartbeat = await point.call(call.Heartbeat(), suppress=False)
    return boot, heartbeat


async def boot_and_heartbeat_201(point):
    station = {"model": "InteropTLS", "vendor_name": "InteropVendor", "firmware_version": "tls-1.0"}
    boot = await point.call(
        v201.call.BootNotification(charging_station=station, reason="PowerUp"),
        suppress=False,
    )
    heartbeat = await point.call(v201.call.Heartbeat(), suppress=False)
    return boot, heartbeat


# Per --ocpp: the subprotocol offered, the ChargePoint class, and its boot and heartbeat.
VERSIONS = {
    "1.6": ("ocpp1.6", TlsChargePoint, boot_and_heartbeat_16),
    "2.0.1": ("ocpp2.0.1", TlsStation201, boot_and_heartbeat_201),
}


class AlertKeepingConnection(ClientConnection):
    """Keeps why the transport was lost. Under TLS 1.3 the server checks a client certificate
    after the client's side of the handshake is done: its alert arrives while the client waits
    for the HTTP answer, and websockets reports only that none came."""

    lost_because = None

    def connection_lost(self, exc):
        if exc is not None:
            AlertKeepingConnection.lost_because = exc
        super().connection_lost(exc)


def ssl_context(ca, certificate, private_key):
    """Trusts only `ca` (hostname checks on: the test server is 127.0.0.1 and localhost)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
    if certificate:
        context.load_cert_chain(certificate, private_key)
    return context


def server_certificate(ssl_object):
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    parsed = ssl_object.getpeercert()
    return {
        "der_base64": base64.b64encode(der).decode(),
        "serial": parsed.get("serialNumber"),
        "not_after": parsed.get("notAfter"),
    }


def tls_error(error):
    """The ssl.SSLError in an exception's chain, if any: how a TLS alert reaches a client."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, ssl.SSLError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def failure(error):
    """The outcome of an exception: a TLS failure, an HTTP refusal, or anything else."""
    found = tls_error(error) or tls_error(AlertKeepingConnection.lost_because)
    if found is not None:
        return {"outcome": "tls_failed", "error": f"{type(found).__name__}: {found}"}
    if isinstance(error, websockets.InvalidStatus):
        response = error.response
        return {
            "outcome": "refused",
            "status": response.status_code,
            "body": response.body.decode(errors="replace"),
        }
    causes = []
    while error is not None and len(causes) < 5:
        causes.append(f"{type(error).__name__}: {error}")
        error = error.__cause__ or error.__context__
    return {"outcome": "failed", "error": " <- ".join(causes)}


async def charge_point(url, context, identity, version):
    subprotocol, point_class, boot_and_heartbeat = VERSIONS[version]
    async with websockets.connect(
        url,
        ssl=context,
        create_connection=AlertKeepingConnection,
        subprotocols=[subprotocol],
        proxy=None,
        open_timeout=OPEN_TIMEOUT_S,
        close_timeout=CLOSE_TIMEOUT_S,
    ) as ws:
        outcome = {
            "outcome": "connected",
            "subprotocol": ws.subprotocol,
            "server_certificate": server_certificate(ws.transport.get_extra_info("ssl_object")),
        }
        point = point_class(identity, ws, response_timeout=RESPONSE_TIMEOUT_S)
        reader = asyncio.create_task(point.start())
        try:
            boot, heartbeat = await boot_and_heartbeat(point)
            outcome["boot"] = {"status": boot.status, "interval": boot.interval}
            outcome["heartbeat"] = {"current_time": heartbeat.current_time}
        finally:
            reader.cancel()
            try:
                await reader
            except (asyncio.CancelledError, websockets.ConnectionClosed):
                pass
        return outcome


def get(url, context, bearer):
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=RESPONSE_TIMEOUT_S, context=context
        )
    else:
        connection = http.client.HTTPConnection(
            parts.hostname, parts.port, timeout=RESPONSE_TIMEOUT_S
        )
    headers = {"Accept": "application/json"}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        connection.connect()
        # Read now: the connection may hand its socket to the response and forget it.
        sock = connection.sock
        certificate = server_certificate(sock if isinstance(sock, ssl.SSLSocket) else None)
        connection.request("GET", path or "/", headers=headers)
        response = connection.getresponse()
        return {
            "outcome": "answered",
            "status": response.status,
            "body": response.read().decode(errors="replace"),
            "server_certificate": certificate,
        }
    finally:
        connection.close()


def attempt(args):
    parts = urllib.parse.urlsplit(args.url)
    secure = parts.scheme in ("wss", "https")
    context = ssl_context(args.ca, args.certificate, args.private_key) if secure else None
    try:
        if parts.scheme in ("http", "https"):
            return get(args.url, context, args.bearer)
        identity = urllib.parse.unquote(parts.path.rsplit("/", 1)[-1])
        run = charge_point(args.url, context, identity, args.ocpp)
        return asyncio.run(asyncio.wait_for(run, OVERALL_TIMEOUT_S))
    except Exception as error:  # every way the server can turn us away is an outcome
        return failure(error)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--ca", help="the CA certificate (PEM) to trust")
    parser.add_argument("--certificate", help="a client certificate (PEM) to present")
    parser.add_argument("--private-key", help="the client certificate's key (PEM)")
    parser.add_argument("--bearer", help="a token for `Authorization: Bearer`")
    parser.add_argument("--ocpp", choices=sorted(VERSIONS), default="1.6", help="the version spoken")
    args = parser.parse_args(argv[1:])
    if bool(args.certificate) != bool(args.private_key):
        parser.error("--certificate and --private-key go together")
    print(json.dumps(attempt(args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
