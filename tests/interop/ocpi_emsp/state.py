"""What the eMSP knows, in memory: its identity, the tokens cms may call it with, the CPO it
registered with (cms), everything cms sent it and everything it sent cms, the tokens it issued to
drivers and how it answers their real-time authorisation.
"""

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Optional


def now() -> str:
    """An OCPI DateTime of this moment (UTC, seconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_token() -> str:
    """A credentials token: 43 URL-safe characters (an OCPI token is at most 64)."""
    return secrets.token_urlsafe(32)


@dataclass
class Peer:
    """The CPO the eMSP registered with, as the credentials exchange left it."""

    versions_url: str
    # What the eMSP sends in `Authorization: Token ...` to cms (the token cms gave it).
    token: str
    endpoints: list
    roles: list

    def endpoint(self, identifier: str, role: Optional[str] = None) -> Optional[str]:
        """The URL of cms's module `identifier` (of interface `role` when given)."""
        for endpoint in self.endpoints:
            if endpoint.get("identifier") == identifier and role in (None, endpoint.get("role")):
                return endpoint.get("url")
        return None


@dataclass
class State:
    country_code: str
    party_id: str
    name: str
    # http://127.0.0.1:PORT, without a trailing slash.
    base_url: str
    # Tokens A the eMSP issued for cms to register with (each good for one registration).
    tokens_a: set = field(default_factory=set)
    # Tokens cms calls the eMSP with once registered (the library's "token C" list).
    tokens_c: set = field(default_factory=set)
    peer: Optional[Peer] = None
    # Every request cms made under /ocpi, in order (recorder.py fills them).
    received: list = field(default_factory=list)
    # Every request the eMSP made to cms, in order (cms_client.py).
    sent: list = field(default_factory=list)
    # What the library stored through the crud: module -> key -> object (as parsed).
    objects: dict = field(default_factory=dict)
    # The drivers' tokens pushed to cms, by upper-cased uid, as sent.
    tokens: dict = field(default_factory=dict)
    # Real-time authorisation answers by upper-cased uid: {"allowed", "delay", ...}.
    authorize: dict = field(default_factory=dict)
    # Commands sent to cms by the uid of their response_url: {"command", "sent", "answer",
    # "results": [CommandResult ...]}.
    commands: dict = field(default_factory=dict)

    @property
    def versions_url(self) -> str:
        return f"{self.base_url}/ocpi/versions"

    def credentials(self, token: str) -> dict:
        """The eMSP's Credentials object carrying `token` (what cms is to call it with)."""
        return {
            "token": token,
            "url": self.versions_url,
            "roles": [
                {
                    "role": "EMSP",
                    "business_details": {"name": self.name},
                    "party_id": self.party_id,
                    "country_code": self.country_code,
                }
            ],
        }

    def store(self, module: str, key, value) -> None:
        self.objects.setdefault(module, {})[key] = value

    def stored(self, module: str, key):
        return self.objects.get(module, {}).get(key)
