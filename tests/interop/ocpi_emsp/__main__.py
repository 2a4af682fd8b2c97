"""python -m ocpi_emsp [--port P] [--country-code CC] [--party-id PID] [--name N]
[--exit-with-stdin]

Listens on 127.0.0.1:P (0, the default: a free port) and prints `listening PORT` as its first
stdout line once it serves. --exit-with-stdin: exit when stdin reaches its end (the test that
started it went away). Logs go to stderr.
"""

import argparse
import os
import socket
import sys
import threading


def main():
    arguments = argparse.ArgumentParser(prog="python -m ocpi_emsp")
    arguments.add_argument("--port", type=int, default=0)
    arguments.add_argument("--country-code", default="NL")
    arguments.add_argument("--party-id", default="EMP")
    arguments.add_argument("--name", default="Independent eMSP")
    arguments.add_argument("--exit-with-stdin", action="store_true")
    options = arguments.parse_args()

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", options.port))
    listener.listen(128)
    port = listener.getsockname()[1]
    # The library reads its settings once, at import: the URLs it publishes (versions, version
    # details, endpoints) are built from OCPI_HOST and PROTOCOL. CiStrings it parses are kept in
    # capitals (its default lower-cases them: "nl", "emp", a token "tag-1").
    os.environ.update(
        OCPI_HOST=f"127.0.0.1:{port}",
        PROTOCOL="http",
        COUNTRY_CODE=options.country_code,
        PARTY_ID=options.party_id,
        PROJECT_NAME=options.name,
        CI_STRING_LOWERCASE_PREFERENCE="false",
        ENVIRONMENT="production",
    )
    # Only loopback is ever called: a proxy of the environment would stand in the way (httpx,
    # which the library's credentials handler uses, honours them).
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        os.environ.pop(name, None)
        os.environ.pop(name.upper(), None)
    import uvicorn

    from .app import build
    from .state import State

    state = State(options.country_code, options.party_id, options.name,
                  f"http://127.0.0.1:{port}")

    def ready():
        sys.stdout.write(f"listening {port}\n")
        sys.stdout.flush()

    if options.exit_with_stdin:
        threading.Thread(target=exit_at_eof, daemon=True).start()
    config = uvicorn.Config(build(state, ready), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[listener])


def exit_at_eof():
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
