"""The stand-in's web app: a login (Agent Zero's session `authentication`), the CSRF token
endpoint and the /api dispatch over the user plugins in <root>/usr/plugins."""

from __future__ import annotations

import threading
from pathlib import Path

from flask import Flask, Response, request, session

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
        return Response("login form", 200)

    api.register_api_route(app, threading.Lock(), HERE / "api", roots)
    return app
