"""What signing in costs, side by side with today's pasted tokens, in one run (not a test; `./dev bench signin`).

1. **Verifying a token, per request** (in process, the function the HTTP edge calls): today's pasted HS256 token
   (``--sign-in token``); the same pasted token in ``--sign-in builtin`` (which first reads the token's issuer to
   choose); the built-in server's access token; an identity provider's RS256 token (its JWKS already fetched).
2. **A request end to end**: `get` over real HTTP, 8 callers (tests/perf/bench_tracker.py's load generator), against
   `bee tracker serve --sign-in token` with pasted tokens, and `--sign-in builtin` with pasted tokens and with
   access tokens from its own sign-in; rounds alternate. Target: the sign-in's tokens cost no more per request than
   today's (rate within 10 %).
3. **Signing in and refreshing**: the whole code flow over HTTP once a person is signed in to the board (authorize,
   the consent page, the answer, the token exchange), and one refresh (rotation), on SQLite and on PostgreSQL.

Writes tests/perf/reports/signin.json.
"""

from __future__ import annotations

import os
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.harness.postgres import free_port
from tests.perf._report import median, verdict, write_report
from tests.perf.bench_tracker import BEE, Server, measure, seed, tokens_for

CLIENTS = 8
ROUNDS = int(os.environ.get("BEE_BENCH_ROUNDS", "3"))
FLOWS = int(os.environ.get("BEE_BENCH_FLOWS", "30"))


def verification() -> dict[str, float]:
    """Microseconds per verification, by kind of token."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric import rsa

    from bee_tracker.auth import Verifier, hmac_verifier, mint
    from bee_tracker.oauth.resource import SignIn
    from bee_tracker.oauth.tokens import AccessTokens, KeyRing
    from bee_tracker.store import open_store
    from bee_tracker.store.grants import Grants, new_grant

    secret = os.urandom(32)
    pasted = hmac_verifier(secret)
    token = mint(secret, "ann@example.com")
    here = "http://127.0.0.1:8765"
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(str(Path(folder) / "t.db"))
        keys = KeyRing(Grants(store.db))
        keys.load()
        access = AccessTokens(keys, lifetime=600)
        grant = new_grant(
            actor="ann@example.com", client_id="c", client_name=None, scopes=("tracker:read", "tracker:write"),
            resource=here + "/mcp", now=time.time(),
        )  # fmt: skip
        issued = access.mint(grant, issuer=here)
        builtin = SignIn("builtin", pasted=pasted, access=access)
        today = SignIn("token", pasted=pasted)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public = {**jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "k", "alg": "RS256"}
        idp = Verifier(algorithms=("RS256",), jwks=jwt.PyJWKSet.from_dict({"keys": [public]}), issuer="https://idp")
        claims = {"iss": "https://idp", "aud": here + "/mcp", "sub": "a", "email": "ann@example.com"}
        rs256 = jwt.encode({**claims, "exp": int(time.time()) + 600}, key, algorithm="RS256", headers={"kid": "k"})
        cases: dict[str, Callable[[], object]] = {
            "pasted token, --sign-in token (today)": lambda: today.principal(token, here),
            "pasted token, --sign-in builtin": lambda: builtin.principal(token, here),
            "built-in access token": lambda: builtin.principal(issued, here),
            "identity provider's RS256 token (JWKS cached)": lambda: idp.verified(rs256, audience=here + "/mcp"),
        }
        result = {}
        for name, check in cases.items():
            check()
            runs = [timeit.timeit(check, number=2000) / 2000 * 1e6 for _ in range(5)]
            result[name] = round(median(runs), 1)
            print(f"verify  {name:<48} {result[name]:7.1f} µs", flush=True)
        store.close()
    return result


def _signed_in_client(server: Server, home: Path) -> tuple[Any, Any]:
    from tests.harness.signin import OAuthClient, Person

    tracker = SimpleNamespace(home=home, port=server.port, url=server.url)
    client = OAuthClient(f"http://127.0.0.1:{server.port}")
    person = Person(tracker, "bench@example.com")  # type: ignore[arg-type]
    return client, person


def access_tokens(server: Server, home: Path, count: int) -> list[str]:
    client, person = _signed_in_client(server, home)
    return [client.tokens(person)["access_token"] for _ in range(count)]


def flows(server: Server, home: Path) -> dict[str, Any]:
    """Milliseconds of a whole code flow (a signed-in person) and of a refresh."""
    client, person = _signed_in_client(server, home)
    signing_in, refreshing = [], []
    for _ in range(FLOWS):
        started = time.perf_counter()
        tokens = client.tokens(person)
        signing_in.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        answer = client.refresh(tokens["refresh_token"])
        refreshing.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 200, answer.text
    return {
        "signInMs": {"p50": round(median(signing_in), 1), "max": round(max(signing_in), 1)},
        "refreshMs": {"p50": round(median(refreshing), 1), "max": round(max(refreshing), 1)},
    }


def tracker(home: Path, store: str, mode: str) -> Server:
    port = free_port()
    argv = [str(BEE), "tracker", "serve", "--home", str(home), "--store", store, "--port", str(port)]
    argv += ["--sign-in", mode, "--access-token-lifetime", "3600", "--log-level", "warning", "--max-connections", "40"]
    return Server(argv, port)


def end_to_end(folder: Path) -> dict[str, Any]:
    home = folder / "home"
    store = str(home / "tracker.db")
    seed(home, store)
    pasted = tokens_for(home)
    today, builtin = tracker(home, store, "token"), tracker(home, store, "builtin")
    try:
        oauth = access_tokens(builtin, home, len(pasted))
        cells: dict[str, list[dict[str, Any]]] = {"today": [], "builtin pasted": [], "builtin access": []}
        for _ in range(ROUNDS):
            for name, (server, tokens) in {
                "today": (today, pasted),
                "builtin pasted": (builtin, pasted),
                "builtin access": (builtin, oauth),
            }.items():
                row = measure([server.url], tokens, "get", CLIENTS)
                cells[name].append(row)
                print(
                    f"get     {name:<16} {row['opsPerSecond']:7.0f} ops/s  p50 {row['p50Ms']:5.1f} ms  "
                    f"p99 {row['p99Ms']:6.1f} ms  errors {row['errors'] or 'none'}",
                    flush=True,
                )
    finally:
        today.stop()
        builtin.stop()
    summary: dict[str, Any] = {
        name: {
            "opsPerSecond": round(median([r["opsPerSecond"] for r in rows]), 1),
            "p50Ms": round(median([r["p50Ms"] for r in rows]), 2),
            "p99Ms": round(median([r["p99Ms"] for r in rows]), 2),
        }
        for name, rows in cells.items()
    }
    ratio = summary["builtin access"]["opsPerSecond"] / summary["today"]["opsPerSecond"]
    summary["accessVsToday"] = verdict(ratio, 0.9, higher_is_better=True)
    print(f"built-in access tokens against today's pasted tokens: {summary['accessVsToday']}")
    return summary


def signing_in(folder: Path) -> dict[str, Any]:
    stores = {"sqlite": str(folder / "signin-home" / "tracker.db")}
    from tests.harness.postgres import PostgresServer, binaries

    bindir = binaries()
    postgres = PostgresServer(bindir) if bindir else None
    if postgres is not None:
        postgres.start()
        stores["postgresql"] = postgres.create_database()
    result = {}
    try:
        for name, store in stores.items():
            home = folder / f"signin-{name}"
            server = tracker(home, store, "builtin")
            try:
                result[name] = flows(server, home)
            finally:
                server.stop()
            print(f"flow    {name:<10} sign-in {result[name]['signInMs']}  refresh {result[name]['refreshMs']}")
    finally:
        if postgres is not None:
            postgres.stop()
    return result


def main() -> None:
    load = os.getloadavg()
    report: dict[str, Any] = {"verifyMicroseconds": verification()}
    with tempfile.TemporaryDirectory(prefix="bee-bench-signin-") as folder:
        report["get"] = end_to_end(Path(folder))
        report["flows"] = signing_in(Path(folder))
    report["loadAverageAtStart"] = load
    report["clients"] = CLIENTS
    report["rounds"] = ROUNDS
    print(f"wrote {write_report('signin', report)}")


if __name__ == "__main__":
    main()
