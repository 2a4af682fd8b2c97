# promtool, for the alert rules' checks and unit tests (crates/cms/tests/deploy_monitoring.rs).
# Debian's `prometheus` package provides /usr/bin/promtool; it is installed when missing (about
# 7 s and 100 MB with --no-install-recommends). On a host run by systemd the package would also
# start a Prometheus server: the tests need none, so it is stopped and disabled again.
ensure_promtool() {
  if command -v promtool >/dev/null 2>&1; then
    return
  fi
  echo "== installing promtool (Debian package prometheus)"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  if [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
  command -v promtool >/dev/null
}
