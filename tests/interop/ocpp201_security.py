"""Security (blocks A and M) of the OCPP 2.0.1 station of tests/interop/ocpp201_station.py, for
tests/e2e/ocpp201/security.rs.

The station makes its key and CSR with Python's `cryptography` (EC P-256; subject CN = its
identity, O = `Interop CPO`), sends SignCertificate, and keeps each chain cms sends in
CertificateSigned (answered Accepted) in --security-dir, as `station-N.pem` beside its key
`station-N.key` (N from 1). A TriggerMessage `SignChargingStationCertificate` (cms renewing a
certificate about to end) is Accepted and answered with a new key's CSR.

Scenario `security`: boots over --url (a test-bench station, no credentials); sends a
SecurityEventNotification (TamperDetectionActivated, techInfo `enclosure opened`); sends its
CSR and waits for the chain (`{"certificate": 1}`); waits for cms to ask for a renewal and for
the renewed chain (`{"certificate": 2}`); disconnects (`{"certificates": 2}`); once a line
comes on its stdin (the test moved the station to profile 3), connects over --tls-url as a
security-profile-3 station (Python's `ssl`: the server checked against --server-ca, the newest
certificate and its key presented), retrying while it is refused, boots there and disconnects
(`{"profile_3": {"boot": ANSWER, "peer": SUBJECT}}`).
"""

import asyncio
import json
import os
import ssl
import sys
import threading

import websockets
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from ocpp.routing import on
from ocpp.v201 import call, call_result

from ocpp201_base import Unexpected, emit, now

ORGANIZATION = "Interop CPO"
CERTIFICATE_TIMEOUT_S = 20
PROFILE_3_TIMEOUT_S = 20


class SecurityAnswers:
    """The station's side of certificate management: a mixin of AnsweringStation."""

    security_dir = None
    pending_key = None
    certificates = 0
    certificate_came = None

    async def sign_certificate(self):
        """A new key, and its CSR sent in SignCertificate."""
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name(
            [
                x509.NameAttribute(NameOID.COMMON_NAME, self.id),
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
            ]
        )
        csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
        self.pending_key = key
        pem = csr.public_bytes(serialization.Encoding.PEM).decode()
        await self.send_call(
            call.SignCertificate(csr=pem, certificate_type="ChargingStationCertificate")
        )

    @on("CertificateSigned")
    def on_certificate_signed(self, certificate_chain, certificate_type=None, **_):
        if self.pending_key is None or self.security_dir is None:
            Unexpected.record("a CertificateSigned without a CSR of ours")
            return call_result.CertificateSigned(status="Rejected")
        self.certificates += 1
        base = os.path.join(self.security_dir, f"station-{self.certificates}")
        with open(base + ".pem", "w") as chain:
            chain.write(certificate_chain)
        key = self.pending_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        with open(base + ".key", "wb") as out:
            out.write(key)
        emit({"certificate": self.certificates, "type": certificate_type})
        if self.certificate_came is not None:
            self.certificate_came.set()
        return call_result.CertificateSigned(status="Accepted")

    async def wait_certificate(self, number):
        """Until the `number`th chain came; records it as unexpected otherwise."""
        if self.certificate_came is None:
            self.certificate_came = asyncio.Event()
        deadline = asyncio.get_running_loop().time() + CERTIFICATE_TIMEOUT_S
        while self.certificates < number:
            left = deadline - asyncio.get_running_loop().time()
            try:
                await asyncio.wait_for(self.certificate_came.wait(), max(left, 0.01))
            except asyncio.TimeoutError:
                Unexpected.record(f"no certificate number {number} came")
                return False
            self.certificate_came.clear()
        return True


def client_context(args, number):
    """Python's `ssl` (OpenSSL): the server checked against --server-ca, certificate `number`."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=args.server_ca)
    base = os.path.join(args.security_dir, f"station-{number}")
    context.load_cert_chain(base + ".pem", base + ".key")
    return context


async def profile_3(args, number):
    """Connects over --tls-url with certificate `number` until let in; boots; disconnects."""
    deadline = asyncio.get_running_loop().time() + PROFILE_3_TIMEOUT_S
    while True:
        try:
            ws = await websockets.connect(
                args.tls_url,
                subprotocols=["ocpp2.0.1"],
                ssl=client_context(args, number),
                open_timeout=5,
                close_timeout=2,
                proxy=None,
            )
            break
        except websockets.InvalidStatus as refused:
            if asyncio.get_running_loop().time() > deadline:
                Unexpected.record(f"profile 3 still refused: {refused.response.status_code}")
                return
            await asyncio.sleep(0.3)
    async with ws:
        peer = ws.transport.get_extra_info("peercert") or {}
        boot = {
            "reason": "PowerUp",
            "chargingStation": {"model": "Interop201", "vendorName": "InteropVendor"},
        }
        await ws.send(f'[2,"tls-1","BootNotification",{json.dumps(boot)}]')
        answer = None
        while answer is None:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if frame[0] == 3 and frame[1] == "tls-1":
                answer = frame[2]
        emit({"profile_3": {"boot": answer, "peer": peer.get("subject")}})


async def security(session, args):
    station = await session.connect()
    station.security_dir = args.security_dir
    await station.boot()
    await station.send_call(
        call.SecurityEventNotification(
            type="TamperDetectionActivated", timestamp=now(), tech_info="enclosure opened"
        )
    )
    await station.sign_certificate()
    if not await station.wait_certificate(1):
        return
    # cms asks for a renewal of a certificate about to end (TriggerMessage): the answer's CSR.
    if not await station.wait_certificate(2):
        return
    await session.disconnect()
    emit({"certificates": station.certificates})
    if await told_profile_3():
        await profile_3(args, station.certificates)


async def told_profile_3():
    """Until a line comes on stdin (the test moved the station to profile 3)."""
    loop = asyncio.get_running_loop()
    told = asyncio.Event()

    def wait_line():
        sys.stdin.readline()
        loop.call_soon_threadsafe(told.set)

    threading.Thread(target=wait_line, daemon=True).start()
    try:
        await asyncio.wait_for(told.wait(), PROFILE_3_TIMEOUT_S)
        return True
    except asyncio.TimeoutError:
        Unexpected.record("never told to connect as a profile-3 station")
        return False
