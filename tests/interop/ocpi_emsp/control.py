"""The test's control API under /control, plain JSON (README.md lists every call). A call that
reached cms answers 200 with `"ok"` saying whether cms answered as OCPI says (and `step`,
`error`, `status`, `answer` when not); a control request that makes no sense answers 400
`{"error": ...}`.
"""

from fastapi import APIRouter, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from .cms_client import Client, Failed
from .state import State, new_token

MODULES = ("locations", "tariffs", "sessions", "cdrs")


def router_for(state: State) -> APIRouter:
    router = APIRouter(prefix="/control")
    client = Client(state)

    async def body_of(request: Request) -> dict:
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise Bad("the body must be a JSON object")
        return body

    async def run(work):
        try:
            return await work
        except Failed as e:
            return e.outcome
        except ValidationError as e:
            return JSONResponse({"error": str(e), "errors": e.errors()}, status_code=400)

    @router.get("/state")
    async def get_state():
        peer = state.peer
        return {
            "country_code": state.country_code,
            "party_id": state.party_id,
            "versions_url": state.versions_url,
            "tokens_a": sorted(state.tokens_a),
            "tokens_c": sorted(state.tokens_c),
            "peer": peer.__dict__ if peer else None,
        }

    @router.post("/register")
    async def register(request: Request):
        body = await body_of(request)
        if not isinstance(body.get("versions_url"), str) or not isinstance(body.get("token"), str):
            raise Bad('give {"versions_url": "...", "token": "..."}')
        return await run(client.register(body["versions_url"], body["token"]))

    @router.post("/token-a")
    async def token_a():
        token = new_token()
        state.tokens_a.add(token)
        return {"token": token, "versions_url": state.versions_url}

    @router.get("/received")
    async def received(module: str = None):
        got = [r for r in state.received if module in (None, r["module"])]
        return {"requests": got}

    @router.get("/sent")
    async def sent():
        return {"requests": state.sent}

    @router.get("/objects/{module}")
    async def objects(module: str):
        stored = state.objects.get(module, {})
        return {"objects": jsonable_encoder(list(stored.values()))}

    @router.get("/commands")
    async def commands():
        return {"commands": state.commands}

    @router.post("/pull")
    async def pull(request: Request):
        body = await body_of(request)
        if body.get("module") not in MODULES:
            raise Bad(f"module is one of {MODULES}")
        return await run(client.pull(body["module"], body.get("path"), body.get("params")))

    @router.put("/tokens")
    async def put_token(request: Request):
        return await push(request, "PUT")

    @router.patch("/tokens")
    async def patch_token(request: Request):
        return await push(request, "PATCH")

    async def push(request: Request, method: str):
        body = await body_of(request)
        if not isinstance(body.get("uid"), str):
            raise Bad('give the token\'s fields, "uid" at least')
        return await run(client.push_token(body, method))

    @router.post("/commands/{command}")
    async def command(command: str, request: Request):
        return await run(client.command(command, await body_of(request)))

    @router.put("/authorize/{uid}")
    async def set_authorize(uid: str, request: Request):
        body = await body_of(request)
        allowed = body.get("allowed", "ALLOWED")
        delay = body.get("delay", 0)
        if not isinstance(delay, (int, float)) or delay < 0:
            raise Bad("delay is a number of seconds, 0 or more")
        state.authorize[uid.upper()] = {"allowed": allowed, "delay": delay,
                                        "info": body.get("info")}
        return {"ok": True, "uid": uid, "allowed": allowed, "delay": delay}

    @router.post("/call")
    async def call(request: Request):
        body = await body_of(request)
        url = body.get("url")
        if url is None and body.get("module"):
            url = client.module_url(body["module"]).rstrip("/") + body.get("path", "")
        if not isinstance(url, str):
            raise Bad('give "url", or "module" (and "path")')
        token = body.get("token") or (state.peer.token if state.peer else "")
        method = body.get("method", "GET")
        return await run(client.call(method, url, token, body.get("body"), body.get("params")))

    return router


class Bad(Exception):
    """A control request that makes no sense: 400 {"error": ...}."""


async def bad_request(request: Request, e: Bad):
    return JSONResponse({"error": str(e)}, status_code=400)


async def failed(request: Request, e: Failed):
    """A call to cms that could not be made or went wrong, raised outside [`run`]."""
    return JSONResponse(e.outcome)
