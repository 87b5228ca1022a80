"""The bases of the plugin's API handlers. Auth and CSRF are declared here rather than inherited
from Agent Zero's `ApiHandler`, so a build whose base class relaxes them (some OpenOperator builds
do on Hugging Face Spaces) does not relax the plugin's.

Handlers import this module, not its classes: Agent Zero takes the last `ApiHandler` subclass in a
handler file's namespace (by name), and a base imported by name could be taken instead."""

from helpers.api import ApiHandler


class Handler(ApiHandler):
    @classmethod
    def requires_auth(cls) -> bool:
        return True

    @classmethod
    def requires_csrf(cls) -> bool:
        return True


class ReadHandler(Handler):
    """A read-only handler: answers GET and POST."""

    @classmethod
    def get_methods(cls) -> list[str]:
        return ["GET", "POST"]
