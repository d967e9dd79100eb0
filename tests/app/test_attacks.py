"""The tenant boundary, tried as an attacker would against a real `spotforge serve`.

Business A makes a spot, a preview, a variant and a purchase. Business B, signed in, then calls
every named endpoint with A's ids and fetches every URL A's responses contain, through every
file route and with traversal variants; the database is fetched by every route; another origin
tries CORS and CSRF; sign-in is guessed at. Each attack gets a status and a plain sentence, and
A's work is untouched."""

from __future__ import annotations

import json
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from gradio_client import Client, handle_file
from PIL import Image
from skimage import data

from app.services.demo import BRIEF
from tests.app.conftest import SPOTFORGE, free_port, running_app, spotforge_env
from tests.app.test_api import PASSWORD, client, settled, sign_up, status, token, until

pytestmark = pytest.mark.long  # minutes of work: started first (tests/conftest.py)

EVIL = "http://127.0.0.1:1"  # another local origin, as in the report
HOSTILE_NAME = "<img src=x onerror=alert(1)> Espresso week"
COPY = {k: v for k, v in BRIEF.items() if k != "business_name"}
LEAKS = ("Traceback", "invalid literal", "/tmp/", ".part", "Error:", "sqlite", "SELECT")


def request(url: str, path: str, *, method: str = "GET", headers=None, data=None):
    """(status, headers, body) of one request, redirects not followed; errors are answers."""
    req = urllib.request.Request(url + path, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.build_opener(_NoRedirect()).open(req) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def urls_in(value) -> list[str]:
    """Every file URL in an API response."""
    if isinstance(value, dict):
        found = [value["url"]] if isinstance(value.get("url"), str) else []
        return found + [u for v in value.values() for u in urls_in(v)]
    if isinstance(value, list | tuple):
        return [u for v in value for u in urls_in(v)]
    return []


def refused(api: Client, *args, api_name: str, **kwargs) -> str:
    """The sentence an attack is answered with: plain, no path, no exception text."""
    with pytest.raises(Exception) as error:
        api.predict(*args, api_name=api_name, **kwargs)
    message = str(error.value)
    assert not any(leak in message for leak in LEAKS), message
    return message


@pytest.fixture(scope="module")
def attack(tmp_path_factory):
    """A's finished work on a running server, and B signed in beside it."""
    folder = tmp_path_factory.mktemp("attack")
    picture = folder / "espresso.png"
    Image.fromarray(data.coffee()).save(picture)
    # Five photos, the most a brief takes, in one upload: each is noted as A's own.
    photos = [picture]
    for n in range(1, 5):
        photos.append(folder / f"espresso-{n}.png")
        Image.fromarray(data.coffee()).resize((300 + n, 200)).save(photos[-1])
    with running_app(folder / "var", free_port()) as url:
        a_token = sign_up(url, "Harbor Coffee", "owner@harbor.test")
        b_token = sign_up(url, "Rival <b>Roasters</b>", "owner@rival.test")
        a = Client(url + "/", headers={"Authorization": f"Bearer {a_token}"}, verbose=False,
                   download_files=False)  # fmt: skip
        seen: list = []
        follows: dict = {}  # what A's starts returned to follow the work with
        copy = {**COPY, "headline": "Fresh <i>espresso</i>"}
        spot, board, _scenes = a.predict(
            campaign_name=HOSTILE_NAME, template_id="product-hero",
            product_photos=[handle_file(str(p)) for p in photos], api_name="/create_spot",
            **copy,
        )  # fmt: skip
        seen += [board]
        seen += a.predict(spot, 0, api_name="/background_candidates")
        seen += a.predict(spot, 1, api_name="/choose_background")
        *_, job, follows["preview"] = a.predict(spot, api_name="/render_preview")
        _message, video, frames, _ = until(
            a, "/preview_progress", lambda m: "Preview ready" in m, follows["preview"]
        )
        seen += [video, frames]
        places, people = ["San Francisco Bay Area"], ["Young runners"]
        *_, run, follows["variants"] = a.predict(spot, places, people, api_name="/make_variants")
        done, gallery, _ = until(
            a, "/variants_progress", lambda m: m.startswith("Done:"), follows["variants"]
        )
        assert "1 of 1 variants ready" in done
        seen += [gallery]
        variant = a.predict(spot, api_name="/variant_choices")[0]["choices"][-1][1]
        seen += list(a.predict(variant, 1, api_name="/compare"))
        order, _ = a.predict([1], api_name="/quote")  # the spot as briefed
        *_, follows["order"] = a.predict(order, api_name="/approve")
        text, delivered, links, _ = until(a, "/order_progress", settled, follows["order"])
        assert "delivered" in text
        seen += [delivered]
        render = int(links.split("/report/render/")[1].split(")")[0])
        # The package and each master, by the order's id and the file's name.
        delivered = [part.split(")")[0] for part in links.split("(/download/order/")[1:]]
        assert any(p.endswith(".zip") for p in delivered) and len(delivered) == 2
        # A's own picture, in its library: B may not set anything in it.
        shown, where, *_ = a.predict(handle_file(str(picture)), api_name="/add_picture")
        seen += [shown]
        own_picture = int(where["choices"][-1][1])
        ids = {"spot": spot, "campaign": 1, "base": 1, "variant": variant, "job": job,
               "run": run, "order": order, "render": render,
               "picture": own_picture}  # fmt: skip
        yield {
            "url": url, "a": a, "a_token": a_token, "b_token": b_token, "ids": ids,
            "urls": sorted(set(urls_in(seen))), "data_dir": folder / "var", "follows": follows,
            "picture": picture, "delivered": delivered,
        }  # fmt: skip


def test_b_reaches_none_of_a_by_any_endpoint(attack):
    url, ids = attack["url"], attack["ids"]
    b = client(url, attack["b_token"])
    spot, variant, order = ids["spot"], ids["variant"], ids["order"]
    places, people = ["Manhattan"], ["Retirees"]
    attacks = {
        "/reorder_scenes": (spot, "1, 3, 2, 4"),
        "/regenerate_scene": (spot, 1),
        "/background_candidates": (spot, 0),
        "/choose_background": (spot, 2),
        "/render_preview": (spot,),
        "/cancel_job": (ids["job"],),
        "/plan_variants": (spot, places, people),
        "/make_variants": (spot, places, people),
        "/variant_choices": (spot,),
        "/cancel_variants": (ids["run"],),
        "/variant_gallery": (spot, "All", "All"),
        "/compare": (variant, ids["base"]),
        "/approve": (order,),
        "/retry_order": (order,),
        "/cancel_order": (order,),
        "/order_status": (order,),
        "/rerender": (variant,),
        "/quote": ([variant],),
        "/lineage": (ids["campaign"],),
        "/duplicate_campaign": (ids["campaign"],),
        "/open_campaign": (ids["campaign"],),
        "/copy_proposals": (spot, people),
        "/decide_copy": (spot, [["Retirees", "Headline", "Fresh espresso", "", "Mine now"]]),
        "/edit_variant_copy": (variant, "headline", "Mine now"),
        "/review_variants": (spot,),
        "/fix_variants": (spot, "b-retries-safely"),
        "/fix_progress": ([variant],),
        "/play_variants": ([variant],),
        "/set_place_picture": ("Manhattan", ids["picture"], "centre"),
        "/set_scene_picture": (spot, 1, ids["picture"], "centre"),
        # A's preview job, followed as a clip.
        "/clips_progress": (
            {"jobs": [[variant, ids["job"]]], "typical": 1, "began": 0, "live": True},
        ),
    }
    # What A follows its work with, read by B: each read is for the signed-in business.
    for kind in ("preview", "variants", "order"):
        attacks[f"/{kind}_progress"] = (attack["follows"][kind],)
    own = {"/whoami", "/templates", "/library_choices", "/campaigns", "/create_spot",
           "/brand_kit", "/pictures", "/add_picture", "/setting_words",
           "/rename_business"}  # fmt: skip
    named = set(b.view_api(return_format="dict", print_info=False)["named_endpoints"])
    assert named == set(attacks) | own, "a new endpoint needs its attack here"
    for endpoint, args in attacks.items():
        message = refused(b, *args, api_name=endpoint)
        assert "not found" in message, (endpoint, message)

    # A brief set in A's picture is refused as for a picture nobody has; B lists none of A's.
    brief = {"campaign_name": "Mine", "template_id": "product-hero", **COPY,
             "product_photos": [handle_file(str(attack["picture"]))]}  # fmt: skip
    message = refused(b, **brief, background=str(ids["picture"]), api_name="/create_spot")
    assert "not found" in message, message
    # So is one that takes its product photo from A's spot (the page sends its open spot's).
    message = refused(b, **{**brief, "product_photos": []}, photos_of=spot,
                      api_name="/create_spot")  # fmt: skip
    assert "not found" in message, message
    assert b.predict(api_name="/pictures")[0] == []

    rows, _ = b.predict(api_name="/campaigns")
    assert rows["data"] == [] if isinstance(rows, dict) else rows == []
    # A's work is as A left it, and its name: B renames only itself.
    a = attack["a"]
    a_name = a.predict(api_name="/whoami")
    who, _note = b.predict("Not A <i>either</i>", api_name="/rename_business")
    assert "Not A &lt;i&gt;either&lt;/i&gt;" in who and a.predict(api_name="/whoami") == a_name
    b.predict("Rival <b>Roasters</b>", api_name="/rename_business")  # as it signed up
    text, _files, _links = a.predict(order, api_name="/order_status")
    assert "delivered" in text
    campaigns, _ = a.predict(api_name="/campaigns")
    assert len(campaigns["data"] if isinstance(campaigns, dict) else campaigns) == 1
    assert a.predict(ids["campaign"], api_name="/open_campaign")[0] == spot  # works by API

    # Ids that are not ids get a sentence too, never the parser's words.
    for args, endpoint, why in (
        (("abc", 1), "/compare", "whole number"),
        ((spot, "1; DROP TABLE spots"), "/reorder_scenes", "scene numbers"),
        ((2**40,), "/order_status", "There is no order"),
        (({"kind": "order", "order": 1},), "/order_progress", "Nothing to follow"),
        (({**attack["follows"]["preview"], "job": "1; --"},), "/preview_progress", "Nothing"),
        (([1.5],), "/quote", "whole number"),
    ):
        assert why in refused(a, *args, api_name=endpoint)


def test_b_fetches_none_of_a_s_files_by_any_route(attack):
    url, a_token, b_token = attack["url"], attack["a_token"], attack["b_token"]
    data_dir = attack["data_dir"].resolve()
    files = [u.removeprefix(url) for u in attack["urls"]]
    assert len(files) >= 10 and all("/responses/" in f for f in files)
    for path in files:
        assert status(url, path, a_token) == 200, path
        assert status(url, path, b_token) == 404, path
        assert status(url, path, None) == 404, path
    sample = files[0].split("file=", 1)[1]
    database = data_dir / "spotforge.db"
    asset = next((data_dir / "assets").rglob("*.mp4"))
    targets = [
        str(database),
        f"{database}-wal",
        str(asset),
        f"{sample}/../../../../../../spotforge.db",
        f"{Path(sample).parent}/../../../../../spotforge.db",
        f"{data_dir}/web/responses/1/1/../../../../spotforge.db",
        f"{data_dir}/web",
        "/etc/passwd",
        "http://127.0.0.1:1/secret",
    ]
    routes = ("/gradio_api/file=", "/gradio_api/file/", "/file=", "/gradio_api/proxy=")
    for target in targets:
        for route in routes:
            for spelled in (target, quote(target), quote(quote(target))):
                for who in (a_token, b_token, None):
                    assert status(url, route + spelled, who) in (400, 403, 404), (route, spelled)
    # Downloads by id: another business's render is not found; a non-number is a sentence.
    render = attack["ids"]["render"]
    assert status(url, f"/download/render/{render}", a_token) == 200
    bearer = {"Authorization": f"Bearer {a_token}"}
    code, _, page = request(url, f"/report/render/{render}", headers=bearer)
    assert code == 200 and b"checks pass" in page  # its QC report, as a page to read
    qc_paths = (f"/download/render/{render}/qc.json", f"/report/render/{render}")
    for path in (f"/download/render/{render}", *qc_paths):
        assert status(url, path, b_token) == 404
        assert status(url, path, None) == 401
    order = attack["ids"]["order"]
    for part in attack["delivered"]:  # A's package and master, by A's order id and names
        path = f"/download/order/{part}"
        assert status(url, path, a_token) == 200, path
        assert status(url, path, b_token) == 404 and status(url, path, None) == 401
        assert status(url, f"/download/order/{order + 1}/{part.split('/', 1)[1]}", a_token) == 404
    for name in ("..%2f..%2fspotforge.db", "spotforge.db", "ca.pem", "signer.key"):
        assert status(url, f"/download/order/{order}/{name}", a_token) == 404
    code, _, body = request(url, "/download/render/..%2f..%2fspotforge.db")
    assert code in (400, 404) and b"SQLite" not in body
    assert status(url, "/download/render/99999999999999999999999", a_token) == 404
    assert status(url, files[0] + "%00", a_token) == 404
    # A ranged answer (how a video player fetches) echoes none of the request's secrets.
    secrets = {"Authorization": f"Bearer {a_token}", "Cookie": "spotforge_session=secret",
               "Range": "bytes=0-10"}  # fmt: skip
    code, headers, _ = request(url, files[0], headers=secrets)
    assert code == 206
    assert not {"cookie", "authorization"} & {k.lower() for k in headers}, dict(headers)
    # Gradio's routes the studio does not use answer nothing.
    unused = ["/gradio_api/deep_link?session_hash=x", "/config?deep_link=abc", "/monitoring"]
    unused += ["/gradio_api/token", "/gradio_api/run-history/buckets"]
    for path in unused:
        assert status(url, path, b_token) == 404, path
    code, _, _ = request(url, "/gradio_api/process_recording", method="POST", data=b"",
                         headers={"Authorization": f"Bearer {b_token}"})  # fmt: skip
    assert code == 404


def test_another_origin_gets_no_cors_and_no_csrf(attack):
    url = attack["url"]
    code, headers, _ = request(url, "/login", headers={"Origin": EVIL})
    assert code == 200 and "access-control-allow-origin" not in {k.lower() for k in headers}
    preflight = {"Origin": EVIL, "Access-Control-Request-Method": "POST"}
    code, headers, _ = request(url, "/gradio_api/queue/join", method="OPTIONS", headers=preflight)
    assert headers.get("access-control-allow-origin") is None
    # A browser session (cookie) attacked from another origin.
    cookie = _cookie_session(url, "owner@harbor.test")
    signed_in = {"Cookie": cookie}
    for path, body in (("/logout", b""), ("/gradio_api/queue/join", b"{}")):
        code, _, answer = request(url, path, method="POST", data=body,
                                  headers={**signed_in, "Origin": EVIL})  # fmt: skip
        assert code == 403 and b"another site" in answer
        code, _, _ = request(url, path, method="POST", data=body, headers=signed_in)  # no Origin
        assert code == 403
    assert _signed_in(url, cookie)  # still signed in: nothing was done for the attacker
    own = {**signed_in, "Origin": url}
    code, _, _ = request(url, "/logout", method="POST", data=b"", headers=own)
    assert code == 303 and not _signed_in(url, cookie)


def test_every_answer_carries_the_security_headers(attack):
    url = attack["url"]
    for path in ("/login", "/", attack["urls"][0].removeprefix(url), "/gradio_api/file=/x"):
        _, headers, _ = request(url, path, headers={"Authorization": f"Bearer {attack['a_token']}"})
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert headers["Referrer-Policy"] == "same-origin"


def test_typed_text_comes_back_as_text(attack):
    a, ids = attack["a"], attack["ids"]
    tree = a.predict(ids["campaign"], api_name="/lineage")
    assert "&lt;img src=x onerror=alert(1)&gt;" in tree and "<img" not in tree
    label = client(attack["url"], attack["b_token"]).predict(api_name="/whoami")
    assert "Rival &lt;b&gt;Roasters&lt;/b&gt;" in label and "<b>" not in label
    _frame, about, _, _ = a.predict(ids["variant"], ids["base"], api_name="/compare")
    assert "Fresh &lt;i&gt;espresso&lt;/i&gt;" in about


def test_refused_uploads_leave_nothing(attack):
    url, data_dir = attack["url"], attack["data_dir"]
    b = client(url, attack["b_token"])

    def kept() -> set[Path]:  # uploads on disk (a brief refused for its words keeps its own)
        return {p for p in (data_dir / "web").iterdir() if p.name != "responses"}

    before = kept()
    notes = data_dir.parent / "notes.png"
    notes.write_text("<html><script>alert(1)</script></html>")
    message = refused(
        b, campaign_name="Notes", template_id="product-hero",
        product_photos=[handle_file(str(notes))], api_name="/create_spot", **COPY,
    )  # fmt: skip
    assert "not recognised" in message
    # A's served file named as B's photo, sent as Gradio's own client would after an upload.
    served = next(u for u in attack["urls"] if u.endswith(".png")).split("file=", 1)[1]
    photo = {"path": served, "orig_name": "mine.png", "meta": {"_type": "gradio.FileData"}}
    brief = ["Stolen", "", "product-hero", [photo], "#1F3A5F", "#F2B134"]
    brief += [COPY[k] for k in ("product_name", "headline", "body", "offer", "cta_text")]
    brief += [COPY["cta_url"], "", COPY["tagline"], "street with buildings during the day"]
    brief += [None, None, None, "", "", None, "", "centre", None]  # logo to the open spot
    error = raw_predict(url, attack["b_token"], "create_spot", brief)
    assert "not uploaded here" in error, error
    # An address instead of a file would have Gradio fetch it for B: refused before that.
    brief[3] = [{**photo, "path": "https://example.com/photo.png"}]
    join = {
        "data": brief,
        "fn_index": 0,
        "session_hash": "attacker",
    }
    code, _, answer = request(url, "/gradio_api/queue/join", method="POST",
                              data=json.dumps(join).encode(),
                              headers={"Authorization": f"Bearer {attack['b_token']}",
                                       "Content-Type": "application/json"})  # fmt: skip
    assert code == 400 and b"addresses are not fetched" in answer
    rows, _ = b.predict(api_name="/campaigns")
    assert (rows["data"] if isinstance(rows, dict) else rows) == []
    # A refused file is not kept. (Gradio's File leaves an empty placeholder per file it
    # hands a handler; the sweep removes those with abandoned uploads, test_files.py.)
    assert [p for p in kept() - before if p.is_dir() or p.stat().st_size] == []


def raw_predict(url: str, token: str, api_name: str, data: list) -> str:
    """Call an endpoint the way Gradio's own client does, with `data` exactly as given (no
    upload first); returns the error it answers with."""
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    config = json.loads(request(url, "/config", headers=auth)[2])
    fn = next(d["id"] for d in config["dependencies"] if d.get("api_name") == api_name)
    join = {"data": data, "fn_index": fn, "session_hash": "attacker", "trigger_id": None}
    code, _, body = request(url, "/gradio_api/queue/join", method="POST", headers=auth,
                            data=json.dumps(join).encode())  # fmt: skip
    assert code == 200, body
    stream = urllib.request.Request(
        url + "/gradio_api/queue/data?session_hash=attacker", headers=auth
    )
    with urllib.request.urlopen(stream, timeout=120) as events:
        for line in events:
            if not line.startswith(b"data:"):
                continue
            event = json.loads(line[5:])
            if event.get("msg") == "process_completed":
                assert not event.get("success"), event
                return str(event["output"].get("error"))
    raise AssertionError("the endpoint never answered")


def test_guessing_a_password_is_throttled(attack):
    url = attack["url"]
    for _ in range(5):
        with pytest.raises(urllib.error.HTTPError) as wrong:
            token(url, "owner@harbor.test", "not the password")
        assert wrong.value.code == 401
    with pytest.raises(urllib.error.HTTPError) as held:
        token(url, "owner@harbor.test", PASSWORD)  # even the right one, for now
    assert held.value.code == 429 and int(held.value.headers["Retry-After"]) >= 1
    assert "try again in" in json.load(held.value)["error"]
    form = f"email=owner@harbor.test&password={PASSWORD}".encode()
    code, headers, body = request(url, "/login", method="POST", data=form)
    assert code == 429 and "Retry-After" in headers and b"Too many failed sign-ins" in body


def test_writes_survive_concurrent_cli_use(app_server, tmp_path):
    """The server and `spotforge business list` share the SQLite file: every sign-up the server
    answered is there after a restart, and nothing anyone sends reads the file."""
    emails = [f"owner{i}@shop{i}.test" for i in range(8)]
    with app_server() as url:
        env = spotforge_env(tmp_path / "var")
        stop = threading.Event()

        def cli() -> None:
            while not stop.is_set():
                subprocess.run([str(SPOTFORGE), "business", "list"], env=env, check=True,
                               capture_output=True)  # fmt: skip

        reader = threading.Thread(target=cli)
        reader.start()
        try:
            for i, email in enumerate(emails):
                tok = sign_up(url, f"Shop {i}", email)
                database = tmp_path / "var" / "spotforge.db"
                assert status(url, f"/gradio_api/file={database}", tok) == 404
        finally:
            stop.set()
            reader.join()
    with app_server() as url:
        for email in emails:
            assert token(url, email, PASSWORD)


def _cookie_session(url: str, email: str) -> str:
    form = f"email={email}&password={PASSWORD}".encode()
    opener = urllib.request.build_opener(_NoRedirect())
    try:
        opener.open(urllib.request.Request(url + "/login", data=form))
    except urllib.error.HTTPError as exc:
        return exc.headers["set-cookie"].split(";")[0]
    raise AssertionError("sign-in did not answer with a redirect")


def _signed_in(url: str, cookie: str) -> bool:
    opener = urllib.request.build_opener(_NoRedirect())
    try:
        return (
            opener.open(urllib.request.Request(url + "/", headers={"Cookie": cookie})).status == 200
        )
    except urllib.error.HTTPError:
        return False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
