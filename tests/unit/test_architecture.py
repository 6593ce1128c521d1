"""The shape of the code, checked: the domain core imports no store, driver or transport, its
capability folders import only downwards, and no module of the project takes part in an import
cycle."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("gateway", "stores", "agents_demo", "bench", "memgate/integrations")
FORBIDDEN_IN_CORE = (
    "stores",
    "grpc",
    "redis",
    "neo4j",
    "faiss",
    "sqlite3",
    "memgate",
    "opentelemetry",
    "prometheus_client",
    "http",
    "httpx",
)


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """Every module ``module`` imports at run time (anywhere in the file, not under
    TYPE_CHECKING), resolved to the most specific project module or the top-level name."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            skip |= {id(n) for child in node.body for n in ast.walk(child)}
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield sub if sub in modules else target


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        m: {i for i in _imports(m, p, modules) if i in modules and i != m}
        for m, p in modules.items()
    }


def test_core_imports_no_store_driver_or_transport() -> None:
    modules = _modules()
    bad = []
    for name, path in modules.items():
        if not name.startswith("gateway.core"):
            continue
        for imported in _imports(name, path, modules):
            if imported.split(".")[0] in FORBIDDEN_IN_CORE:
                bad.append(f"{name} imports {imported}")
    assert bad == []


def test_core_imports_nothing_outside_the_core() -> None:
    """Settings are built at the edge and passed down: no core module imports ``gateway.settings``
    (or any other module of ``gateway`` outside the core)."""
    modules = _modules()
    bad = []
    for name, path in modules.items():
        if not name.startswith("gateway.core"):
            continue
        for imported in _imports(name, path, modules):
            if imported.startswith("gateway") and not imported.startswith("gateway.core"):
                bad.append(f"{name} imports {imported}")
    assert bad == []


def test_importing_the_core_loads_no_driver() -> None:
    code = (
        "import sys, gateway.core.usecases.service, gateway.core.ports.ports;"
        f"print(sorted(m for m in {FORBIDDEN_IN_CORE!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_check_sees_a_cycle() -> None:
    """The check itself is not blind: a made-up cycle is found, a chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


#: the core's capability folders, lowest first: a module imports only from its own folder or a
#: lower one (``gateway/core/__init__.py`` says what each holds)
CORE_ORDER = (
    "screening",
    "model",
    "ports",
    "truth",
    "access",
    "journal",
    "writing",
    "apply",
    "formation",
    "recall",
    "usecases",
)


def _folder_violations(graph: dict[str, set[str]]) -> list[str]:
    rank = {f: i for i, f in enumerate(CORE_ORDER)}
    bad = []
    for name, imported in graph.items():
        parts = name.split(".")
        if parts[:2] != ["gateway", "core"] or len(parts) < 4:
            continue
        for target in imported:
            tparts = target.split(".")
            if tparts[:2] != ["gateway", "core"] or len(tparts) < 3:
                continue
            if rank[tparts[2]] > rank[parts[2]]:
                bad.append(f"{name} ({parts[2]}) imports {target} ({tparts[2]})")
    return bad


def test_core_folders_import_only_downwards() -> None:
    folders = {
        p.name for p in (ROOT / "gateway" / "core").iterdir() if (p / "__init__.py").exists()
    }
    assert folders == set(CORE_ORDER), "a new core folder needs its place in CORE_ORDER"
    loose = [p.name for p in (ROOT / "gateway" / "core").glob("*.py") if p.name != "__init__.py"]
    assert loose == [], f"core modules belong in a capability folder: {loose}"
    assert _folder_violations(_graph()) == []


def test_the_folder_order_check_sees_an_upward_import() -> None:
    graph = {
        "gateway.core.model.models": {"gateway.core.recall.scoring"},
        "gateway.core.recall.scoring": {"gateway.core.model.models"},
    }
    assert _folder_violations(graph) == [
        "gateway.core.model.models (model) imports gateway.core.recall.scoring (recall)"
    ]


def test_core_modules_say_what_they_own() -> None:
    for path in (ROOT / "gateway" / "core").rglob("*.py"):
        text = path.read_text()
        assert text.startswith('"""'), f"{path} does not start with what it owns"


def test_client_imports_nothing_from_the_server() -> None:
    graph = _graph()
    for name, imported in graph.items():
        if name.startswith("gateway.client"):
            server = [i for i in imported if i.split(".")[:2] != ["gateway", "client"]]
            assert server == [], f"{name} imports {server}"


def test_core_install_stays_lean() -> None:
    """The integrations are optional extras: importing the gateway, its clients or its command
    loads neither the MCP SDK nor LangGraph."""
    code = (
        "import sys, gateway, gateway.client, gateway.client.aio, gateway.cli, gateway.rpc.server;"
        "print(sorted(m for m in ('mcp', 'langgraph') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_integrations_are_clients_of_the_gateway() -> None:
    """``gateway.integrations`` reaches the gateway only through ``gateway.client``, and nothing
    outside it imports an integration except the command (lazily, for ``memgate mcp``) and the
    deprecated ``memgate.integrations`` re-exports."""
    modules = _modules()
    integrations = [m for m in modules if m.startswith("gateway.integrations.")]
    assert sorted(integrations) == ["gateway.integrations.langgraph", "gateway.integrations.mcp"]
    for name in integrations:
        project = [
            i
            for i in _imports(name, modules[name], modules)
            if i.split(".")[0] in ("gateway", "stores", "memgate")
        ]
        assert project, f"{name} imports nothing of the gateway?"
        bad = [i for i in project if not i.startswith("gateway.client")]
        assert bad == [], f"{name} imports {bad}"
    users = {
        name
        for name, imported in _graph().items()
        if any(i.startswith("gateway.integrations") for i in imported)
        and not name.startswith(("gateway.integrations", "memgate.integrations"))
    }
    assert users <= {"gateway.cli"}, users


def test_one_import_root_and_the_old_paths_warn() -> None:
    """Users import from ``gateway`` only; the old paths still work, with a DeprecationWarning
    naming the new one."""
    code = """
import importlib, json, warnings
out = []
for name in ["gateway.aio", "memgate.integrations.mcp_server", "memgate.integrations.langgraph"]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(name)
    works = any(hasattr(module, a) for a in ("GatewayClient", "build_server", "MemgateStore"))
    warned = [str(w.message) for w in caught if w.category is DeprecationWarning]
    out.append((name, works, warned))
print(json.dumps(out))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    found = json.loads(out.stdout)
    for name, works, warned in found:
        assert works, f"{name} no longer exports what it did"
        assert warned and "gateway." in warned[0], f"{name} does not warn: {warned}"
