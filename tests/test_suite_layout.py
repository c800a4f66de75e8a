"""The test suite's own layout: test modules beside ``conftest.py``, everything they share in
``tests/support/``, shared fixtures in ``conftest.py``."""

import ast
from pathlib import Path


TESTS = Path(__file__).parent


def _imports(path: Path) -> list:
    """``(line, module)`` of every ``from ... import`` in ``path``, relative ones with their dots."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def _is_fixture(decorator) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "fixture"


def test_only_test_modules_and_conftest_sit_beside_the_tests():
    others = sorted(path.name for path in TESTS.glob("*.py")
                    if not path.name.startswith("test_"))
    assert others == ["__init__.py", "conftest.py"], \
        "support code belongs in tests/support/, not beside the test modules"


def test_no_test_module_imports_another():
    offenders = [f"{path.name}:{line}: {module}"
                 for path in sorted(TESTS.glob("*.py"))
                 for line, module in _imports(path)
                 if module.lstrip(".").removeprefix("tests.").startswith("test_")]
    assert offenders == [], "shared test code belongs in tests/support/"


def test_support_modules_define_no_fixtures():
    # A fixture in a support module only works where a test module imports it by hand (and
    # pyflakes calls the import unused): shared fixtures live in conftest.py.
    offenders = [f"{path.name}:{node.lineno}: {node.name}"
                 for path in sorted((TESTS / "support").glob("*.py"))
                 for node in ast.walk(ast.parse(path.read_text(), str(path)))
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and any(_is_fixture(decorator) for decorator in node.decorator_list)]
    assert offenders == []
