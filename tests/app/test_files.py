"""The one rule for files (`ResponseFiles`): a session is served the files made for its own
responses and nothing else, whatever path it sends; uploads are inputs, never outputs; what a
session made goes when it ends, abandoned uploads after a while."""

from __future__ import annotations

import os
import time

import pytest
from PIL import Image

from app.services import UserError
from app.services.accounts import Account
from app.services.files import RESPONSE_TTL_S, UPLOAD_TTL_S, ResponseFiles

A = Account(1, "a@a.test", business_id=1, business_name="A", session_id=11)
A_PHONE = Account(1, "a@a.test", business_id=1, business_name="A", session_id=12)
B = Account(2, "b@b.test", business_id=2, business_name="B", session_id=21)


@pytest.fixture
def web(tmp_path) -> ResponseFiles:
    files = ResponseFiles(tmp_path / "var" / "web")
    files.reset()
    (tmp_path / "var" / "spotforge.db").write_bytes(b"SQLite format 3\x00 every password hash")
    return files


def test_a_session_is_served_its_own_responses_only(web, tmp_path):
    stored = tmp_path / "var" / "assets" / "ab" / "cd" / ("ab" * 32 + ".png")
    stored.parent.mkdir(parents=True)
    Image.new("RGB", (8, 8), "red").save(stored)
    linked = web.publish(A, stored, "background-1.png")
    picture = web.publish(A, Image.new("RGB", (4, 4)), "scene-1")
    report = web.publish(A, b'{"passed": true}', "qc.json")
    assert picture.suffix == ".png" and report.read_bytes() == b'{"passed": true}'
    assert linked.read_bytes() == stored.read_bytes()
    for made in (linked, picture, report):
        assert web.may_serve(A, str(made))
        assert not web.may_serve(B, str(made))  # another business
        assert not web.may_serve(A_PHONE, str(made))  # another session of the same business
        assert not web.may_serve(None, str(made))
    database = tmp_path / "var" / "spotforge.db"
    root = web.root
    for attempt in (
        str(database),
        f"{linked.parent}/../../../../../spotforge.db",
        f"{root}/responses/1/11/../../../../spotforge.db",
        f"{root}/responses/1/11/x/../../../../../assets/ab/cd/{stored.name}",
        str(stored),
        f"{root}/responses/1/11",  # a folder
        f"{root}/responses/1/11/nothing-here.png",
        "/etc/passwd",
        f"{root}/responses/1/11/../../2/21",
    ):
        assert not web.may_serve(A, attempt), attempt
    os.symlink(database, linked.parent / "link.db")  # a link out of the folder is not followed
    assert not web.may_serve(A, str(linked.parent / "link.db"))


def test_uploads_are_inputs_of_the_session_that_sent_them_and_go_once_taken(web):
    folder = web.root / ("f" * 64)
    folder.mkdir()
    upload = folder / "photo.png"
    Image.new("RGB", (8, 8)).save(upload)
    fetched = web.root / ("e" * 64) / "from-an-address.png"  # what Gradio downloads for a URL
    fetched.parent.mkdir()
    fetched.write_bytes(upload.read_bytes())
    web.received(A, [str(upload)])
    assert web.upload(str(upload), A) == upload.resolve()
    assert not web.may_serve(A, str(upload))  # the uploader has it; nobody is sent it
    response = web.publish(B, Image.new("RGB", (4, 4)), "scene-1")
    for who, not_theirs in (
        (B, upload),  # another business's upload, its path known
        (A_PHONE, upload),  # another session's
        (A, fetched),  # in the web folder, but never uploaded
        (B, response),  # a served file
        (A, web.root.parent / "spotforge.db"),
        (A, str(upload) + "\x00"),
    ):
        with pytest.raises(UserError, match="was not uploaded here"):
            web.upload(str(not_theirs), who)
    web.discard_uploads(B, [str(upload)])  # not B's to discard
    assert upload.exists()
    web.discard_uploads(A, [str(upload), None, str(response)])
    assert not folder.exists() and response.exists()  # a response is never discarded as one
    with pytest.raises(UserError):
        web.upload(str(upload), A)


def test_a_session_keeps_its_newest_files(web, monkeypatch):
    monkeypatch.setattr("app.services.files.MAX_RESPONSES", 3)
    made = [web.publish(A, f"{i}".encode(), f"{i}.json") for i in range(5)]
    assert [m.exists() for m in made] == [False, False, True, True, True]


def test_ended_sessions_and_abandoned_uploads_are_swept(web):
    mine = web.publish(A, b"x", "a.json")
    yesterdays = web.publish(A, b"w", "old.json")
    theirs = web.publish(B, b"y", "b.json")
    fresh, stale = web.root / ("1" * 64), web.root / ("2" * 64)
    for folder in (fresh, stale):
        folder.mkdir()
        (folder / "photo.png").write_bytes(b"z")
    part = web.root / "tmpabc123"  # an upload cut off midway
    part.write_bytes(b"partial")
    old = time.time() - UPLOAD_TTL_S - 60
    for path in (stale, part):
        os.utime(path, (old, old))
    older = time.time() - RESPONSE_TTL_S - 60
    os.utime(yesterdays.parent, (older, older))
    web.sweep(live_sessions={A.session_id})
    assert mine.exists() and not yesterdays.exists() and not theirs.exists()
    assert fresh.exists() and not stale.exists() and not part.exists()
    web.end_session(A.business_id, A.session_id)
    assert not mine.exists()
