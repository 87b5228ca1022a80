"""Stand-in for Agent Zero's helpers/api.py (see ../README.md): ApiHandler and the /api dispatch
with its auth, CSRF, API-key and loopback checks, as Agent Zero applies them."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import threading
from abc import abstractmethod
from functools import wraps
from pathlib import Path
from typing import Any, Dict, Union

from flask import Flask, Request, Response, redirect, request, session  # noqa: F401

Input = dict
Output = Union[Dict[str, Any], Response]

RUNTIME_ID = "standin"
CREDENTIALS: dict[str, str] = {}  # user -> password; empty: login not required
API_KEY = "standin-api-key"


def credentials_hash() -> str:
    if not CREDENTIALS:
        return ""
    user, password = next(iter(CREDENTIALS.items()))
    return hashlib.sha256(f"{user}:{password}".encode()).hexdigest()


class ApiHandler:
    def __init__(self, app: Flask, thread_lock: threading.Lock):
        self.app = app
        self.thread_lock = thread_lock

    @classmethod
    def requires_loopback(cls) -> bool:
        return False

    @classmethod
    def requires_api_key(cls) -> bool:
        return False

    @classmethod
    def requires_auth(cls) -> bool:
        return True

    @classmethod
    def get_methods(cls) -> list[str]:
        return ["POST"]

    @classmethod
    def requires_csrf(cls) -> bool:
        return cls.requires_auth()

    @abstractmethod
    async def process(self, input: Input, request: Request) -> Output:
        pass

    async def handle_request(self, request: Request) -> Response:
        try:
            input_data: Input = {}
            if request.is_json:
                try:
                    if request.data:
                        input_data = request.get_json()
                except Exception:
                    input_data = {}
            output = await self.process(input_data, request)
            if isinstance(output, Response):
                return output
            return Response(response=json.dumps(output), status=200, mimetype="application/json")
        except Exception as e:  # Agent Zero answers an exception with 500 and its text
            return Response(response=str(e), status=500, mimetype="text/plain")


def requires_api_key(f):
    @wraps(f)
    async def decorated(*args, **kwargs):
        if request.headers.get("X-API-KEY") != API_KEY:
            return Response("API key required", 401)
        return await f(*args, **kwargs)

    return decorated


def requires_loopback(f):
    @wraps(f)
    async def decorated(*args, **kwargs):
        if request.remote_addr not in ("127.0.0.1", "::1"):
            return Response("Access denied.", 403, {})
        return await f(*args, **kwargs)

    return decorated


def requires_auth(f):
    @wraps(f)
    async def decorated(*args, **kwargs):
        expected = credentials_hash()
        if not expected:
            return await f(*args, **kwargs)
        if session.get("authentication") != expected:
            return redirect("/login")
        return await f(*args, **kwargs)

    return decorated


def csrf_protect(f):
    @wraps(f)
    async def decorated(*args, **kwargs):
        token = session.get("csrf_token")
        header = request.headers.get("X-CSRF-Token")
        cookie = request.cookies.get("csrf_token_" + RUNTIME_ID)
        sent = header or cookie
        if not token or not sent or token != sent:
            return Response("CSRF token missing or invalid", 403)
        return await f(*args, **kwargs)

    return decorated


def load_classes_from_file(path: Path, base: type) -> list[type]:
    name = "standin_api_" + hashlib.sha1(str(path).encode()).hexdigest()
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [c for _, c in inspect.getmembers(module, inspect.isclass)
            if issubclass(c, base) and c is not base and c.__module__ == module.__name__]


def register_api_route(app: Flask, lock: threading.Lock, builtin_api: Path, plugin_roots: list[Path]) -> None:
    async def _dispatch(path: str):
        handler_cls = None
        builtin = builtin_api / f"{path}.py"
        if builtin.is_file():
            classes = load_classes_from_file(builtin, ApiHandler)
            handler_cls = classes[0] if classes else None
        if handler_cls is None and path.startswith("plugins/"):
            parts = path.split("/", 2)
            if len(parts) == 3:
                _, plugin_name, handler_name = parts
                for root in plugin_roots:
                    plugin_file = root / plugin_name / "api" / f"{handler_name}.py"
                    if (root / plugin_name / "plugin.yaml").is_file() and plugin_file.is_file():
                        classes = load_classes_from_file(plugin_file, ApiHandler)
                        handler_cls = classes[0] if classes else None
                        break
        if handler_cls is None:
            return Response(f"API endpoint not found: {path}", 404)
        if request.method not in handler_cls.get_methods():
            return Response(f"Method {request.method} not allowed for: {path}", 405)

        async def call_handler():
            return await handler_cls(app, lock).handle_request(request=request)

        handler_fn = call_handler
        if handler_cls.requires_csrf():
            handler_fn = csrf_protect(handler_fn)
        if handler_cls.requires_api_key():
            handler_fn = requires_api_key(handler_fn)
        if handler_cls.requires_auth():
            handler_fn = requires_auth(handler_fn)
        if handler_cls.requires_loopback():
            handler_fn = requires_loopback(handler_fn)
        return await handler_fn()

    app.add_url_rule("/api/<path:path>", "api_dispatch", _dispatch,
                     methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
