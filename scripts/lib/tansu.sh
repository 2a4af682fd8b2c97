# The Kafka-protocol broker of the tests and benches: tansu, built from crates.io once and cached
# in its own root (about 10 minutes on a 2-core machine the first time). A plain
# `cargo install tansu` has no storage engine at all: `dynostore` brings the in-memory one (the
# shared test broker) and `libsql` the file-backed one (the fault tests kill the broker and start
# it again on the same data).
. "$(dirname "${BASH_SOURCE[0]}")/at_exit.sh"
TANSU_VERSION=0.6.0
TANSU_ROOT="${TANSU_ROOT:-$HOME/.cache/tansu-libsql}"
export PATH="$TANSU_ROOT/bin:$PATH"
export CMS_TEST_TANSU="$TANSU_ROOT/bin/tansu"

tansu_installed() {
  "$CMS_TEST_TANSU" --version 2>/dev/null | grep -q "$TANSU_VERSION"
}

TANSU_INSTALL=(cargo install tansu --version "$TANSU_VERSION" --locked --features dynostore,libsql
  --root "$TANSU_ROOT" --quiet)

# Starts building tansu in the background when it is missing, so that a fresh machine builds
# it while the lints run instead of after them; `ensure_tansu` then waits for it. In a process
# group of its own (setsid), so that the calling shell, should it end first (a lint failed,
# Ctrl-C), stops cargo and its compilers with it.
begin_tansu_install() {
  if tansu_installed; then
    return
  fi
  TANSU_INSTALL_LOG="${TMPDIR:-/tmp}/cms-tansu-install.$$.log"
  echo "== installing tansu $TANSU_VERSION in the background (once; several minutes; log: $TANSU_INSTALL_LOG)"
  setsid --wait "${TANSU_INSTALL[@]}" >"$TANSU_INSTALL_LOG" 2>&1 &
  TANSU_INSTALL_PID=$!
  at_exit '[ -z "${TANSU_INSTALL_PID:-}" ] || kill -- "-$TANSU_INSTALL_PID" 2>/dev/null || true'
}

ensure_tansu() {
  if [ -n "${TANSU_INSTALL_PID:-}" ]; then
    local pid="$TANSU_INSTALL_PID"
    TANSU_INSTALL_PID=""
    if ! wait "$pid"; then
      echo "installing tansu failed; its log:" >&2
      cat "$TANSU_INSTALL_LOG" >&2
      return 1
    fi
  fi
  if tansu_installed; then
    return
  fi
  echo "== installing tansu $TANSU_VERSION with memory and SQLite storage (once; several minutes)"
  "${TANSU_INSTALL[@]}"
}

# A free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts an in-memory tansu on a free port, exports CMS_TEST_KAFKA_BROKERS, and stops it when the
# calling shell exits.
start_test_broker() {
  local port log
  port=$(free_port)
  log="${TMPDIR:-/tmp}/cms-test-tansu-$port.log"
  tansu broker --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port" \
    --storage-engine "memory://tansu/" >"$log" 2>&1 &
  TEST_BROKER_PID=$!
  at_exit 'kill "$TEST_BROKER_PID" 2>/dev/null || true'
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      export CMS_TEST_KAFKA_BROKERS="127.0.0.1:$port"
      echo "== test broker: tansu on $CMS_TEST_KAFKA_BROKERS (log: $log)"
      return
    fi
    sleep 0.1
  done
  echo "tansu did not start; its log:" >&2
  cat "$log" >&2
  return 1
}
