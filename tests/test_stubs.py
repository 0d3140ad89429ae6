"""``python/ceql/_ceql.pyi`` describes the native module as built: every class,
method, property and function of ``ceql._ceql`` is in the stub with the
parameters (names and defaults) that PyO3 reports, and the stub lists nothing
the module lacks."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from ceql import _ceql

STUB = ast.parse((Path(_ceql.__file__).parent / "_ceql.pyi").read_text(encoding="utf-8"))
# Dunder methods that are part of a class's interface (the rest come from `object`).
INTERFACE_DUNDERS = {"__len__", "__eq__", "__hash__", "__arrow_c_array__"}


def _public(name: str) -> bool:
    return not name.startswith("_") or name in INTERFACE_DUNDERS


def _stub_params(fn: ast.FunctionDef) -> list:
    """(name, default) of a stub function's parameters, `self` left out; the
    default is ``inspect.Parameter.empty`` when there is none."""
    args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    defaults = [inspect.Parameter.empty] * (len(fn.args.posonlyargs) + len(fn.args.args) - len(fn.args.defaults))
    defaults += [ast.literal_eval(d) for d in fn.args.defaults]
    defaults += [inspect.Parameter.empty if d is None else ast.literal_eval(d) for d in fn.args.kw_defaults]
    return [(a.arg, d) for a, d in zip(args, defaults) if a.arg != "self"]


def _native_params(obj) -> list:
    return [(p.name, p.default) for p in inspect.signature(obj).parameters.values() if p.name != "self"]


def _stub_classes() -> dict:
    return {node.name: node for node in STUB.body if isinstance(node, ast.ClassDef)}


def test_the_stub_lists_exactly_the_native_classes_and_functions():
    stub = {n.name for n in STUB.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    native = {n for n in dir(_ceql) if not n.startswith("_")}
    assert stub == native


@pytest.mark.parametrize("name", sorted(_stub_classes()))
def test_each_class_has_the_stubs_members_and_signatures(name):
    cls, node = getattr(_ceql, name), _stub_classes()[name]
    members = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
    native = {n for n in vars(cls) if _public(n)}
    assert {n for n in members if _public(n)} == native, name
    for member, fn in members.items():
        if member in ("__len__", "__eq__", "__hash__"):
            continue  # slots of the type protocol, whose parameters have no names to call them by
        target = cls if member == "__init__" else getattr(cls, member)
        try:
            signature = _native_params(target)
        except (TypeError, ValueError):  # properties, and classes without a constructor signature
            continue
        assert _stub_params(fn) == signature, f"{name}.{member}"


def test_module_functions_have_the_stubs_signatures():
    for fn in (n for n in STUB.body if isinstance(n, ast.FunctionDef)):
        assert _stub_params(fn) == _native_params(getattr(_ceql, fn.name)), fn.name
