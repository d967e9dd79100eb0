"""The web server: sign-in pages, tenant-checked downloads, and the studio (Gradio) behind them.

Every request to the studio is resolved to a signed-in session by the cookie a browser gets at
sign-in, or by a bearer token a script gets from POST /api/session; the studio's handlers then
act for that session's business only. Around every route (`guard`):
- a file route serves only what `app.services.files` allows this session, else 404;
- a state-changing request carried by the session cookie must come from the app's own origin
  (CSRF), and no other origin gets CORS;
- every response carries the security headers;
- sign-in is throttled (429 with Retry-After) per account and per client address.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
from collections.abc import Callable
from contextlib import asynccontextmanager, suppress
from urllib.parse import urlsplit

import gradio as gr
from fastapi import FastAPI, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.middleware.cors import CORSMiddleware

from app.services import (
    USER_ERRORS,
    AppContext,
    TryLater,
    accounts,
    delivery,
    files,
    user_errors,
)
from app.services.context import open_engine
from app.services.worker import Worker
from app.ui import pages, web
from app.ui.session import COOKIE, bearer, token_of

PUBLIC = ("/login", "/signup", "/api/session", "/favicon.ico")
FILE_ROUTES = ("/file=", "/file/", "/proxy=")  # Gradio's routes that send a file by its path
# Gradio routes the studio never uses; each is a way in (stored state by session hash, stored
# run assets, recordings run through ffmpeg, development and profiling hooks), so none answers.
UNUSED = (
    *(
        "/gradio_api/" + route
        for route in (
            "deep_link", "process_recording", "run-history", "profiling", "vibe-code",
            "undo-vibe-edit", "dev/", "token", "custom_component", "stream/",
        )
    ),
    "/monitoring",
)  # fmt: skip
UPLOAD = "/gradio_api/upload"
MAX_JSON_BYTES = 1 << 20  # the pages' own requests are a few kilobytes
# Headers a file answer may carry: Gradio's ranged answer copies the request's headers (the
# session cookie, the bearer token) into the response.
FILE_HEADERS = frozenset(
    ("content-type", "content-length", "content-range", "accept-ranges", "content-disposition",
     "etag", "last-modified", "date", "vary", "content-encoding")
)  # fmt: skip
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SWEEP_S = 60.0
# Gradio's page needs inline scripts and styles, and data:/blob: for its media players.
CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "media-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": CSP,
    "Cross-Origin-Opener-Policy": "same-origin",
}
log = logging.getLogger(__name__)


def create_app(ctx: AppContext, *, worker: bool = True) -> FastAPI:
    """The whole app. `worker=False` leaves the job queue to another process."""
    # Gradio writes uploads, and serves response files, under its temp dir: ours, emptied now.
    os.environ["GRADIO_TEMP_DIR"] = str(ctx.responses.root)
    ctx.responses.reset()
    engine = open_engine(ctx.settings)
    background = _worker(ctx, engine) if worker else None

    def sweep() -> None:
        ctx.responses.sweep(accounts.live_sessions(ctx))

    async def sweeping() -> None:
        while True:
            await asyncio.sleep(SWEEP_S)
            try:
                await run_in_threadpool(sweep)
            except Exception:  # the next sweep tries again
                log.exception("could not sweep the web folder")

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        sweeper = asyncio.create_task(sweeping())
        if background is not None:
            background.start()  # here, on the main thread: a pool keeps the signal handlers
        yield
        sweeper.cancel()
        with suppress(asyncio.CancelledError):
            await sweeper
        if background is not None:
            await run_in_threadpool(background.stop, 30)
        engine.close()

    app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    # No other origin may read responses; Gradio leaves CORS to the parent app when it has this.
    app.add_middleware(CORSMiddleware, allow_origins=[], allow_credentials=False)

    def account(request: Request) -> accounts.Account | None:
        return accounts.account_for(ctx, token_of(request.headers, request.cookies))

    @app.middleware("http")
    async def guard(request: Request, call_next):
        refused = await run_in_threadpool(_refusal, request)
        if refused is None and _is_json_post(request):  # an upload streams on to Gradio
            refused = await _json_refusal(request)
        if refused is not None:
            response = refused
        else:
            response = await call_next(request)
            path = request.scope["path"]
            if any(m in path for m in FILE_ROUTES):
                for name in [n for n in response.headers if n.lower() not in FILE_HEADERS]:
                    del response.headers[name]
            elif path == UPLOAD and response.status_code == 200:
                response = await _registered(request, response)
        response.headers.update(SECURITY_HEADERS)
        return response

    async def _registered(request: Request, response: Response) -> Response:
        """Gradio's answer to an upload, with its files noted as this session's own uploads:
        only those may be a handler's file inputs."""
        body = b"".join([chunk async for chunk in response.body_iterator])
        who = await run_in_threadpool(account, request)
        if who is not None:
            ctx.responses.received(who, json.loads(body))
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        return Response(body, response.status_code, headers, response.media_type)

    def _refusal(request: Request) -> Response | None:
        """The answer to a request that must not reach its route, or None."""
        path = request.scope["path"]  # percent-decoded once, as the routes see it
        if request.method in UNSAFE and not _same_origin(request):
            return Response("This request came from another site and was refused.", 403)
        if path in PUBLIC:
            return None
        if path.startswith(UNUSED) or "deep_link" in request.query_params:
            return Response("Not found", status_code=404)
        marker = next((m for m in FILE_ROUTES if m in path), None)
        if marker is not None:
            requested = path.split(marker, 1)[1]
            if not ctx.responses.may_serve(account(request), requested):
                return Response("Not found", status_code=404)
            return None
        if path in ("/", "") and account(request) is None:
            return RedirectResponse("/login", status_code=303)
        return None

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, __: RequestValidationError) -> Response:
        return JSONResponse({"error": "That request is not valid."}, 400)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        ref = secrets.token_hex(4)
        log.error("reference %s: %s %s failed", ref, request.method, request.url.path, exc_info=exc)
        message = {"error": f"Something went wrong on our side (reference {ref})."}
        return JSONResponse(message, 500, headers=SECURITY_HEADERS)  # outside `guard`

    def client(request: Request) -> str | None:
        return request.client.host if request.client else None

    @app.get("/login", response_class=HTMLResponse)
    def login_page() -> str:
        return pages.sign_in()

    @app.post("/login")
    def login(request: Request, email: str = Form(""), password: str = Form("")) -> Response:
        try:
            token = accounts.sign_in(ctx, email, password, client(request))
        except TryLater as exc:
            page = pages.sign_in(str(exc), email)
            return HTMLResponse(page, 429, headers=_retry_after(exc))
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
            accounts.sign_up(ctx, business, email, password, client(request))
            token = accounts.sign_in(ctx, email, password, client(request))
        except TryLater as exc:
            page = pages.sign_up(str(exc), business, email)
            return HTMLResponse(page, 429, headers=_retry_after(exc))
        except USER_ERRORS as exc:
            return HTMLResponse(pages.sign_up(str(exc), business, email), status_code=400)
        return _signed_in(token, request)

    @app.post("/logout")
    def logout(request: Request) -> Response:
        token = token_of(request.headers, request.cookies)
        who = account(request)
        if token:
            accounts.sign_out(ctx, token)
        if who is not None:
            ctx.responses.end_session(who.business_id, who.session_id)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    @app.post("/api/session")
    async def api_session(request: Request) -> Response:
        """For scripts: {"email", "password"} -> {"token"}; send it as `Authorization: Bearer`."""
        try:
            body = await request.json()
            email, password = str(body["email"]), str(body["password"])
        except (KeyError, TypeError, ValueError):
            return JSONResponse({"error": 'Send {"email": ..., "password": ...}.'}, 400)
        try:
            token = await run_in_threadpool(accounts.sign_in, ctx, email, password, client(request))
        except TryLater as exc:
            return JSONResponse({"error": str(exc)}, 429, headers=_retry_after(exc))
        except accounts.SignInFailed as exc:
            return JSONResponse({"error": str(exc)}, 401)
        return JSONResponse({"token": token})

    def for_owner(request: Request, render_id: int, fetch: Callable[[int], Response]) -> Response:
        """`fetch(business_id)` for a signed-in user; another business's file is not found."""
        who = account(request)
        if who is None:
            return Response("Sign in first", status_code=401)
        if not 0 < render_id < 2**31:
            return Response("Not found", status_code=404)
        try:
            return fetch(who.business_id)
        except user_errors():
            return Response("Not found", status_code=404)

    @app.get("/download/render/{render_id}")
    def download_render(render_id: int, request: Request) -> Response:
        def send(business: int) -> Response:
            found = files.render_download(ctx, business, render_id)
            return FileResponse(found.path, media_type=found.media_type, filename=found.filename)

        return for_owner(request, render_id, send)

    @app.get("/report/render/{render_id}")
    def qc_page(render_id: int, request: Request) -> Response:
        """A render's QC report to read: the page the studio links (its file is below)."""

        def send(business: int) -> Response:
            download = f"/download/render/{render_id}/qc.json"
            return HTMLResponse(files.qc_page(ctx, business, render_id, download, back="/"))

        return for_owner(request, render_id, send)

    @app.get("/download/render/{render_id}/qc.json")
    def download_qc(render_id: int, request: Request) -> Response:
        def send(business: int) -> Response:
            disposition = f'attachment; filename="spotforge-render{render_id}-qc.json"'
            report = files.qc_report(ctx, business, render_id)
            return JSONResponse(report, headers={"Content-Disposition": disposition})

        return for_owner(request, render_id, send)

    @app.get("/download/order/{order_id}/{name}")
    def download_delivered(order_id: int, name: str, request: Request) -> Response:
        """A delivered order's package or one of its masters, by the name it is filed under."""

        def send(business: int) -> Response:
            found = delivery.download(ctx, business, order_id, name)
            return FileResponse(found.path, media_type=found.media_type, filename=found.filename)

        return for_owner(request, order_id, send)

    async def user(request: Request) -> str | None:
        who = await run_in_threadpool(account, request)  # a query: off the event loop
        return None if who is None else str(who.user_id)

    studio = web.build(ctx, engine)
    database = ctx.settings.resolved_database_url.removeprefix("sqlite:///")
    return gr.mount_gradio_app(
        app,
        studio,
        path="/",
        auth_dependency=user,
        css=web.CSS,
        show_error=False,
        footer_links=["api"],
        max_file_size=ctx.settings.max_asset_bytes,
        allowed_paths=[],  # every file the pages show is published to the session's folder
        blocked_paths=[str(ctx.settings.resolved_asset_dir), str(ctx.settings.resolved_signing_dir)]
        + [database + suffix for suffix in ("", "-wal", "-shm", "-journal")],
    )


def _is_json_post(request: Request) -> bool:
    return request.method in UNSAFE and "json" in request.headers.get("content-type", "")


async def _json_refusal(request: Request) -> Response | None:
    """Refuse a JSON body too large for what the pages send, or one naming a file by address."""
    if int(request.headers.get("content-length") or 0) > MAX_JSON_BYTES:
        return Response("That request is too large.", 413)
    body = await request.body()  # kept: the route reads it again
    if len(body) > MAX_JSON_BYTES:
        return Response("That request is too large.", 413)
    if _names_a_url(body):
        return Response("Upload the file itself; addresses are not fetched.", 400)
    return None


def _names_a_url(body: bytes) -> bool:
    """Whether a request's JSON names a file by an http(s) address, which Gradio would fetch
    as if the user had uploaded it."""
    if b"http" not in body:
        return False
    try:
        found = json.loads(body)
    except ValueError:
        return False
    stack = [found]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            # An input's "path" is what Gradio fetches; its "url" is only where the page saw it.
            if str(item.get("path", "")).startswith(("http:", "https:")):
                return True
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return False


def _same_origin(request: Request) -> bool:
    """Whether a state-changing request may proceed: it names the app's own origin (Origin, or
    Referer), or carries no session cookie (a script's bearer token, a sign-in form)."""
    sent = request.headers.get("origin") or request.headers.get("referer")
    if sent:
        return urlsplit(sent).netloc == request.headers.get("host")
    return COOKIE not in request.cookies or bearer(request.headers) is not None


def _retry_after(exc: TryLater) -> dict[str, str]:
    return {"Retry-After": str(max(1, round(exc.retry_after_s)))}


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


def _worker(ctx: AppContext, engine):
    """A worker thread here, or with SPOTFORGE_WORKERS a pool of engine processes on Ray."""
    if not ctx.settings.workers:
        return Worker(ctx, engine)
    from app.services.pool import WorkerPool  # Ray loads only when asked for

    return WorkerPool(ctx.settings, ctx.settings.workers, serve=True)


def serve(ctx: AppContext, *, worker: bool = True) -> None:
    import uvicorn

    app = create_app(ctx, worker=worker)
    uvicorn.run(app, host=ctx.settings.host, port=ctx.settings.port, log_level="info")
