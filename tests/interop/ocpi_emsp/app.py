"""The eMSP application: the library's `get_application` with the eMSP role of OCPI 2.2.1 and the
modules cms talks to, the control API beside it, and the recorder around both. Imported only
after __main__ put the library's settings (host, country code, party id) in the environment.
"""

from typing import Callable

from py_ocpi import get_application
from py_ocpi.core.enums import ModuleID, RoleEnum
from py_ocpi.modules.versions.enums import VersionNumber

from . import control
from .cms_client import Failed
from .library import authenticator_for, crud_for
from .recorder import Recorder
from .state import State

MODULES = [
    ModuleID.credentials_and_registration,
    ModuleID.locations,
    ModuleID.tariffs,
    ModuleID.sessions,
    ModuleID.cdrs,
    ModuleID.tokens,
    ModuleID.commands,
]


def build(state: State, ready: Callable[[], None]):
    app = get_application(
        version_numbers=[VersionNumber.v_2_2_1],
        roles=[RoleEnum.emsp],
        crud=crud_for(state),
        modules=MODULES,
        authenticator=authenticator_for(state),
    )
    app.include_router(control.router_for(state))
    app.add_exception_handler(control.Bad, control.bad_request)
    app.add_exception_handler(Failed, control.failed)
    app.add_event_handler("startup", ready)
    return Recorder(app, state)
