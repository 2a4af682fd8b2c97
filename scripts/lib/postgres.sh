# The PostgreSQL of the tests: a throwaway cluster in a temporary directory, no system service.
# Debian's `postgresql` package provides the server binaries; it is installed when missing.
. "$(dirname "${BASH_SOURCE[0]}")/at_exit.sh"

ensure_postgres() {
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v openssl >/dev/null; then
    return
  fi
  echo "== installing PostgreSQL (Debian package postgresql)"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql openssl >/dev/null
}

# Starts a cluster on a free port, exports CMS_TEST_POSTGRES_URL (a superuser URL: each test
# creates its own database), and stops the cluster when the calling shell exits. initdb refuses
# to run as root, so as root the cluster belongs to the `postgres` user.
start_test_postgres() {
  local bin dir port as=()
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/cms-test-pg.XXXXXX")
  port=$(free_port)
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$dir"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    return 1
  }
  # TLS on (clients choose: the tests connect both ways), with a throwaway CA whose certificate
  # the TLS tests trust (CMS_TEST_POSTGRES_CA).
  test_postgres_certificates "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$dir/server.crt" "$dir/server.key"
  fi
  # Durability settings off: the cluster lives for one test run.
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
    "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400 -c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key" \
    start >/dev/null || {
    cat "$dir/server.log" >&2
    return 1
  }
  TEST_POSTGRES_STOP=("${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop)
  TEST_POSTGRES_DIR=$dir
  at_exit 'stop_test_postgres'
  export CMS_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
  export CMS_TEST_POSTGRES_CA="$dir/ca.crt"
  echo "== test PostgreSQL: $CMS_TEST_POSTGRES_URL (log: $dir/server.log)"
}

# A CA and a server certificate for 127.0.0.1 in DIR (ca.crt, server.crt, server.key), made with
# the openssl command line (Debian's openssl package), valid for a week.
test_postgres_certificates() {
  local dir=$1
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 \
    -subj "/CN=cms test PostgreSQL CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -subj "/CN=127.0.0.1" -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 7 -extfile "$dir/server.ext" -out "$dir/server.crt" 2>/dev/null
  chmod 600 "$dir/server.key"
}

# Stops the cluster and deletes its data (half a gigabyte after a run), keeping its log.
stop_test_postgres() {
  if [ -n "${TEST_POSTGRES_STOP+x}" ]; then
    "${TEST_POSTGRES_STOP[@]}" >/dev/null 2>&1 || true
    rm -rf "${TEST_POSTGRES_DIR:?}/data"
  fi
}
