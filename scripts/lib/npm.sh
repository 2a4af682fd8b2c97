# The npm packages of the end-to-end tests' Node peers (tests/interop/ocpp_rpc_station: the
# ocpp-rpc client as an OCPP 2.0.1 station; tests/browser: playwright-core and axe-core, which
# drive the console in Debian's Chromium). `npm ci` from the committed lock, only when
# node_modules is absent or the lock changed since the last install (a stamp in node_modules
# holds the lock's checksum), so a run on a prepared machine costs nothing.
NPM_PEER_DIRS=(tests/interop/ocpp_rpc_station tests/browser)

ensure_npm_packages() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "node and npm are needed for the OCPP 2.0.1 interop tests (tests/interop/ocpp_rpc_station):" \
      "install Node.js 18 or later (Debian packages nodejs and npm)" >&2
    return 1
  fi
  local dir sum
  for dir in "${NPM_PEER_DIRS[@]}"; do
    sum=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
    if [ -f "$dir/node_modules/.cms-lock-sha256" ] &&
      [ "$(cat "$dir/node_modules/.cms-lock-sha256")" = "$sum" ]; then
      continue
    fi
    echo "== npm ci in $dir"
    (cd "$dir" && CI=true npm ci --no-audit --no-fund --loglevel=error </dev/null)
    echo "$sum" >"$dir/node_modules/.cms-lock-sha256"
  done
}
