"""C2PA Content Credentials on a spot file: sign it with a manifest, read it back.

A manifest says how the file was made: one `c2pa.created` action whose digital source type is
IPTC's `compositeWithTrainedAlgorithmicMedia` (product pixels composited over generated
backgrounds), plus our own assertions (`LINEAGE`, `MODEL`, `RECIPE`) that the app fills. The
signature covers the whole MP4 except the manifest box (C2PA's BMFF hash), so a changed byte
of picture or sound no longer matches. Signing uses c2pa-python (the C2PA reference SDK,
c2pa-rs, underneath); the development certificates come from `cryptography`.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import c2pa
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SOURCE_TYPE = "http://cv.iptc.org/newscodes/digitalsourcetype/compositeWithTrainedAlgorithmicMedia"
LINEAGE = "com.spotforge.lineage"  # variant, parent, the approved preview it matches
MODEL = "com.spotforge.model"  # the model preset, its licence, the generation parameters
RECIPE = "com.spotforge.recipe"  # the template and acceleration recipe
MIME = "video/mp4"
# A signature that checks out but whose certificate chains to no trust anchor the reader knows
# is still a file that matches its manifest: "Valid" rather than "Trusted".
UNTRUSTED = "signingCredential.untrusted"


@dataclass(frozen=True)
class Credentials:
    key: Path  # PEM private key
    chain: Path  # PEM certificates: the signer's first, then its issuers up to the root's child
    anchors: Path | None = None  # PEM roots a verifier trusts (the development CA)


@dataclass(frozen=True)
class Verification:
    manifest: dict | None  # the active manifest, as c2pa reports it
    state: str | None  # c2pa's validation state: Invalid, Valid or Trusted
    failures: list[str] = field(default_factory=list)  # failure codes, trust aside

    @property
    def matches(self) -> bool:
        """The file is what its manifest signed: signature and hash hold."""
        return self.manifest is not None and self.state in ("Valid", "Trusted")

    @property
    def trusted(self) -> bool:
        return self.state == "Trusted"

    def to_dict(self) -> dict:
        return {
            "matches": self.matches,
            "state": self.state,
            "failures": self.failures,
            "manifest": self.manifest,
        }


def sign(
    source: Path,
    dest: Path,
    credentials: Credentials,
    *,
    title: str,
    generator: tuple[str, str],
    assertions: dict[str, dict],
) -> None:
    """Write `source` to `dest` with a signed manifest (`dest` may be `source`: replaced
    whole, so no reader sees half a file)."""
    key_pem = credentials.key.read_bytes()
    definition = {
        "claim_generator_info": [{"name": generator[0], "version": generator[1]}],
        "title": title,
        "format": MIME,
        "assertions": [
            {
                "label": "c2pa.actions.v2",
                "data": {
                    "actions": [
                        {
                            "action": "c2pa.created",
                            "digitalSourceType": SOURCE_TYPE,
                            "softwareAgent": {"name": generator[0], "version": generator[1]},
                        }
                    ]
                },
            },
            *({"label": label, "data": data} for label, data in assertions.items()),
        ],
    }
    info = c2pa.C2paSignerInfo(
        _algorithm(key_pem), credentials.chain.read_bytes(), key_pem, None
    )  # no timestamp authority: nothing outside this machine is reached
    dest = Path(dest)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".signing-", suffix=".mp4")
    os.close(fd)
    try:
        with (
            c2pa.Signer.from_info(info) as signer,
            c2pa.Builder(definition) as builder,
            open(source, "rb") as src,
            open(tmp, "w+b") as out,
        ):
            builder.sign(signer, MIME, src, out)
        os.replace(tmp, dest)
    finally:
        Path(tmp).unlink(missing_ok=True)


def read(path: Path, anchors: Path | None = None) -> Verification:
    """The file's manifest and whether the file still matches it, by a fresh reader (trusting
    `anchors`, when given, as roots)."""
    context = None
    if anchors is not None:
        context = c2pa.Context.from_dict({"trust": {"trust_anchors": anchors.read_text()}})
    try:
        with open(path, "rb") as stream, c2pa.Reader(MIME, stream, context=context) as reader:
            report = json.loads(reader.json())
            state = reader.get_validation_state()
    except c2pa.C2paError:  # no manifest, or one that cannot be parsed
        return Verification(None, None, ["no C2PA manifest"])
    active = report.get("manifests", {}).get(report.get("active_manifest"))
    results = report.get("validation_results", {}).get("activeManifest", {})
    failures = [f["code"] for f in results.get("failure", []) if f["code"] != UNTRUSTED]
    return Verification(active, state, failures)


def assertion(verification: Verification, label: str) -> dict | None:
    """One assertion's data from a read manifest."""
    for item in (verification.manifest or {}).get("assertions", []):
        if item.get("label") == label:
            return item.get("data")
    return None


def development_credentials(folder: Path, organisation: str) -> Credentials:
    """A development CA and a signing certificate it issued (ES256), made once in `folder`:
    C2PA refuses a self-signed signer, and wants digitalSignature key usage and an e-mail
    protection (or document signing) extended key usage on a non-CA end certificate."""
    folder = Path(folder)
    made = development_paths(folder)
    if made.anchors.is_file():
        return made
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Made whole in a folder of its own, then renamed into place: two processes starting at
    # once keep the first one's pair, never a key from one and a chain from the other.
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    try:
        _make_development(development_paths(staging), organisation)
        os.rename(staging, folder)
    except OSError:
        if not made.anchors.is_file():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return made


def development_paths(folder: Path) -> Credentials:
    """Where `development_credentials` keeps its files (the CA, `anchors`, written last)."""
    folder = Path(folder)
    return Credentials(folder / "signer.key", folder / "signer-chain.pem", folder / "ca.pem")


def _make_development(made: Credentials, organisation: str) -> None:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(organisation, f"{organisation} development CA")
    ca = (
        _certificate(ca_name, ca_name, ca_key.public_key(), now, years=10)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(cert_sign=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        _certificate(
            _name(organisation, f"{organisation} development signer"),
            ca_name,
            key.public_key(),
            now,
            years=2,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(cert_sign=False), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    _write_private(
        made.key,
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )
    made.chain.write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    made.anchors.write_bytes(ca.public_bytes(pem))  # written last: its presence means done


def _algorithm(key_pem: bytes) -> str:
    """The C2PA signing algorithm a PEM private key signs with."""
    key = serialization.load_pem_private_key(key_pem, password=None)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {256: "es256", 384: "es384", 521: "es512"}[key.curve.key_size]
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "ed25519"
    if isinstance(key, rsa.RSAPrivateKey):
        return "ps256"
    raise ValueError("the signing key must be an EC (P-256/384/521), Ed25519 or RSA key")


def _name(organisation: str, common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organisation),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _certificate(subject, issuer, public_key, now, *, years: int) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365 * years))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
