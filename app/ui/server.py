"""The web server: sign-in pages, tenant-checked downloads, and the studio (Gradio) behind them.

Every request to the studio is resolved to a signed-in user by the session cookie a browser gets
at sign-in, or by a bearer token a script gets from POST /api/session; the studio's handlers then
act for that user's business only. A file the asset store holds (named by its SHA-256) is served
only to a business that owns it, whether asked through /download or through Gradio's file routes.
"""

from __future__ import annotations

import json
import logging
import posixpath
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import PurePosixPath
from urllib.parse import unquote

import gradio as gr
from fastapi import FastAPI, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response

from app.services import AppContext, accounts, files, user_errors
from app.services.context import open_engine
from app.services.worker import Worker
from app.ui import pages, web

COOKIE = "spotforge_session"
PUBLIC = ("/login", "/signup", "/api/session", "/favicon.ico")
log = logging.getLogger(__name__)


def token_of(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.cookies.get(COOKIE)


def create_app(ctx: AppContext, *, worker: bool = True) -> FastAPI:
    """The whole app. `worker=False` leaves the job queue to another process."""
    engine = open_engine(ctx.settings)
    background = Worker(ctx, engine) if worker else None

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        if background is not None:
            background.start()
        yield
        if background is not None:
            background.stop(timeout=30)
        engine.close()

    app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)

    def account(request: Request) -> accounts.Account | None:
        return accounts.account_for(ctx, token_of(request))

    @app.middleware("http")
    async def guard(request: Request, call_next):
        path = unquote(request.url.path)
        if path in PUBLIC:
            return await call_next(request)
        who = await run_in_threadpool(account, request)
        if who is None and path in ("/", ""):
            return RedirectResponse("/login", status_code=303)
        stored = _gradio_file_name(path)
        if stored is not None:
            owned = who is not None and await run_in_threadpool(
                files.owns_stored_file, ctx, who.business_id, stored
            )
            if owned is False:
                return Response("Not found", status_code=404)
        return await call_next(request)

    @app.get("/login", response_class=HTMLResponse)
    def login_page() -> str:
        return pages.sign_in()

    @app.post("/login")
    def login(request: Request, email: str = Form(""), password: str = Form("")) -> Response:
        try:
            token = accounts.sign_in(ctx, email, password)
        except accounts.SignInFailed as exc:
            return HTMLResponse(pages.sign_in(str(exc), email), status_code=401)
        return _signed_in(token, request)

    @app.get("/signup", response_class=HTMLResponse)
    def signup_page() -> str:
        return pages.sign_up()

    @app.post("/signup")
    def signup(
        request: Request,
        business: str = Form(""),
        email: str = Form(""),
        password: str = Form(""),
    ) -> Response:
        try:
            accounts.sign_up(ctx, business, email, password)
            token = accounts.sign_in(ctx, email, password)
        except ValueError as exc:
            return HTMLResponse(pages.sign_up(str(exc), business, email), status_code=400)
        return _signed_in(token, request)

    @app.post("/logout")
    def logout(request: Request) -> Response:
        token = token_of(request)
        if token:
            accounts.sign_out(ctx, token)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    @app.post("/api/session")
    async def api_session(request: Request) -> Response:
        """For scripts: {"email", "password"} -> {"token"}; send it as `Authorization: Bearer`."""
        try:
            body = await request.json()
            token = await run_in_threadpool(
                accounts.sign_in, ctx, str(body["email"]), str(body["password"])
            )
        except (KeyError, TypeError, json.JSONDecodeError):
            return JSONResponse({"error": 'send {"email": ..., "password": ...}'}, 400)
        except accounts.SignInFailed as exc:
            return JSONResponse({"error": str(exc)}, 401)
        return JSONResponse({"token": token})

    def for_owner(request: Request, fetch: Callable[[int], Response]) -> Response:
        """`fetch(business_id)` for a signed-in user; another business's file is not found."""
        who = account(request)
        if who is None:
            return Response("Sign in first", status_code=401)
        try:
            return fetch(who.business_id)
        except user_errors():
            return Response("Not found", status_code=404)

    @app.get("/download/render/{render_id}")
    def download_render(render_id: int, request: Request) -> Response:
        def send(business: int) -> Response:
            found = files.render_download(ctx, business, render_id)
            return FileResponse(found.path, media_type=found.media_type, filename=found.filename)

        return for_owner(request, send)

    @app.get("/download/render/{render_id}/qc.json")
    def download_qc(render_id: int, request: Request) -> Response:
        def send(business: int) -> Response:
            disposition = f'attachment; filename="spotforge-render{render_id}-qc.json"'
            report = files.qc_report(ctx, business, render_id)
            return JSONResponse(report, headers={"Content-Disposition": disposition})

        return for_owner(request, send)

    async def user(request: Request) -> str | None:
        who = await run_in_threadpool(account, request)  # a query: off the event loop
        return None if who is None else str(who.user_id)

    studio = web.build(ctx, engine)
    return gr.mount_gradio_app(
        app,
        studio,
        path="/",
        auth_dependency=user,
        css=web.CSS,
        show_error=False,
        footer_links=["api"],
        max_file_size=ctx.settings.max_asset_bytes,
        allowed_paths=[str(ctx.settings.resolved_asset_dir), str(ctx.settings.data_dir.resolve())],
    )


def _signed_in(token: str, request: Request) -> Response:
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        COOKIE,
        token,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",  # behind TLS, never sent in the clear
        max_age=accounts.SESSION_DAYS * 86400,
    )
    return response


def _gradio_file_name(path: str) -> str | None:
    """The name of the file a Gradio file route serves (`.../file=<path>`, `.../file/<path>`),
    after `.` and `..` are resolved as Gradio resolves them."""
    for marker in ("/file=", "/gradio_api/file/"):
        if marker in path:
            return PurePosixPath(posixpath.normpath("/" + path.split(marker, 1)[1])).name
    return None


def serve(ctx: AppContext) -> None:
    import uvicorn

    uvicorn.run(create_app(ctx), host=ctx.settings.host, port=ctx.settings.port, log_level="info")
