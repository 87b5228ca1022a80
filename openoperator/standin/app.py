"""The stand-in's web app: a login (Agent Zero's session `authentication`), the CSRF token
endpoint and the /api dispatch over the user plugins in <root>/usr/plugins."""

from __future__ import annotations

import threading
from pathlib import Path

from flask import Flask, Response, request, send_from_directory, session

from helpers import api, extension

HERE = Path(__file__).resolve().parent


def create_app(root: Path, user: str = "operator", password: str = "pass") -> Flask:
    app = Flask("standin")
    app.secret_key = "standin-secret"
    app.config.update(SESSION_COOKIE_NAME="session_" + api.RUNTIME_ID, SESSION_COOKIE_SAMESITE="Strict")
    api.CREDENTIALS.clear()
    api.CREDENTIALS[user] = password
    roots = [root / "usr" / "plugins"]
    extension.PLUGIN_ROOTS[:] = roots

    @app.route("/login", methods=["GET", "POST"])
    def login():
        if request.method == "POST":
            if request.form.get("username") == user and request.form.get("password") == password:
                session["authentication"] = api.credentials_hash()
                return Response("ok", 200)
            return Response("bad credentials", 401)
        return Response(
            '<form method="post" action="/login"><input name="username" id="username">'
            '<input name="password" id="password" type="password"><button id="login">Log in</button></form>',
            200, mimetype="text/html",
        )

    @app.route("/plugins/<name>/webui/<path:file>")
    @api.requires_auth
    async def plugin_page(name: str, file: str):
        # A plugin's web pages, behind the login (where Agent Zero mounts them is its own affair).
        return send_from_directory(roots[0] / name / "webui", file)

    api.register_api_route(app, threading.Lock(), HERE / "api", roots)
    return app
