# Registers a command to run when the calling shell exits, beside those registered before it
# (a plain `trap ... EXIT` would replace them).
at_exit() {
  CMS_AT_EXIT="${CMS_AT_EXIT:-}$1;"
  # shellcheck disable=SC2064
  trap "$CMS_AT_EXIT" EXIT
}
