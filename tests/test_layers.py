"""The package layers, read from the source with ``ast``: every import points down (or within its
own layer), no two packages import each other (directly or round a cycle), nothing outside
``evaluator.cli`` imports a command module, and no command module imports another."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE_PACKAGES = ("mismatch_core", "synth", "evaluator")

# Lowest first. A module belongs to the longest entry that is it or a package above it; it may
# import its own layer and the layers below, never one above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("mismatch_core",),  # resources, taxonomy, JSONL, pairs, atomic writing, errors
    ("synth.perturb",),  # perturbation rules
    # the generator; features; the process's allocator, process group, Lightning's output and
    # its Ctrl-C
    (
        "synth",
        "evaluator.features",
        "evaluator.malloc",
        "evaluator.process_group",
        "evaluator.lightning_quiet",
        "evaluator.lightning_interrupt",
    ),
    ("evaluator.model",),  # the network
    (
        "evaluator.hub",
        "evaluator.human_data",
        "evaluator.tasks",
        "evaluator.predict_io",
        "evaluator.spans",
        "evaluator.system_comparison",
    ),
    ("evaluator.signature",),  # what decides a checkpoint's scores
    ("evaluator.inference",),  # checkpoint + texts -> model outputs
    # fitting; real outputs with synth errors applied (bench measurement, span training)
    ("evaluator.training", "evaluator.finetune", "evaluator.realtext_data"),
    ("evaluator.evaluator", "evaluator.multi_device"),  # the Evaluator API
    ("evaluator.stress", "evaluator.bench"),  # measurements built on the API
    ("evaluator.cli",),  # the commands
)
LAYER_OF = {node: level for level, nodes in enumerate(LAYERS) for node in nodes}
# the package's __init__ re-exports the Evaluator API
ALIASES = {"evaluator": "evaluator.evaluator"}
COMMANDS = "evaluator.cli"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for package in SOURCE_PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
    }


def imported_modules(path: Path, module: str, known: set[str]) -> set[str]:
    """Every project module ``path`` imports, at any depth of the file (lazy imports too)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:  # `from package import module` imports the module
                name = f"{base}.{alias.name}"
                found.add(name if name in known else base)
    return {name for name in found if name.split(".")[0] in SOURCE_PACKAGES}


def node_of(module: str) -> str:
    if module in ALIASES:
        return ALIASES[module]
    matches = [node for node in LAYER_OF if module == node or module.startswith(node + ".")]
    assert matches, f"{module} is in no layer; add it to LAYERS in {Path(__file__).name}"
    return max(matches, key=len)


def import_graph() -> dict[str, set[str]]:
    """importing module -> the project modules it imports, over the source packages."""
    modules = source_modules()
    return {
        module: imported_modules(path, module, set(modules)) for module, path in modules.items()
    }


def upward_imports(graph) -> list[str]:
    problems = []
    for module, imports in graph.items():
        for imported in imports:
            low, high = node_of(module), node_of(imported)
            if LAYER_OF[high] > LAYER_OF[low]:
                problems.append(f"{module} ({low}) imports {imported} ({high}), a higher layer")
    return problems


def command_imports(graph) -> list[str]:
    return [
        f"{module} imports {imported}; only evaluator.cli may import a command"
        for module, imports in graph.items()
        for imported in imports
        if (imported == COMMANDS or imported.startswith(COMMANDS + "."))
        and not (module == COMMANDS or module.startswith(COMMANDS + "."))
    ]


def command_modules() -> set[str]:
    """The modules of the commands and of the bench targets, as the dispatchers name them."""
    from evaluator.cli import COMMANDS as commands
    from evaluator.cli.bench import TARGETS

    named = [module for module, _ in commands.values()]
    named += [target.partition(":")[0] for target in TARGETS.values()]
    return set(named)


def imports_between_commands(graph, commands: set[str]) -> list[str]:
    """What one command takes from another belongs in a module they share (as cli.scoring)."""
    return [
        f"{module} imports the command {imported}; move what both use to a shared module"
        for module, imports in graph.items()
        if module in commands
        for imported in imports
        if imported in commands and imported != module
    ]


def package_cycles(graph) -> list[str]:
    """Cycles among the layer entries (packages), found by depth-first search."""
    edges: dict[str, set[str]] = {node: set() for node in LAYER_OF}
    for module, imports in graph.items():
        for imported in imports:
            if node_of(imported) != node_of(module):
                edges[node_of(module)].add(node_of(imported))
    cycles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for target in sorted(edges[node]):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return cycles


def test_every_module_has_a_layer():
    for module in source_modules():
        node_of(module)


def test_every_folder_of_modules_is_a_package():
    """setuptools' ``packages.find`` (pyproject.toml) takes a folder only with an __init__.py:
    without one, its modules run from a checkout but are missing from an installed wheel."""
    folders = {path.parent for path in source_modules().values()}
    missing = [folder for folder in sorted(folders) if not (folder / "__init__.py").is_file()]
    assert [str(folder.relative_to(REPO)) for folder in missing] == []


def test_imports_point_down_the_layers():
    assert upward_imports(import_graph()) == []


def test_no_cycle_between_packages():
    assert package_cycles(import_graph()) == []


def test_only_the_cli_imports_commands():
    assert command_imports(import_graph()) == []


def test_no_command_imports_another():
    assert imports_between_commands(import_graph(), command_modules()) == []


def test_the_check_sees_a_forbidden_import():
    """The checks fail on an upward import, a cycle and a command import (a made-up graph)."""
    graph = {
        "mismatch_core.resources": {"synth.generate"},
        "synth.generate": {"mismatch_core.resources"},
        "evaluator.hub": {"evaluator.cli.predict"},
    }
    assert len(upward_imports(graph)) == 2  # core -> synth, hub -> cli
    assert package_cycles(graph) == ["mismatch_core -> synth -> mismatch_core"]
    assert len(command_imports(graph)) == 1
    between = {"evaluator.cli.evaluate": {"evaluator.cli.finetune", "evaluator.cli.scoring"}}
    assert len(imports_between_commands(between, command_modules())) == 1
