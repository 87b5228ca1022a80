"""Stand-in for Agent Zero's api/csrf_token.py: the session's CSRF token, made on first ask."""

import secrets

from helpers.api import RUNTIME_ID, ApiHandler, session


class GetCsrfToken(ApiHandler):
    @classmethod
    def get_methods(cls) -> list[str]:
        return ["GET"]

    @classmethod
    def requires_csrf(cls) -> bool:
        return False

    async def process(self, input, request):
        if "csrf_token" not in session:
            session["csrf_token"] = secrets.token_urlsafe(32)
        return {"ok": True, "token": session["csrf_token"], "runtime_id": RUNTIME_ID}
