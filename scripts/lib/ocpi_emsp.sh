# The independent OCPI eMSP of the end-to-end tests (tests/interop/ocpi_emsp, run by
# tests/e2e/support/ocpi_emsp.rs): the PyPI extrawest-ocpi framework, which pins pydantic 1, in a
# venv of its own at $CMS_OCPI_EMSP_VENV (default $HOME/.cache/cms-ocpi-emsp-venv; the Rust side
# looks in the same place). The venv is made when missing, and the pinned packages installed
# unless exactly those versions are there already, so a run on a prepared machine costs nothing.
OCPI_EMSP_REQUIREMENTS=tests/interop/ocpi_emsp/requirements.txt

ensure_ocpi_emsp() {
  local venv="${CMS_OCPI_EMSP_VENV:-$HOME/.cache/cms-ocpi-emsp-venv}"
  if [ ! -x "$venv/bin/python" ]; then
    echo "== making the OCPI eMSP's venv in $venv"
    python3 -m venv "$venv"
  fi
  if ocpi_emsp_installed "$venv/bin/python"; then
    return
  fi
  echo "== installing the OCPI eMSP's packages in $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$OCPI_EMSP_REQUIREMENTS"
  ocpi_emsp_installed "$venv/bin/python"
}

# True when every pinned requirement is installed at exactly its version in the venv.
ocpi_emsp_installed() {
  "$1" - "$OCPI_EMSP_REQUIREMENTS" >/dev/null 2>&1 <<'PY'
import sys
from importlib.metadata import version
for line in open(sys.argv[1]):
    requirement = line.split("#")[0].strip()
    if requirement:
        name, pinned = requirement.split("==")
        if version(name.strip()) != pinned.strip():
            sys.exit(f"{requirement}: installed {version(name.strip())}")
import py_ocpi, uvicorn
PY
}
