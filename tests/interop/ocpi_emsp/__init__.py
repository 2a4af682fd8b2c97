"""An independent OCPI 2.2.1 eMSP for cms's end-to-end tests, built on the PyPI `extrawest-ocpi`
framework (`py_ocpi`): the library serves the eMSP role's endpoints and validates what cms sends
with its own pydantic schemas; a small control API (`/control/...`) lets a test drive it. See
README.md beside this file.
"""
