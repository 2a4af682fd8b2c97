"""Local authorisation lists (OCPP 2.0.1 functional block D) for the station of
tests/interop/ocpp201_station.py: how it answers SendLocalList and GetLocalListVersion, and its
`lists` scenario (tests/e2e/ocpp201/local_lists.rs).

The station keeps the list it is sent, as D01/D02 say: a Full update replaces it, a
Differential one whose versionNumber is not above the station's is answered VersionMismatch,
otherwise its entries are added or replaced (with idTokenInfo) or removed (without); an update
of more entries than its ItemsPerMessage is answered Failed (and is unexpected: cms must not
send one). GetLocalListVersion answers the version it holds (0: none). After each update it
takes, it prints {"local_list": VERSION, "entries": [{"idToken", "type", "status"}...]} in
the order of the tokens uppercased.

Scenario `lists`: boots with a LocalAuthListCtrlr (ItemsPerMessage ITEMS_PER_MESSAGE) and an
AuthCacheCtrlr in its device model, reports EVSE 1 Available, then obeys its stdin, a command a
line, until it closes (or --for seconds passed):
  disconnect     closes its websocket (keeping its list)
  connect        connects anew and boots
  version N      its list is at version N from now on (as if changed by hand)
"""

import asyncio
import sys
import threading

from ocpp.routing import on
from ocpp.v201 import call_result

from ocpp201_base import Unexpected, emit

ITEMS_PER_MESSAGE = 2

# (component, evse, variable) -> [value, mutability, data type]: added to the station's device
# model for this scenario only (the others' reports stay as their tests expect them).
LIST_MODEL = {
    ("LocalAuthListCtrlr", None, "Enabled"): ["true", "ReadWrite", "boolean"],
    ("LocalAuthListCtrlr", None, "Available"): ["true", "ReadOnly", "boolean"],
    ("LocalAuthListCtrlr", None, "ItemsPerMessage"): [
        str(ITEMS_PER_MESSAGE),
        "ReadOnly",
        "integer",
    ],
    ("LocalAuthListCtrlr", None, "BytesPerMessage"): ["4096", "ReadOnly", "integer"],
    ("AuthCacheCtrlr", None, "Enabled"): ["true", "ReadWrite", "boolean"],
}


class ListAnswers:
    """A mixin of AnsweringStation: the station's local authorisation list."""

    list_version = 0
    # Token uppercased -> {"idToken", "type", "status"}.
    local_list = {}

    def print_list(self):
        entries = [self.local_list[key] for key in sorted(self.local_list)]
        emit({"local_list": self.list_version, "entries": entries})

    @on("SendLocalList")
    def on_send_local_list(self, version_number, update_type, local_authorization_list=None, **_):
        entries = local_authorization_list or []
        if len(entries) > ITEMS_PER_MESSAGE:
            Unexpected.record(f"{len(entries)} entries in one SendLocalList")
            return call_result.SendLocalList(status="Failed")
        if update_type == "Differential" and version_number <= self.list_version:
            return call_result.SendLocalList(status="VersionMismatch")
        held = {} if update_type == "Full" else dict(self.local_list)
        for entry in entries:
            token = entry["id_token"]
            key = token["id_token"].upper()
            info = entry.get("id_token_info")
            if info is None:
                held.pop(key, None)
            else:
                held[key] = {
                    "idToken": token["id_token"],
                    "type": token["type"],
                    "status": info["status"],
                }
        self.local_list = held
        self.list_version = version_number
        self.print_list()
        return call_result.SendLocalList(status="Accepted")

    @on("GetLocalListVersion")
    def on_get_local_list_version(self, **_):
        return call_result.GetLocalListVersion(version_number=self.list_version)


def read_stdin(loop, commands):
    for line in sys.stdin:
        loop.call_soon_threadsafe(commands.put_nowait, line.strip())
    loop.call_soon_threadsafe(commands.put_nowait, None)


async def lists(session, args):
    station = await session.connect()
    station.model.update({key: list(value) for key, value in LIST_MODEL.items()})
    await station.boot()
    await station.status_notification(1, 1, "Available")
    loop = asyncio.get_running_loop()
    commands = asyncio.Queue()
    threading.Thread(target=read_stdin, args=(loop, commands), daemon=True).start()
    deadline = loop.time() + args.seconds
    while True:
        try:
            command = await asyncio.wait_for(commands.get(), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            break
        if command is None:
            break
        if command == "disconnect":
            await session.disconnect()
        elif command == "connect":
            station = await session.connect()
            await station.boot()
        elif command.startswith("version "):
            station.list_version = int(command.split()[1])
            emit({"list_version_set": station.list_version})
        elif command:
            Unexpected.record(f"an unknown command: {command!r}")
    await session.disconnect()
