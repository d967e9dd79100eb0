"""The one rule for files: what any route may serve, and to whom.

A signed-in business is served
- its own renders, by /download (looked up by the render's row in the business's scope), and
  the package and masters of its own delivered orders by their names (`delivery.download`,
  looked up through the order's row), and
- files the app made for one of the session's own responses (`ResponseFiles.publish`), which
  lie in that session's folder under the web folder Gradio serves from.
Nothing else: not the database, not the asset store's files by name, not another session's
responses, not uploads (the uploader has them). Every file route asks `ResponseFiles.may_serve`.

The web folder is also where Gradio writes uploads. It is emptied when the app starts; a
session's folder goes when the session ends, its files after `RESPONSE_TTL_S`; uploads are
removed once a use case has taken them (stored or refused), and abandoned ones after
`UPLOAD_TTL_S`.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image

from app.services import variants
from app.services.errors import UserError
from templates import package

if TYPE_CHECKING:
    from app.services.accounts import Account
    from app.services.context import AppContext

UPLOAD_TTL_S = 30 * 60.0
RESPONSE_TTL_S = 24 * 3600.0  # a long-lived session does not pile up every picture it was shown
MAX_RESPONSES = 1000  # files kept per session; the oldest go first (a page shows far fewer)
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Download:
    path: Path
    filename: str  # what the browser saves it as
    media_type: str


def render_download(ctx: AppContext, business_id: int, render_id: int) -> Download:
    with ctx.tenant(business_id) as tenant:
        render = tenant.variants.render(render_id)
        variant = tenant.variants.get(render.variant_id)
        asset = tenant.assets.get(render.asset_id)
        stem = f"spotforge-spot{variant.spot_id}-variant{variant.id}-{render.tier.value}"
        extension = Path(asset.path).suffix
        return Download(tenant.assets.path(asset.id), stem + extension, asset.media_type)


def qc_report(ctx: AppContext, business_id: int, render_id: int) -> dict:
    with ctx.tenant(business_id) as tenant:
        render = tenant.variants.render(render_id)
        if render.qc_report is None:
            raise UserError(f"Render {render_id} has no QC report: it is a still.")
        return dict(render.qc_report)


def qc_page(ctx: AppContext, business_id: int, render_id: int, download: str, back: str) -> str:
    """A render's QC report as a page to read, titled as the studio names what it checks (the
    variant, the shape, the tier); `download` is where its report file is served, `back` the
    studio."""
    report = qc_report(ctx, business_id, render_id)
    with ctx.tenant(business_id) as tenant:
        render = tenant.variants.render(render_id)
    caption = variants.card(ctx, business_id, render.variant_id).caption
    title = f"{caption} · {render.shape} {render.tier.value}"
    return package.qc_page(title, report, download, back)


class ResponseFiles:
    """The web folder: uploads Gradio received, and per-session folders of response files."""

    def __init__(self, root: Path):
        self.root = Path(os.path.abspath(root))
        self._responses = self.root / "responses"
        self._lock = threading.Lock()
        self._uploads: dict[Path, tuple[int, int]] = {}  # upload -> (business, session)

    def reset(self) -> None:
        """Start empty: no response outlives the process that made it."""
        shutil.rmtree(self.root, ignore_errors=True)
        self._responses.mkdir(parents=True)

    def publish(self, who: Account, source: Path | Image.Image | bytes, name: str) -> Path:
        """A file for one response to this session: a stored file (linked, not copied), a
        picture (saved as PNG) or bytes. Returns where the response points."""
        session = self._folder(who.business_id, who.session_id)
        folder = session / f"{time.time_ns():020d}{secrets.token_hex(4)}"  # sorts oldest first
        folder.mkdir(parents=True)
        made = sorted(_folders(session))
        for old in made[: max(0, len(made) - MAX_RESPONSES)]:
            shutil.rmtree(old, ignore_errors=True)
        target = folder / (SAFE_NAME.sub("-", name).strip(".-") or "file")
        if isinstance(source, Image.Image):
            source.save(target.with_suffix(".png"))
            return target.with_suffix(".png")
        if isinstance(source, bytes):
            target.write_bytes(source)
            return target
        try:
            os.link(source, target)  # the asset store is on the same disk: no copy
        except OSError:
            shutil.copyfile(source, target)
        return target

    def may_serve(self, who: Account | None, requested: str) -> bool:
        """Whether a file route may send `requested` (a path as the route received it)."""
        if who is None:
            return False
        try:
            real = Path(os.path.abspath(requested)).resolve()
            own = self._folder(who.business_id, who.session_id).resolve()
            return own in real.parents and real.is_file()
        except (OSError, ValueError):  # a NUL byte, a name too long: no such file
            return False

    def received(self, who: Account, paths: list[str]) -> None:
        """Note the files Gradio stored for an upload this session sent."""
        with self._lock:
            for given in paths:
                self._uploads[Path(os.path.abspath(given)).resolve()] = _owner(who)

    def upload(self, given: str | Path, who: Account) -> Path:
        """An uploaded file a use case may take as input: one this session uploaded, never a
        response file, another session's upload, or a file Gradio fetched from an address."""
        try:
            real = Path(os.path.abspath(given)).resolve()
        except (OSError, ValueError):
            real = None
        with self._lock:
            mine = real is not None and self._uploads.get(real) == _owner(who)
        if not mine or not real.is_file():
            raise UserError("That file was not uploaded here; upload it again.")
        return real

    def discard_uploads(self, who: Account, given: list[str | Path | None]) -> None:
        """Remove this session's uploads that a use case has taken, stored or refused."""
        for item in given:
            if item is None:
                continue
            try:
                path = self.upload(item, who)
            except UserError:
                continue
            with self._lock:
                self._uploads.pop(path, None)
            path.unlink(missing_ok=True)
            if path.parent != self.root.resolve():
                shutil.rmtree(path.parent, ignore_errors=True)  # Gradio's folder for it

    def end_session(self, business_id: int, session_id: int) -> None:
        shutil.rmtree(self._folder(business_id, session_id), ignore_errors=True)

    def sweep(self, live_sessions: set[int], now: float | None = None) -> None:
        """Remove the folders of ended sessions, response files older than RESPONSE_TTL_S and
        uploads older than UPLOAD_TTL_S."""
        now = time.time() if now is None else now
        for business in _folders(self._responses):
            for session in _folders(business):
                if not session.name.isdigit() or int(session.name) not in live_sessions:
                    shutil.rmtree(session, ignore_errors=True)
                    continue
                for response in _folders(session):
                    if _age(response, now) > RESPONSE_TTL_S:
                        shutil.rmtree(response, ignore_errors=True)
        for entry in _entries(self.root):  # upload folders, and parts of unfinished uploads
            if entry != self._responses and _age(entry, now) > UPLOAD_TTL_S:
                if entry.is_dir():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
        with self._lock:
            for gone in [p for p in self._uploads if not p.exists()]:
                del self._uploads[gone]

    def _folder(self, business_id: int, session_id: int) -> Path:
        return self._responses / str(int(business_id)) / str(int(session_id))


def _owner(who: Account) -> tuple[int, int]:
    return (who.business_id, who.session_id)


def _entries(parent: Path) -> list[Path]:
    try:
        return list(parent.iterdir())
    except FileNotFoundError:
        return []


def _folders(parent: Path) -> list[Path]:
    return [p for p in _entries(parent) if p.is_dir()]


def _age(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except FileNotFoundError:
        return 0.0
