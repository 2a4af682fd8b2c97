"""The wire side of the OCPP 2.0.1 station of tests/interop/ocpp201_station.py: what it prints,
the websocket as the `ocpp` package's ChargePoint sees it, and its own calls, checked.

Every line on stdout is one JSON object (flushed at once), so that a test can assert what
happened; `at` is UTC with microseconds, `2026-11-21T10:00:00.123456Z`:
  {"connected": URL, "subprotocol": P, "connection": N, "at": T}
  {"refused": HTTP_STATUS, "url": URL, "at": T}         the upgrade was refused (exit status 3)
  {"sent": ACTION, "unique_id": ID, "payload": {...}, "answer": {...}, "at": T}
                                                        a CALL of its own and cms's CALLRESULT,
                                                        both as they went on the wire
  {"sent": ACTION, "unique_id": ID, "payload": {...}, "error": [CODE, DESCRIPTION], "at": T}
                                                        ... answered with a CALLERROR
  {"received": ACTION, "unique_id": ID, "payload": {...}, "connection": N, "at": T}
                                                        a CALL from cms
  {"answered": ACTION, "unique_id": ID, "payload": {...} | "error": [CODE, DESCRIPTION],
   "connection": N, "at": T}                            what it answered
  {"disconnected": URL, "connection": N, "by": "us" | "server", "code": C, "at": T}
  {"unexpected": WHAT, "at": T}                         also on stderr; exit status 1
  {"done": SCENARIO, "at": T}                           the scenario ran to its end
"""

import asyncio
import json
import sys
from datetime import datetime, timedelta, timezone

from ocpp.exceptions import OCPPError

SUBPROTOCOL = "ocpp2.0.1"


def now():
    return stamp(datetime.now(timezone.utc))


def stamp(moment):
    """An OCPP date-time in UTC with microseconds."""
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def minutes_ago(minutes):
    return stamp(datetime.now(timezone.utc) - timedelta(minutes=minutes))


def emit(line):
    line["at"] = now()
    print(json.dumps(line, separators=(",", ":")), flush=True)


class Unexpected:
    """What went wrong that should not have: each is printed, and any makes the exit status 1."""

    seen = []

    @classmethod
    def record(cls, what):
        cls.seen.append(what)
        emit({"unexpected": what})
        print(f"UNEXPECTED {what}", file=sys.stderr, flush=True)


class Connection:
    """The websocket as the ChargePoint sees it. Remembers the frames of its own calls and their
    answers by message id, and prints every CALL from cms and the answer it gave."""

    def __init__(self, ws, number):
        self._ws = ws
        self.number = number
        # Message id -> the payload of one of our CALLs as it went out, and cms's answer frame.
        self.calls = {}
        self.answers = {}
        # Message id -> action of a CALL from cms not answered yet.
        self.unanswered = {}

    async def send(self, message):
        frame = json.loads(message)
        if frame[0] == 2:
            self.calls[frame[1]] = frame[3]
        elif frame[0] in (3, 4):
            action = self.unanswered.pop(frame[1], "?")
            line = {"answered": action, "unique_id": frame[1], "connection": self.number}
            if frame[0] == 3:
                line["payload"] = frame[2]
            else:
                line["error"] = [frame[2], frame[3]]
                Unexpected.record(f"we answered {action} {frame[1]} with {frame[2:]}")
            emit(line)
        await self._ws.send(message)

    async def recv(self):
        message = await self._ws.recv()
        try:
            frame = json.loads(message)
        except ValueError:
            Unexpected.record(f"cms sent a frame that is not JSON: {message!r}")
            return message
        if isinstance(frame, list) and len(frame) == 4 and frame[0] == 2:
            self.unanswered[frame[1]] = frame[2]
            emit(
                {
                    "received": frame[2],
                    "unique_id": frame[1],
                    "payload": frame[3],
                    "connection": self.number,
                }
            )
        elif isinstance(frame, list) and len(frame) >= 3 and frame[0] in (3, 4):
            self.answers[frame[1]] = frame
        return message


class Calls:
    """A mixin of the `ocpp` package's ChargePoint: its own CALLs, each with a message id of its
    own, the package's schema validation of the request and of the answer on, printed with cms's
    answer as it came on the wire."""

    next_call = 0

    async def send_call(self, request):
        """Sends `request`; returns cms's answer payload (a dict), or None after printing why
        there was none (a CALLERROR, an answer that breaks the schema, no answer)."""
        action = type(request).__name__
        connection = self._connection
        self.next_call += 1
        unique_id = f"{connection.number}-{self.next_call}"
        line = {"sent": action, "unique_id": unique_id}
        try:
            await self.call(request, suppress=False, unique_id=unique_id)
        except OCPPError as error:
            frame = connection.answers.get(unique_id)
            line["payload"] = connection.calls.get(unique_id)
            if line["payload"] is None:
                Unexpected.record(f"our {action} failed the 2.0.1 schema and was not sent: {error}")
                return None
            if frame is None:
                Unexpected.record(f"our {action} failed: {type(error).__name__}: {error}")
                return None
            if frame[0] == 4:
                line["error"] = [frame[2], frame[3]]
                emit(line)
                Unexpected.record(f"cms answered our {action} with the CALLERROR {frame[2:]}")
                return None
            line["answer"] = frame[2]
            emit(line)
            Unexpected.record(f"cms's answer to our {action} fails the 2.0.1 schema: {error}")
            return None
        except asyncio.TimeoutError:
            Unexpected.record(f"our {action} got no answer in time")
            return None
        answer = connection.answers[unique_id][2]
        line["payload"] = connection.calls[unique_id]
        line["answer"] = answer
        emit(line)
        return answer

