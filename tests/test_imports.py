"""Every module of ``cipher_cores`` imports on its own, and no modules import each other in a circle.

The import graph is read from the source with :mod:`ast`, so that an import inside a function
counts as much as one at the top of a module: a circle of function-level imports works only as
long as nobody moves an import up, and it hides which module builds on which. An edge goes from
a module to every module of the package it names (``from .x import y`` is an edge to ``x``, or to
``x.y`` when that is a module), and to the packages above the named module that the importing
module is not itself inside (their ``__init__`` runs first).
"""

import ast
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest


#: The packages installed under the ``cipher_cores`` namespace.
PACKAGES = ("cipher_cores.cores", "cipher_cores.platforms", "cipher_cores.scripts")


def package_modules() -> dict:
    """Every module of :data:`PACKAGES`, by dotted name: ``(source file, is a package)``."""
    modules = {}
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        modules[package_name] = (Path(package.__file__), True)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            spec = info.module_finder.find_spec(info.name)
            modules[info.name] = (Path(spec.origin), info.ispkg)
    return modules


def _ancestors(name: str) -> list:
    """``a.b.c`` -> ``["a", "a.b"]``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def imported_modules(name: str, is_package: bool, source: str, known) -> set:
    """The modules of ``known`` that module ``name`` imports anywhere in ``source`` (at module
    level or inside functions and classes), with the packages above each one that ``name`` is not
    inside (importing ``p.q.r`` runs ``p/__init__`` and ``p/q/__init__`` first)."""
    package = name if is_package else name.rpartition(".")[0]
    named = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - (node.level - 1)])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module
            named.add(base)
            named.update(f"{base}.{alias.name}" for alias in node.names)
    own = set(_ancestors(name))
    result = set()
    for target in named:
        # `from .x import y` names both `.x` and `.x.y`: when `y` is a name, only `.x` is known.
        if target in known:
            result.update(module for module in (*_ancestors(target), target)
                          if module in known and module not in own)
    # A module never counts as importing itself.
    result.discard(name)
    return result


def import_graph() -> dict:
    """Module name -> the set of package modules it imports (:func:`imported_modules`)."""
    modules = package_modules()
    return {name: imported_modules(name, is_package, path.read_text(), modules)
            for name, (path, is_package) in modules.items()}


def circles(graph: dict) -> list:
    """One circle (a list of modules, the first repeated at the end) for each group of modules
    that import one another, directly or through others (a strongly connected component of
    more than one module, found by Tarjan's algorithm); sorted, so a failure reads the same on
    every run."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def visit(node):
        # Recursion is fine here: the graph has about a hundred nodes.
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(set(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(_circle_through(graph, component) for component in components)


def _circle_through(graph: dict, component: set) -> list:
    """The shortest circle from the first module of ``component`` back to itself (breadth
    first, inside the component)."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for successor in sorted(graph[node] & component):
            if successor == start:
                return paths[node] + [start]
            if successor not in paths:
                paths[successor] = paths[node] + [successor]
                queue.append(successor)
    raise AssertionError(f"no circle through {start} in {sorted(component)}")


MODULES = sorted(package_modules())


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    module = importlib.import_module(name)
    assert module.__name__ == name


def test_every_folder_is_found():
    # The walk must reach into subpackages, or the graph below would be checked on a part only.
    assert {"cipher_cores.cores.catalog", "cipher_cores.cores.aes.core",
            "cipher_cores.scripts.flow.measure", "cipher_cores.platforms.devices"} <= set(MODULES)


def test_no_import_circle():
    found = circles(import_graph())
    assert not found, "modules that import each other:\n" + "\n".join(
        " -> ".join(circle) for circle in found)


@pytest.mark.parametrize("layer, below", [
    # The IP stands alone: a user takes cores/ without the boards or the build flow.
    ("cipher_cores.cores", ("cipher_cores.cores",)),
    # Boards and devices place cores; the flow builds on them, not the other way round.
    ("cipher_cores.platforms", ("cipher_cores.cores", "cipher_cores.platforms")),
])
def test_layers_import_only_what_is_below_them(layer, below):
    def inside(name, package):
        return name == package or name.startswith(package + ".")
    wrong = sorted(f"{name} imports {target}"
                   for name, targets in import_graph().items() if inside(name, layer)
                   for target in targets if not any(inside(target, other) for other in below))
    assert wrong == []


# --- the reader and the search themselves ------------------------------------------------------

KNOWN = {"pkg", "pkg.a", "pkg.b", "pkg.sub", "pkg.sub.c", "pkg.sub.d"}


def test_function_level_and_relative_imports_are_edges():
    source = (
        "import os\n"
        "from .b import name\n"
        "def f():\n"
        "    from .sub import c\n"
        "    import pkg.sub.d\n")
    assert imported_modules("pkg.a", False, source, KNOWN) == \
        {"pkg.b", "pkg.sub", "pkg.sub.c", "pkg.sub.d"}


def test_own_packages_are_not_edges():
    # pkg.sub.c is inside pkg and pkg.sub: their __init__ has run before it, not because of it.
    source = "from .. import a\nfrom . import d\nfrom pkg.sub.d import x\n"
    assert imported_modules("pkg.sub.c", False, source, KNOWN) == {"pkg.a", "pkg.sub.d"}


def test_package_init_imports_relative_to_itself():
    assert imported_modules("pkg.sub", True, "from .c import x\n", KNOWN) == {"pkg.sub.c"}


def test_circles_are_found_through_several_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [["a", "b", "c", "a"]]


def test_no_circle_in_a_tree():
    assert circles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
