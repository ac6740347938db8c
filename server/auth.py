"""Authentication: SCRAM-SHA-256 (RFC 5802/7677, as libpq, psycopg and asyncpg speak it).

Owns ``Credentials`` (user -> SCRAM verifier: salt, iteration count, stored key and server
key; the password itself is never kept), reading a password file, and ``scram_exchange``,
the server's side of one SCRAM conversation over the wire messages.  Invariants: the
client's proof is checked in constant time; a wrong password, an unknown user and a
malformed exchange all fail the same way (28P01), so a client learns nothing about which
users exist; channel binding is not offered (the client's GS2 header must be ``n`` or
``y``, never ``p``).  Deliberately not here: TLS (``server.listener``), the decision that a
non-loopback address needs authentication (``server.listener.Server``).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass

from server import messages as M

ITERATIONS = 4096


@dataclass(frozen=True)
class Verifier:
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes


def make_verifier(password: str, salt: bytes = None, iterations: int = ITERATIONS) -> Verifier:
    salt = salt or os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    return Verifier(salt, iterations, hashlib.sha256(client_key).digest(), server_key)


class Credentials:
    """The users that may connect, each with a SCRAM verifier."""

    def __init__(self, passwords: dict):
        self.verifiers = {u: make_verifier(p) for u, p in passwords.items()}
        # an unknown user still gets a full exchange against a throwaway verifier
        self._decoy = make_verifier(secrets.token_hex(16))

    @classmethod
    def from_file(cls, path: str) -> "Credentials":
        """``user:password`` per line (``#`` comments and blank lines skipped)."""
        passwords = {}
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                user, sep, password = line.partition(":")
                if not sep or not user:
                    raise ValueError(f"{path}: expected 'user:password' lines")
                passwords[user] = password
        if not passwords:
            raise ValueError(f"{path}: no users")
        return cls(passwords)

    def verifier(self, user: str):
        return self.verifiers.get(user), self.verifiers.get(user) or self._decoy


class AuthenticationFailed(M.ProtocolViolation):
    default_sqlstate = "28P01"


def _attrs(msg: str) -> dict:
    out = {}
    for part in msg.split(","):
        k, sep, v = part.partition("=")
        if sep and len(k) == 1:
            out.setdefault(k, v)
    return out


def scram_exchange(conn, user: str, credentials: Credentials) -> None:
    """Run SCRAM-SHA-256 for ``user`` on ``conn`` (``send(msg)``, ``flush()``,
    ``read_password() -> bytes``); returns once the client proved the password, else
    raises ``AuthenticationFailed``."""
    failed = AuthenticationFailed(f'password authentication failed for user "{user}"')
    known, v = credentials.verifier(user)
    conn.send(M.AuthenticationRequest(10, b"SCRAM-SHA-256\0\0"))
    conn.flush()
    r = M.Reader(conn.read_password())
    mechanism = r.cstring()
    if mechanism != "SCRAM-SHA-256":
        raise failed
    n = r.int32()
    first = r.bytes_(n).decode("utf-8", "replace") if n >= 0 else ""
    gs2, _, bare = first.partition(",")
    authzid, _, bare = bare.partition(",")
    if gs2 not in ("n", "y") or not bare:
        raise failed
    cnonce = _attrs(bare).get("r")
    if not cnonce:
        raise failed
    nonce = cnonce + base64.b64encode(os.urandom(18)).decode()
    server_first = f"r={nonce},s={base64.b64encode(v.salt).decode()},i={v.iterations}"
    conn.send(M.AuthenticationRequest(11, server_first.encode()))
    conn.flush()
    final = conn.read_password().decode("utf-8", "replace")
    without_proof, _, proof_part = final.rpartition(",p=")
    attrs = _attrs(without_proof)
    if attrs.get("r") != nonce or not proof_part:
        raise failed
    try:
        proof = base64.b64decode(proof_part, validate=True)
    except ValueError:
        raise failed from None
    auth_message = f"{bare},{server_first},{without_proof}".encode()
    signature = hmac.new(v.stored_key, auth_message, "sha256").digest()
    if len(proof) != len(signature):
        raise failed
    client_key = bytes(a ^ b for a, b in zip(proof, signature))
    if not hmac.compare_digest(hashlib.sha256(client_key).digest(), v.stored_key) or known is None:
        raise failed
    server_signature = hmac.new(v.server_key, auth_message, "sha256").digest()
    conn.send(M.AuthenticationRequest(12, b"v=" + base64.b64encode(server_signature)))
