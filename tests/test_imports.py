"""Importing a library module changes nothing around it: no environment variable (offline mode
is for entry points to set, ``mismatch_core.resources.configure_offline_mode``), no network, no
file written.

A fresh interpreter first imports the third-party modules the library imports at module level:
what they do on import (torch and scikit-learn set environment variables, matplotlib makes its
config folder) is theirs and happens before the check. Then an audit hook blocks the network
and records every file write, and every module of mismatch_core, synth and evaluator is
imported with ``pkgutil.walk_packages``; the environment must come out as it went in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("mismatch_core", "synth", "evaluator")

CHECK = r"""
import ast, importlib, json, os, pkgutil, sys
from pathlib import Path

packages = sys.argv[1:]
NETWORK = {"socket.connect", "socket.getaddrinfo", "socket.gethostbyname",
           "socket.gethostbyname_ex", "socket.gethostbyaddr", "socket.sendto", "socket.sendmsg"}
FILES = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.truncate", "os.link",
         "os.symlink", "shutil.copyfile", "shutil.move", "shutil.rmtree"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
found = {"network": [], "files": [], "environ": [], "errors": []}
state = {"module": "<third-party imports>", "watching": False}


def culprit():
    # the innermost project module on the stack, else the one being imported
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.split(".")[0] in packages:
            return name
        frame = frame.f_back
    return state["module"]


def hook(event, args):
    if event in NETWORK:
        found["network"].append(f"{culprit()}: {event} {args[0]!r}")
        raise ConnectionError(f"no network while importing {state['module']}")
    if not state["watching"]:
        return
    if event == "open":
        path, mode, flags = args
        writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool(flags & WRITE_FLAGS)
        if writes:
            found["files"].append(f"{culprit()}: open {path!s} for writing")
    elif event in FILES:
        found["files"].append(f"{culprit()}: {event} {args[0]!s}")


def third_party(package):
    # modules imported at module level (not inside a function) from outside the project
    names = set()
    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)
    for path in Path(package).rglob("*.py"):
        visit(ast.parse(path.read_text(encoding="utf-8")))
    return sorted(n for n in names if n.split(".")[0] not in packages and n != "__future__")


sys.addaudithook(hook)
for name in sorted({n for package in packages for n in third_party(package)}):
    try:
        importlib.import_module(name)
    except ImportError:  # `from module import name` where name is no module
        pass
before = dict(os.environ)
state["watching"] = True
for package in packages:
    state["module"] = package
    importlib.import_module(package)
    for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
        if info.name.endswith(".__main__"):  # runs the command
            continue
        state["module"] = info.name
        try:
            importlib.import_module(info.name)
        except Exception as error:
            found["errors"].append(f"{info.name}: {type(error).__name__}: {error}")
after = dict(os.environ)
found["environ"] = [
    f"{key}: {before.get(key)!r} -> {after.get(key)!r}"
    for key in sorted(set(before) | set(after))
    if before.get(key) != after.get(key)
]
print(json.dumps(found))
"""


def test_importing_the_library_has_no_side_effects() -> None:
    # without the offline settings the entry points make, so a module setting them shows
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM")
    }
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the .pyc cache is Python's, not the library's
    result = subprocess.run(
        [sys.executable, "-c", CHECK, *PACKAGES],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found == {"network": [], "files": [], "environ": [], "errors": []}
