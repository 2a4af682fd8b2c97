"""The eMSP's business logic as the `py_ocpi` framework asks for it: a Crud class (the library's
endpoints call it with what they parsed and validated) and an Authenticator (which tokens may
call). Both are classes of class methods, made for one State.
"""

import asyncio
import itertools

from fastapi.encoders import jsonable_encoder
from py_ocpi.core.authentication.authenticator import Authenticator
from py_ocpi.core.crud import Crud
from py_ocpi.core.enums import Action, ModuleID

from .state import Peer, State, new_token, now

CREDENTIALS = ModuleID.credentials_and_registration
# The modules whose objects the eMSP receives under /{country_code}/{party_id}/{id}.
KEYED = (ModuleID.locations, ModuleID.sessions, ModuleID.tariffs)


def authenticator_for(state: State):
    class EmspAuthenticator(Authenticator):
        @classmethod
        async def get_valid_token_c(cls):
            return list(state.tokens_c)

        @classmethod
        async def get_valid_token_a(cls):
            return list(state.tokens_a)

    return EmspAuthenticator


def crud_for(state: State):
    references = itertools.count(1)

    def token_of(uid: str, token_type="RFID") -> dict:
        """A token the eMSP pushed, or (for an answer configured without a push) one made up."""
        known = state.tokens.get(uid.upper())
        if known:
            return known
        return {
            "country_code": state.country_code,
            "party_id": state.party_id,
            "uid": uid,
            "type": getattr(token_type, "value", token_type),
            "contract_id": uid[:36],
            "issuer": state.name,
            "valid": True,
            "whitelist": "ALLOWED",
            "last_updated": now(),
        }

    def connect(data: dict, old_token) -> dict:
        """cms registered (POST) or updated its registration (PUT): keep what it sent, give it a
        fresh token, and retire the one it called with (token A or the previous one)."""
        credentials = jsonable_encoder(data["credentials"])
        state.peer = Peer(
            versions_url=credentials["url"],
            token=credentials["token"],
            endpoints=jsonable_encoder(data["endpoints"]).get("endpoints", []),
            roles=credentials["roles"],
        )
        state.tokens_a.discard(old_token)
        state.tokens_c.discard(old_token)
        token = new_token()
        state.tokens_c.add(token)
        return state.credentials(token)

    async def authorize(data: dict) -> dict:
        uid = data["token_uid"]
        answer = state.authorize.get(uid.upper(), {})
        await asyncio.sleep(float(answer.get("delay", 0)))
        token = token_of(uid, data["token_type"])
        allowed = answer.get("allowed") or ("ALLOWED" if token["valid"] else "BLOCKED")
        result = {
            "allowed": allowed,
            "token": token,
            "authorization_reference": f"AUTH-{next(references)}",
            "location": data.get("location_reference"),
        }
        if answer.get("info"):
            result["info"] = answer["info"]
        return result

    class EmspCrud(Crud):
        @classmethod
        async def get(cls, module, role, id, *args, **kwargs):
            if module == CREDENTIALS:
                return state.credentials(id) if id in state.tokens_c else None
            if module in KEYED:
                return state.stored(module, (kwargs["country_code"], kwargs["party_id"], id))
            if module == ModuleID.cdrs:
                return state.stored(module, id)
            if module == ModuleID.tokens:
                known = id.upper() in state.tokens or id.upper() in state.authorize
                return token_of(id, kwargs.get("token_type", "RFID")) if known else None
            return None

        @classmethod
        async def list(cls, module, role, filters, *args, **kwargs):
            items = list(state.tokens.values()) if module == ModuleID.tokens else []
            offset, limit = filters["offset"], filters["limit"]
            page = items[offset : offset + limit]
            return page, len(items), offset + limit >= len(items)

        @classmethod
        async def create(cls, module, role, data, *args, **kwargs):
            if module == CREDENTIALS:
                return connect(data, kwargs.get("auth_token"))
            if module in KEYED:
                key = (kwargs["country_code"], kwargs["party_id"], data["id"])
                state.store(module, key, data)
            elif module == ModuleID.cdrs:
                state.store(module, data["id"], data)
            return data

        @classmethod
        async def update(cls, module, role, data, id, *args, **kwargs):
            if module == CREDENTIALS:
                return connect(data, kwargs.get("auth_token"))
            if module in KEYED:
                state.store(module, (kwargs["country_code"], kwargs["party_id"], id), data)
            elif module == ModuleID.commands:
                command = state.commands.setdefault(id, {"command": None, "results": []})
                command["results"].append(jsonable_encoder(data))
            return data

        @classmethod
        async def delete(cls, module, role, id, *args, **kwargs):
            if module == CREDENTIALS:
                state.tokens_c.discard(id)
                state.peer = None
            elif module in KEYED:
                key = (kwargs["country_code"], kwargs["party_id"], id)
                state.objects.get(module, {}).pop(key, None)

        @classmethod
        async def do(cls, module, role, action, *args, data=None, **kwargs):
            if module == ModuleID.tokens and action == Action.authorize_token:
                return await authorize(data)
            return None

    return EmspCrud
