"""The warm-host protocol's shared rules: identities, the environment digest, the private directory, the handshake."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bee_contracts import limits
from bee_contracts.warm import (
    FRONTEND_ONLY,
    WarmUnavailable,
    environment_digest,
    folder_id,
    host_socket,
    identity_digest,
    make_identity,
    peer_uid,
    read_environment,
    read_line,
    runtime_dir,
    send_line,
    supervisor_environment,
    warm_dir,
)

NOBODY = 65534


def test_the_environment_digest_covers_what_a_host_reads_at_start_and_nothing_the_front_end_alone_reads() -> None:
    base = {"HOME": "/home/a", "PATH": "/bin", "BEE_PACKET_DEADLINE_SECONDS": "5"}
    assert read_environment(base) == {"HOME": "/home/a", "BEE_PACKET_DEADLINE_SECONDS": "5"}
    digest = environment_digest(base)
    assert environment_digest({**base, "PATH": "/usr/bin", "TERM": "xterm", "EDITOR": "vi"}) == digest
    for name in FRONTEND_ONLY:
        assert environment_digest({**base, name: "0"}) == digest
    read_by_a_host = [
        {"HOME": "/home/b"},
        {"XDG_CONFIG_HOME": "/cfg"},
        {"XDG_RUNTIME_DIR": "/run/user/1"},
        {"BEE_TRACKER_TOKEN": "t"},
        # What an HTTP client reads from the process: proxies in either case, the bypass list, the CA bundle.
        {"HTTPS_PROXY": "http://proxy:3128"},
        {"https_proxy": "http://proxy:3128"},
        {"http_proxy": "http://proxy:3128"},
        {"ALL_PROXY": "socks5://proxy"},
        {"no_proxy": "example.com"},
        {"SSL_CERT_FILE": "/etc/ca.pem"},
        {"SSL_CERT_DIR": "/etc/certs"},
        # Locale, time zone and the temporary folder.
        {"LANG": "de_DE.UTF-8"},
        {"LC_ALL": "C"},
        {"LC_CTYPE": "C.UTF-8"},
        {"TZ": "Europe/Berlin"},
        {"TMPDIR": "/var/tmp"},
    ]
    for changed in read_by_a_host:
        assert environment_digest({**base, **changed}) != digest, changed
        assert read_environment({**base, **changed}) == {**read_environment(base), **changed}


def test_the_warm_supervisor_is_lent_only_what_it_reads() -> None:
    editor = {
        "XDG_RUNTIME_DIR": "/run/user/1",
        "HOME": "/home/a",
        "HTTPS_PROXY": "http://proxy:3128",
        "BEE_TRACKER_TOKEN": "secret",
        "PYTHONPATH": ".",
        "PATH": "/bin",
        "BEE_WARM_SUPERVISOR_IDLE_SECONDS": "5",
        "LC_ALL": "C",
    }
    assert supervisor_environment(editor) == {
        "XDG_RUNTIME_DIR": "/run/user/1",
        "HOME": "/home/a",
        "BEE_WARM_SUPERVISOR_IDLE_SECONDS": "5",
        "LC_ALL": "C",
    }


def test_an_identity_names_one_socket_and_every_part_of_it_counts() -> None:
    env = {"HOME": "/home/a"}
    identity = make_identity("core", "/repo", "/repo/.bee", "warning", env, place="1:2")
    assert identity_digest(identity) == identity_digest(dict(identity))
    others = [
        make_identity("discovery", "/repo", "/repo/.bee", "warning", env, place="1:2"),
        make_identity("core", "/other", "/repo/.bee", "warning", env, place="1:2"),
        make_identity("core", "/repo", "/elsewhere", "warning", env, place="1:2"),
        make_identity("core", "/repo", "/repo/.bee", "debug", env, place="1:2"),
        make_identity("core", "/repo", "/repo/.bee", "warning", {"HOME": "/home/b"}, place="1:2"),
        make_identity("core", "/repo", "/repo/.bee", "warning", env, place="1:3"),
    ]
    assert len({identity_digest(identity), *map(identity_digest, others)}) == 7


def test_a_folder_created_again_under_the_same_path_is_another_folder(tmp_path: Path) -> None:
    checkout = tmp_path / "repo"
    checkout.mkdir()
    keep = tmp_path / "keep"  # held, so that the inode is not handed straight back to the new folder
    checkout.rename(keep)
    before = folder_id(str(keep))
    checkout.mkdir()
    assert folder_id(str(checkout)) != before
    assert folder_id(str(checkout)) == folder_id(str(checkout) + "/.")
    with pytest.raises(WarmUnavailable, match="cannot examine"):
        folder_id(str(tmp_path / "missing"))


def private(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def test_the_runtime_dir_is_a_private_bee_folder_in_xdg_runtime_dir(tmp_path: Path) -> None:
    base = private(tmp_path / "run")
    found = Path(runtime_dir({"XDG_RUNTIME_DIR": str(base)}))
    assert found == base / "bee"
    info = found.lstat()
    assert info.st_uid == os.getuid() and info.st_mode & 0o777 == 0o700


def test_an_xdg_runtime_dir_that_is_not_private_is_passed_over_for_tmp(tmp_path: Path) -> None:
    base = private(tmp_path / "run")
    base.chmod(0o755)
    assert runtime_dir({"XDG_RUNTIME_DIR": str(base)}) == f"/tmp/bee-{os.getuid()}"
    assert runtime_dir({"XDG_RUNTIME_DIR": "relative/dir"}) == f"/tmp/bee-{os.getuid()}"


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda bee: bee.chmod(0o750), "open to other users (mode 0750"),
        (lambda bee: os.chown(bee, NOBODY, -1), f"belongs to uid {NOBODY}"),
        (lambda bee: (bee.rmdir(), bee.symlink_to(bee.parent / "elsewhere")), "is not a directory"),
    ],
    ids=["group-bits", "foreign-owner", "symlink"],
)
def test_a_bee_folder_that_is_not_private_is_refused(
    tmp_path: Path, spoil: Callable[[Path], object], said: str
) -> None:
    if os.getuid() != 0 and "owner" in said:
        pytest.skip("only root can give a folder away")
    base = private(tmp_path / "run")
    private(base / "elsewhere")
    bee = private(base / "bee")
    spoil(bee)
    with pytest.raises(WarmUnavailable) as refused:
        runtime_dir({"XDG_RUNTIME_DIR": str(base)})
    assert said in str(refused.value)
    with pytest.raises(WarmUnavailable):
        warm_dir({"XDG_RUNTIME_DIR": str(base)})


def test_the_installation_folder_and_its_hosts_folder_are_private_too(tmp_path: Path) -> None:
    base = private(tmp_path / "run")
    folder = Path(warm_dir({"XDG_RUNTIME_DIR": str(base)}))
    for path in (folder, folder / "hosts"):
        assert path.lstat().st_mode & 0o777 == 0o700
    (folder / "hosts").chmod(0o711)
    with pytest.raises(WarmUnavailable, match="open to other users"):
        warm_dir({"XDG_RUNTIME_DIR": str(base)})


def test_a_socket_path_too_long_for_unix_sockets_is_refused_not_cut() -> None:
    with pytest.raises(WarmUnavailable, match="too long"):
        host_socket("/tmp/" + "x" * 120, "0" * 32)
    assert host_socket("/tmp/w", "ab").endswith("/hosts/ab.sock")


def test_the_frame_limit_the_front_end_reads_is_the_contracts_one() -> None:
    assert limits.MAX_FRAME_BYTES == 512 * 1024


def test_a_handshake_line_is_read_alone_and_what_follows_stays_for_the_protocol() -> None:
    left, right = socket.socketpair()
    with left, right:
        assert peer_uid(left) == os.getuid()
        send_line(right, {"bee": "hello"})
        right.sendall(b'{"jsonrpc":"2.0"}\n')
        assert read_line(left, time.monotonic() + 60) == {"bee": "hello"}  # a give-up guard: the line is there
        assert left.recv(100) == b'{"jsonrpc":"2.0"}\n'


@pytest.mark.parametrize(
    ("sent", "said"),
    [
        (b"[1, 2]\n", "not a JSON object"),
        (b"{oops\n", "not JSON"),
        (b"x" * 2048, "over 1024 bytes"),
        (b"", "closed the connection"),
        (None, "no answer in time"),
    ],
    ids=["array", "not-json", "too-long", "closed", "silent"],
)
def test_a_bad_handshake_line_is_refused_with_a_reason(sent: bytes | None, said: str) -> None:
    left, right = socket.socketpair()
    with left, right:
        writer = None
        if sent is not None:
            data = sent

            def write() -> None:
                right.sendall(data)
                right.shutdown(socket.SHUT_WR)

            writer = threading.Thread(target=write)
            writer.start()
        with pytest.raises(WarmUnavailable, match=said):
            read_line(left, time.monotonic() + (0.2 if sent is None else 5), limit=1024)
        if writer is not None:
            writer.join()


def test_an_ensure_request_is_checked_part_by_part(tmp_path: Path) -> None:
    from bee_contracts.warm import Refusal, check_ensure, ensure_message, identity_of

    checkout = str(tmp_path.resolve())
    env = {"HOME": "/home/a"}
    identity = identity_of("core", checkout, checkout + "/.bee", "warning", env)
    views = ("core", "discovery", "design")
    assert check_ensure(ensure_message(identity, env), views) == (identity, env)
    design = identity_of("design", checkout, checkout + "/.bee", "warning", env)
    assert check_ensure(ensure_message(design, env), views) == (design, env)  # an instance, like core's
    bad = [
        ({"bee": "hello"}, "request", "not an ensure request"),
        ({**ensure_message(identity, env), "wire": 99}, "wire", "wire 99"),
        (ensure_message({**identity, "extra": "x"}, env), "request", "malformed"),
        (ensure_message({**identity, "view": "shell"}, env), "request", "unknown view 'shell' (the stdio hosts"),
        (ensure_message({**identity, "view": "core-discovery"}, env), "request", "unknown view"),
        (ensure_message({**identity, "logLevel": "loud"}, env), "request", "unknown log level"),
        (ensure_message({**identity, "checkout": "relative"}, env), "request", "resolved absolute directory"),
        (ensure_message({**identity, "place": "0:0"}, env), "request", "another folder now"),
        (ensure_message({**identity, "instance": ""}, env), "request", "is not an absolute path"),
        (ensure_message({**design, "instance": "relative"}, env), "request", "is not an absolute path"),
        (ensure_message(identity, {"HOME": "/home/b"}), "request", "does not match the identity's digest"),
        ({**ensure_message(identity, env), "environ": {"A": 1}}, "request", "object of strings"),
    ]
    for request, code, said in bad:
        with pytest.raises(Refusal) as refused:
            check_ensure(request, views)
        assert refused.value.code == code and said in refused.value.message, request
        assert refused.value.answer() == {"bee": "refused", "code": code, "error": refused.value.message}


def test_a_hello_names_this_hosts_identity_and_a_session_its_environment(tmp_path: Path) -> None:
    from bee_contracts.warm import Refusal, check_hello, hello_message, identity_of

    checkout = str(tmp_path.resolve())
    env = {"HOME": "/home/a"}
    identity = identity_of("design", checkout, checkout + "/.bee", "warning", env)
    assert check_hello(hello_message(identity, env, "session"), identity) == ("session", env)
    assert check_hello(hello_message(identity, {}, "probe"), identity) == ("probe", {})  # a probe brings none
    for hello, code in [
        (hello_message(identity, {"HOME": "/home/b"}, "session"), "identity"),
        (hello_message({**identity, "view": "core"}, env, "session"), "identity"),
        ({**hello_message(identity, env, "session"), "role": "admin"}, "hello"),
        ({**hello_message(identity, env, "session"), "wire": 0}, "wire"),
        ({"bee": "ensure"}, "hello"),
    ]:
        with pytest.raises(Refusal) as refused:
            check_hello(hello, identity)
        assert refused.value.code == code, hello
