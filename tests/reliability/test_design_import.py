"""Design import against a swapping adversary: what lands in the bundle store comes from inside the bundle, always.

A second process keeps swapping, in bursts with quiet spells between them, the file ``aa-swap.css`` of a bundle
folder for a symlink to a secret outside it (by an atomic rename), and the folder ``ab-dir`` for a symlink to a
folder outside holding the secret (by an atomic exchange, ``renameat2(RENAME_EXCHANGE)``, so the name is never
missing). Hundreds of imports of that folder (read, manifest, store, as `bee design import` runs them) race it: no
stored file and no manifest entry may ever hold the secret; each import either lands with the bundle's own bytes
or is refused with a coded error; and the adversary must really have raced both the walk and the read (refusals of
a swap met after the walk, at the read, are counted). Then `bee design import` itself, as a user runs it, refuses
each malformed name with one `Error:` line and no traceback.
"""

import functools
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_design.bundle.reading import read_bundle
from bee_design.bundle.store import BundleStore
from bee_design.digests import of_bytes
from bee_design.layout import DesignFiles
from tests.conftest import bee_executable
from tests.design.helpers import make_root, zip_with_raw_name

TRIALS = int(os.environ.get("BEE_RELIABILITY_TRIALS", "3000")) // 10
PUBLIC = "p { color: #123456 }\n"
SECRET = "the secret outside the bundle\n"

ADVERSARY = """
import ctypes, os, random, sys, time
bundle, spare, secret, public = sys.argv[1:5]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2

def exchange(a, b):
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")

def put_file(as_symlink):  # made beside the bundle, not in it, then renamed in
    if os.path.lexists("../swap.tmp"):
        os.unlink("../swap.tmp")
    if as_symlink:
        os.symlink(secret, "../swap.tmp")
    else:
        with open("../swap.tmp", "w") as f:
            f.write(public)
    os.replace("../swap.tmp", "aa-swap.css")

os.chdir(bundle)
rng = random.Random(16)
dir_is_real = True
while True:
    for n in range(rng.randrange(1, 60)):  # a burst of swaps ...
        put_file(as_symlink=n % 2 == 0)
        exchange("ab-dir", spare)
        dir_is_real = not dir_is_real
    put_file(as_symlink=False)  # ... that leaves the bundle as it was, for a quiet spell
    if not dir_is_real:
        exchange("ab-dir", spare)
        dir_is_real = True
    time.sleep(rng.uniform(0, 0.1))
"""


def bundle_folder(base: Path) -> Path:
    """A bundle whose swapped entries come first in walk order, before 200 files that widen the window."""
    folder = base / "bundle"
    (folder / "ab-dir").mkdir(parents=True)
    (folder / "ab-dir" / "x.css").write_text(PUBLIC)
    (folder / "aa-swap.css").write_text(PUBLIC)
    links = "".join(f'<link rel="stylesheet" href="s/{n:03}.css">' for n in range(200))
    (folder / "index.html").write_text(f'<link rel="stylesheet" href="aa-swap.css">{links}')
    (folder / "s").mkdir()
    for n in range(200):
        (folder / "s" / f"{n:03}.css").write_text(f".c{n} {{ margin: {n}px }}\n")
    return folder


def checkout(base: Path) -> Path:
    (base / "checkout").mkdir()
    return make_root((base / "checkout").resolve())


@pytest.mark.timeout(1800)  # hundreds of 200-file imports on a shared 2-core machine while another process spins
def test_a_swapping_adversary_never_gets_a_secret_into_a_stored_bundle(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    folder = bundle_folder(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.css").write_text(SECRET)
    spare = tmp_path / "spare"  # what ab-dir is exchanged with: a symlink to the folder outside
    spare.symlink_to(outside)
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    root = checkout(tmp_path)
    store = BundleStore(DesignFiles(root))

    secret_sha = of_bytes(SECRET.encode())
    outcomes: Counter[str] = Counter()
    leaks = 0  # imports whose manifest names the secret's bytes (a later replace would sweep the stored copy)
    pace = random.Random(6)
    adversary = subprocess.Popen([sys.executable, "-c", ADVERSARY, str(folder), str(spare), str(secret), PUBLIC])
    try:
        for _ in range(TRIALS):
            try:
                outcome = store.add(read_bundle(folder), "shop", replace=True)
            except BeeError as exc:
                at_read = "while the bundle was read" in exc.message
                outcomes[f"{exc.code.value}{' (at the read)' if at_read else ''}"] += 1
                # A refusal takes a millisecond; without a pause the next imports would all land in the same
                # burst of swaps. Pacing only: nothing is timed.
                time.sleep(pace.uniform(0, 0.03))
            else:
                outcomes[outcome.status] += 1
                leaks += any(entry.sha256 == secret_sha for entry in outcome.manifest.files)
        assert adversary.poll() is None, "the adversary stopped early"
    finally:
        adversary.kill()
        adversary.wait(timeout=10)

    blobs = [path for path in (root / ".bee" / "design" / "blobs").rglob("*") if path.is_file()]
    leaked = [str(path) for path in blobs if SECRET.encode() in path.read_bytes()]
    manifest = json.loads((root / ".bee" / "design" / "bundles" / "shop" / "manifest.json").read_text())
    summary = {"trials": TRIALS, "leaks": leaks, "leaked blobs": len(leaked), **dict(sorted(outcomes.items()))}
    record_property("design_import_swapping_adversary", json.dumps(summary))
    print("design import against a swapping adversary:", summary)
    assert leaks == 0 and leaked == [], summary
    assert all(entry["sha256"] != secret_sha for entry in manifest["files"]), summary
    assert sum(outcomes.values()) == TRIALS, summary
    assert set(outcomes) <= {
        "imported",
        "replaced",
        "unchanged",
        "outside_root",
        "outside_root (at the read)",
        "conflict",
        "conflict (at the read)",
    }, summary
    # Both the walk and the read met the adversary's swaps, and some imports landed between them.
    landed = outcomes["imported"] + outcomes["replaced"] + outcomes["unchanged"]
    met_at_read = sum(count for kind, count in outcomes.items() if "(at the read)" in kind)
    assert landed and outcomes["outside_root"] and met_at_read, summary


def bee_import(root: Path, bundle: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bee_executable()), "design", "import", str(bundle), "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.e2e
def test_bee_design_import_refuses_malformed_names_and_depth_with_one_error_line(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    named = tmp_path / "named"
    named.mkdir()
    (named / "index.html").write_text("<p>ok</p>")
    (named / os.fsdecode(b"caf\xe9.css")).write_text("p {}")
    deep = tmp_path / "deep"
    deep.joinpath(*["d"] * 70).mkdir(parents=True)
    deep.joinpath(*["d"] * 70, "x.css").write_text("p {}")
    not_utf8 = "has a name that is not UTF-8"
    zipped = functools.partial(zip_with_raw_name, utf8_flag=False)
    cases = {
        named: rf"entry 'caf\xe9.css' {not_utf8}",
        deep: "lies more than 64 folders deep",
        zipped(tmp_path / "nul.zip", b"a\x00.css"): r"entry 'a\x00.css' has a NUL byte",
        zipped(tmp_path / "flagged.zip", b"caf\xe9.css", utf8_flag=True): rf"entry 'caf\xe9.css' {not_utf8}",
        zipped(tmp_path / "cp437.zip", b"caf\x82.css"): rf"entry 'caf\x82.css' {not_utf8}",
    }
    for bundle, message in cases.items():
        completed = bee_import(root, bundle)
        output = completed.stdout + completed.stderr
        assert completed.returncode == 1, output
        assert "Traceback" not in output and output.count("Error: ") == 1, output
        assert message in completed.stderr, output
