# Debian's Chromium, which the console's browser tests (tests/e2e/console) drive through
# playwright-core: installed when /usr/bin/chromium is missing (nothing is downloaded by the
# test tools themselves). About 30 s and 300 MB on a fresh machine.
ensure_chromium() {
  if [ -x /usr/bin/chromium ]; then
    return
  fi
  echo "== installing chromium (Debian package)"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
  [ -x /usr/bin/chromium ]
}
