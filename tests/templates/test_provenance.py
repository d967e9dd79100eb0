"""C2PA on a spot file: signed, read back by a fresh reader, and caught when a byte changes."""

from __future__ import annotations

import json
import subprocess

import c2pa
import pytest
from cryptography import x509

from templates import provenance


@pytest.fixture(scope="module")
def credentials(tmp_path_factory):
    return provenance.development_credentials(tmp_path_factory.mktemp("signing") / "dev", "Test")


@pytest.fixture
def signed(tmp_path, mp4_bytes, credentials):
    source = tmp_path / "clip.mp4"
    source.write_bytes(mp4_bytes)
    provenance.sign(
        source,
        source,
        credentials,
        title="clip.mp4",
        generator=("Spotforge", "test"),
        assertions={provenance.LINEAGE: {"variant": 7, "parent": 3}},
    )
    return source


def test_a_signed_file_reads_back_valid_and_says_how_it_was_made(signed, credentials):
    with open(signed, "rb") as stream, c2pa.Reader("video/mp4", stream) as reader:  # fresh
        assert reader.get_validation_state() == "Valid"  # untrusted root, intact file
        manifest = json.loads(reader.json())
    active = manifest["manifests"][manifest["active_manifest"]]
    actions = next(a for a in active["assertions"] if a["label"] == "c2pa.actions.v2")
    [created] = actions["data"]["actions"]
    assert created["action"] == "c2pa.created"
    assert created["digitalSourceType"].endswith("/compositeWithTrainedAlgorithmicMedia")
    seen = provenance.read(signed, credentials.anchors)
    assert (seen.matches, seen.trusted, seen.failures) == (True, True, [])
    assert provenance.assertion(seen, provenance.LINEAGE) == {"variant": 7, "parent": 3}
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0",
         str(signed)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert probe.stdout.split() == ["h264"]  # still a playable file


def test_a_changed_byte_of_the_picture_no_longer_matches(signed, credentials):
    data = bytearray(signed.read_bytes())
    data[data.index(b"mdat") + 200] ^= 0xFF
    signed.write_bytes(bytes(data))
    seen = provenance.read(signed, credentials.anchors)
    assert not seen.matches and seen.state == "Invalid"
    assert "assertion.bmffHash.mismatch" in seen.failures


def test_an_unsigned_file_has_no_manifest(tmp_path, mp4_bytes):
    plain = tmp_path / "plain.mp4"
    plain.write_bytes(mp4_bytes)
    seen = provenance.read(plain)
    assert (seen.matches, seen.manifest, seen.failures) == (False, None, ["no C2PA manifest"])


def test_development_credentials_are_made_once_and_fit_c2pa(tmp_path):
    first = provenance.development_credentials(tmp_path / "dev", "Test")
    again = provenance.development_credentials(tmp_path / "dev", "Test")
    assert first == again and first.key.read_bytes() == again.key.read_bytes()
    assert first.key.stat().st_mode & 0o077 == 0  # the key is the owner's alone
    signer, issuer = x509.load_pem_x509_certificates(first.chain.read_bytes())
    assert signer.issuer == issuer.subject != signer.subject  # not self-signed
    assert signer.extensions.get_extension_for_class(x509.KeyUsage).value.digital_signature
    assert not signer.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
