"""How the OCPP 2.0.1 station of tests/interop/ocpp201_station.py answers the display-message
calls (block O), with the `ocpp` package's schema validation of each call and answer on: a mixin
of AnsweringStation (ocpp201_answers.py).

  SetDisplayMessage   Accepted, and the message kept by its id (a new one of the same id
                      replaces it).
  GetDisplayMessages  Accepted when a kept message matches (by the ids asked, priority, state),
                      then a NotifyDisplayMessages of them under the request's requestId; Unknown
                      when none does.
  ClearDisplayMessage Accepted when it held the id (and drops it), Unknown otherwise.
"""

from ocpp.routing import after, on
from ocpp.v201 import call, call_result


class DisplayAnswers:
    """The station's display: message infos by id, as set (the package's snake_case)."""

    @property
    def display(self):
        if not hasattr(self, "_display"):
            self._display = {}
        return self._display

    def displayed(self, ids=None, priority=None, state=None):
        return [
            info
            for message_id, info in sorted(self.display.items())
            if (not ids or message_id in ids)
            and (priority is None or info.get("priority") == priority)
            and (state is None or info.get("state") == state)
        ]

    @on("SetDisplayMessage")
    def on_set_display_message(self, message, **_):
        self.display[message["id"]] = message
        return call_result.SetDisplayMessage(status="Accepted")

    @on("GetDisplayMessages")
    def on_get_display_messages(self, request_id, id=None, priority=None, state=None, **_):
        found = self.displayed(id, priority, state)
        return call_result.GetDisplayMessages(status="Accepted" if found else "Unknown")

    @after("GetDisplayMessages")
    async def after_get_display_messages(self, request_id, id=None, priority=None, state=None, **_):
        found = self.displayed(id, priority, state)
        if found:
            await self.send_call(
                call.NotifyDisplayMessages(request_id=request_id, message_info=found, tbc=False)
            )

    @on("ClearDisplayMessage")
    def on_clear_display_message(self, id, **_):
        held = self.display.pop(id, None) is not None
        return call_result.ClearDisplayMessage(status="Accepted" if held else "Unknown")
