#!/usr/bin/env python3
"""A third-party OCPP 1.6J charge point speaking the Open Charge Alliance's security extension
("Improved security for OCPP 1.6-J"), for cms's end-to-end test tests/e2e/security_ext_v16.rs.

Usage: ocpp16_security_ext.py URL IDENTITY [--for S] [--csr FILE]

Built on the `ocpp` package's v16 ChargePoint (pinned in requirements.txt beside this file),
which validates every CALL and CALLRESULT, both ways, against the OCA's schemas (those of the
extension included). It connects to URL (the whole ws:// URL, identity included) offering
`ocpp1.6`; sends BootNotification, then the extension's 4 calls (SecurityEventNotification,
SignCertificate, SignedFirmwareStatusNotification, LogStatusNotification; its CSR the PEM of
--csr FILE, else a stand-in); prints `ready`; then
answers the extension's 7 calls of a central system (and GetConfiguration, which cms sends
after a boot, with no keys) until its stdin closes or --for seconds passed:
  CertificateSigned Accepted; DeleteCertificate Accepted; GetInstalledCertificateIds Accepted
  with one certificate (HASH); InstallCertificate Accepted;
  ExtendedTriggerMessage Accepted, then, for SignChargePointCertificate, a SignCertificate of
  a new CSR (RENEWED_CSR; with --csr, that file's again): its renewal;
  GetLog Accepted with filename `security-<requestId>.log`, then LogStatusNotification
  Uploaded with the requestId;
  SignedUpdateFirmware Accepted, then SignedFirmwareStatusNotification Downloading with the
  requestId.

Stdout is one JSON object a line, as tests/interop/ocpp201_base.py lists them (`sent`,
`received`, `answered`, `unexpected`, `done`), and {"ready": URL, "at": T} once the 4 calls were
answered. Exit status: 0 when nothing unexpected happened (a CALLERROR, an answer that breaks
the schema, no answer), 1 otherwise, 2 for bad arguments.
"""

import argparse
import asyncio
import logging
import sys
import threading

import websockets
from ocpp.exceptions import OCPPError
from ocpp.routing import after, on
from ocpp.v16 import ChargePoint, call, call_result
from ocpp.v16.enums import Action

from ocpp201_base import Connection, Unexpected, emit, now

SUBPROTOCOL = "ocpp1.6"
RESPONSE_TIMEOUT_S = 10

CSR = "-----BEGIN CERTIFICATE REQUEST-----\nMIIBeTCCAR8CAQAwPTEL\n-----END CERTIFICATE REQUEST-----\n"
RENEWED_CSR = "-----BEGIN CERTIFICATE REQUEST-----\nMIIBeTCCAR8CAQAwRENEW\n-----END CERTIFICATE REQUEST-----\n"
HASH = {
    "hashAlgorithm": "SHA256",
    "issuerNameHash": "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90",
    "issuerKeyHash": "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
    "serialNumber": "4c1f3a",
}


class SecurityExtChargePoint(ChargePoint):
    next_call = 0
    renewal_csr = RENEWED_CSR

    async def send_call(self, request):
        """Sends `request` (schema-checked by the package both ways); prints it with cms's
        answer; returns the answer payload, or None after printing why there was none."""
        action = type(request).__name__
        self.next_call += 1
        unique_id = f"{self._connection.number}-{self.next_call}"
        line = {"sent": action, "unique_id": unique_id}
        try:
            await self.call(request, suppress=False, unique_id=unique_id)
        except OCPPError as error:
            frame = self._connection.answers.get(unique_id)
            line["payload"] = self._connection.calls.get(unique_id)
            line["error"] = [frame[2], frame[3]] if frame and frame[0] == 4 else str(error)
            emit(line)
            Unexpected.record(f"our {action} failed: {type(error).__name__}: {error}")
            return None
        except asyncio.TimeoutError:
            Unexpected.record(f"our {action} got no answer in time")
            return None
        line["payload"] = self._connection.calls[unique_id]
        line["answer"] = self._connection.answers[unique_id][2]
        emit(line)
        return line["answer"]

    @on(Action.get_configuration)
    def on_get_configuration(self, **_):
        # cms reads a charger's configuration after its boot: it has no keys to tell.
        return call_result.GetConfiguration(configuration_key=[])

    @on(Action.certificate_signed)
    def on_certificate_signed(self, certificate_chain):
        return call_result.CertificateSigned(status="Accepted")

    @on(Action.delete_certificate)
    def on_delete_certificate(self, certificate_hash_data):
        return call_result.DeleteCertificate(status="Accepted")

    @on(Action.extended_trigger_message)
    def on_extended_trigger_message(self, requested_message, **_):
        return call_result.ExtendedTriggerMessage(status="Accepted")

    @after(Action.extended_trigger_message)
    async def renew(self, requested_message, **_):
        if requested_message == "SignChargePointCertificate":
            await self.send_call(call.SignCertificate(csr=self.renewal_csr))

    @on(Action.get_installed_certificate_ids)
    def on_get_installed_certificate_ids(self, certificate_type):
        return call_result.GetInstalledCertificateIds(
            status="Accepted", certificate_hash_data=[HASH]
        )

    @on(Action.get_log)
    def on_get_log(self, log, log_type, request_id, **_):
        return call_result.GetLog(status="Accepted", filename=f"security-{request_id}.log")

    @after(Action.get_log)
    async def upload_log(self, request_id, **_):
        await self.send_call(call.LogStatusNotification(status="Uploaded", request_id=request_id))

    @on(Action.install_certificate)
    def on_install_certificate(self, certificate_type, certificate):
        return call_result.InstallCertificate(status="Accepted")

    @on(Action.signed_update_firmware)
    def on_signed_update_firmware(self, request_id, firmware, **_):
        return call_result.SignedUpdateFirmware(status="Accepted")

    @after(Action.signed_update_firmware)
    async def download(self, request_id, **_):
        request = call.SignedFirmwareStatusNotification(status="Downloading", request_id=request_id)
        await self.send_call(request)


async def scenario(args):
    ws = await websockets.connect(
        args.url, subprotocols=[SUBPROTOCOL], open_timeout=5, close_timeout=2, proxy=None
    )
    if ws.subprotocol != SUBPROTOCOL:
        Unexpected.record(f"the server chose subprotocol {ws.subprotocol!r}")
    connection = Connection(ws, 1)
    charger = SecurityExtChargePoint(args.identity, connection, RESPONSE_TIMEOUT_S)
    reader = asyncio.create_task(charger.start())
    emit({"connected": args.url, "subprotocol": ws.subprotocol, "connection": 1})
    await charger.send_call(
        call.BootNotification(charge_point_vendor="Interop", charge_point_model="SecExt-1")
    )
    await charger.send_call(
        call.SecurityEventNotification(type="SettingSystemTime", timestamp=now(), tech_info="NTP")
    )
    csr = CSR
    if args.csr is not None:
        with open(args.csr, encoding="ascii") as file:
            csr = file.read()
        charger.renewal_csr = csr
    await charger.send_call(call.SignCertificate(csr=csr))
    # The package's classes require requestId, which the schemas leave optional.
    await charger.send_call(call.SignedFirmwareStatusNotification(status="Idle", request_id=1))
    await charger.send_call(call.LogStatusNotification(status="Idle", request_id=1))
    emit({"ready": args.url})

    loop = asyncio.get_running_loop()
    stdin_closed = asyncio.Event()

    def wait_stdin():
        for _ in sys.stdin:
            pass
        loop.call_soon_threadsafe(stdin_closed.set)

    threading.Thread(target=wait_stdin, daemon=True).start()
    try:
        await asyncio.wait_for(stdin_closed.wait(), args.seconds)
    except asyncio.TimeoutError:
        pass
    reader.cancel()
    await ws.close()
    emit({"disconnected": args.url, "connection": 1, "by": "us", "code": 1000})


async def run(args):
    try:
        await asyncio.wait_for(scenario(args), args.seconds + 20)
    except asyncio.TimeoutError:
        Unexpected.record("the scenario took too long")
        return
    except (OSError, websockets.WebSocketException) as error:
        Unexpected.record(f"websocket to {args.url}: {type(error).__name__}: {error}")
        return
    emit({"done": "security-ext"})


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("identity")
    parser.add_argument("--for", dest="seconds", type=float, default=60.0)
    parser.add_argument("--csr", metavar="FILE")
    args = parser.parse_args(argv[1:])
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    asyncio.run(run(args))
    if Unexpected.seen:
        print(f"FAIL {len(Unexpected.seen)} unexpected: {Unexpected.seen}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
