"""Make the edits on the caller's source with LibCST, so everything else stays byte-identical.

``ast`` cannot write source back without losing comments and layout; LibCST's concrete syntax
tree keeps every space, comment and parenthesis, so only the nodes an edit names change: a
module path, an imported name, a keyword, an argument. Pure: text in, text out.

An edit that does not find exactly what its finding promised (no such import at that line, two
calls there passing the keyword, a value that is not the old default) is refused with a reason
rather than guessed -- the finding is then left to a person.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import GlobalScope, MetadataWrapper, PositionProvider, ScopeProvider

from harness.fixing.cst_lists import all_strings, walk, without
from harness.fixing.model import ArgumentsEdit, Edit, ImportEdit, KeywordEdit, Refusal


@dataclass(frozen=True)
class Edited:
    """The new text (the old one when nothing applied) and the edits that were refused."""

    text: str
    refused: tuple[Refusal, ...] = ()


def dotted(node: cst.BaseExpression | None) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted(node.value)}.{node.attr.value}"
    return ""


def _alias_name(a: cst.ImportAlias) -> str:
    return dotted(a.name)


def _same_value(code: str, expected: str) -> bool:
    """Do two expressions say the same (``None`` vs ``None``, ``'a'`` vs ``"a"``)?"""
    try:
        return ast.dump(ast.parse(code.strip(), mode="eval")) == ast.dump(
            ast.parse(expected.strip(), mode="eval")
        )
    except SyntaxError:
        return code.strip() == expected.strip()


@dataclass
class _Plan:
    imports: dict[cst.ImportFrom, list[ImportEdit]] = field(default_factory=dict)
    calls: dict[cst.Call, list[KeywordEdit]] = field(default_factory=dict)
    args: dict[cst.Call, ArgumentsEdit] = field(default_factory=dict)
    keys: set[cst.DictElement] = field(default_factory=set)  # dict entries to drop
    renames: dict[cst.CSTNode, str] = field(default_factory=dict)  # Name/SimpleString -> new
    aliased: set[tuple[cst.ImportFrom, str]] = field(default_factory=set)  # `New as Old`
    refused: list[Refusal] = field(default_factory=list)


def apply_edits(text: str, edits: Sequence[Edit]) -> Edited:
    """Apply every edit it can find exactly; refuse the others (with the reason)."""
    if not edits:
        return Edited(text)
    # LibCST drops a UTF-8 byte-order mark: keep it, or the patch would rewrite line 1 too
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    try:
        wrapper = MetadataWrapper(cst.parse_module(text[len(bom) :]))
    except cst.ParserSyntaxError as exc:
        reason = f"LibCST cannot parse the file (line {exc.raw_line}: {exc.message})"
        return Edited(text, tuple(Refusal(e, reason) for e in edits))
    pos = wrapper.resolve(PositionProvider)
    module = wrapper.module
    plan = _Plan()
    imports: dict[int, list[cst.ImportFrom]] = {}
    calls: dict[int, list[cst.Call]] = {}
    keys: dict[int, list[cst.SimpleString]] = {}  # dict keys and d["k"] subscripts
    for node, where in pos.items():
        if isinstance(node, cst.ImportFrom) and not node.relative:
            imports.setdefault(where.start.line, []).append(node)
        elif isinstance(node, cst.Call):
            calls.setdefault(where.start.line, []).append(node)
        elif isinstance(node, (cst.DictElement, cst.SubscriptElement)):
            key = _key_of(node)
            if isinstance(key, cst.SimpleString):
                keys.setdefault(pos[key].start.line, []).append(node)  # type: ignore[arg-type]
    for e in edits:
        if isinstance(e, ImportEdit):
            _plan_import(e, imports.get(e.line, []), plan)
        elif isinstance(e, ArgumentsEdit):
            _plan_args(e, calls.get(e.line, []), module, plan)
        elif e.in_dict and not any(_passes(c, e.keyword) for c in calls.get(e.line, [])):
            _plan_key(e, keys.get(e.line, []), module, plan)
        else:
            _plan_call(e, calls.get(e.line, []), module, plan)
    if any(e.new_name != e.name for es in plan.imports.values() for e in es):
        _plan_uses(wrapper, plan)
    new = module.visit(_Apply(plan))
    return Edited(bom + new.code, tuple(plan.refused))


def _plan_import(e: ImportEdit, nodes: list[cst.ImportFrom], plan: _Plan) -> None:
    for node in nodes:
        if dotted(node.module) != e.module or isinstance(node.names, cst.ImportStar):
            continue
        if any(_alias_name(a) == e.name for a in node.names):
            plan.imports.setdefault(node, []).append(e)
            return
    plan.refused.append(Refusal(e, f"no `from {e.module} import {e.name}` starts at line {e.line}"))


def _plan_call(e: KeywordEdit, nodes: list[cst.Call], module: cst.Module, plan: _Plan) -> None:
    hits = [
        (n, a)
        for n in nodes
        for a in n.args
        if a.keyword is not None and a.keyword.value == e.keyword
    ]
    if len(hits) != 1:
        what = "no call" if not hits else f"{len(hits)} calls"
        plan.refused.append(
            Refusal(
                e, f"{what} starting at line {e.line} pass{'es' if not hits else ''} '{e.keyword}'"
            )
        )
        return
    call, arg = hits[0]
    if e.new is not None and any(
        a.keyword is not None and a.keyword.value == e.new for a in call.args
    ):
        plan.refused.append(Refusal(e, f"the call at line {e.line} passes '{e.new}' already"))
        return
    if e.only_if is not None:
        value = module.code_for_node(arg.value)
        if not _same_value(value, e.only_if):
            plan.refused.append(
                Refusal(
                    e,
                    f"the call passes {e.keyword}={value.strip()}, not the old default "
                    f"{e.only_if}: dropping it would change what the call asked for",
                )
            )
            return
    plan.calls.setdefault(call, []).append(e)


def _plan_args(e: ArgumentsEdit, nodes: list[cst.Call], module: cst.Module, plan: _Plan) -> None:
    """The one call of ``e.func`` there with exactly that many positionals, none starred."""
    count = e.first + len(e.names)
    hits = [
        n
        for n in nodes
        if dotted(n.func).split(".")[-1] == e.func
        and not any(a.star for a in n.args)
        and sum(a.keyword is None for a in n.args) == count
    ]
    if len(hits) != 1:
        what = "no call" if not hits else f"{len(hits)} calls"
        plan.refused.append(
            Refusal(e, f"{what} of {e.func} at line {e.line} with {count} positional arguments")
        )
        return
    passed = {a.keyword.value for a in hits[0].args if a.keyword is not None}
    for i, (name, only) in enumerate(zip(e.names, e.only_if, strict=True)):
        value = module.code_for_node(hits[0].args[e.first + i].value).strip()
        if name in passed:
            plan.refused.append(Refusal(e, f"the call at line {e.line} passes '{name}' already"))
            return
        if name is None and only is not None and not _same_value(value, only):
            why = f"argument {e.first + i + 1} is {value}, not the old default {only}"
            plan.refused.append(Refusal(e, f"{why}: dropping it would change the call"))
            return
    plan.args[hits[0]] = e


def _key_of(node: cst.DictElement | cst.SubscriptElement) -> Any:
    return node.key if isinstance(node, cst.DictElement) else getattr(node.slice, "value", None)


def _passes(call: cst.Call, keyword: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == keyword for a in call.args)


def _plan_key(e: KeywordEdit, nodes: list[Any], module: cst.Module, plan: _Plan) -> None:
    """``{"k": v}`` (renamed or dropped) or ``d["k"] = v`` (renamed) at the key's line."""
    hits = [n for n in nodes if getattr(_key_of(n), "evaluated_value", "") == e.keyword]
    if len(hits) != 1 or (e.new is None and not isinstance(hits[0], cst.DictElement)):
        what = "no key" if not hits else f"{len(hits)} keys" if len(hits) > 1 else "only d[key] ="
        plan.refused.append(Refusal(e, f"{what} '{e.keyword}' to drop at line {e.line}"))
        return
    node = hits[0]
    if isinstance(node, cst.DictElement) and e.new is None:
        value = module.code_for_node(node.value)
        if e.only_if is not None and not _same_value(value, e.only_if):
            why = f"the dict gets {e.keyword}={value.strip()}, not the old default {e.only_if}"
            plan.refused.append(Refusal(e, why))
            return
        plan.keys.add(node)
        return
    plan.renames[_key_of(node)] = e.new  # type: ignore[assignment]


def _plan_uses(wrapper: MetadataWrapper, plan: _Plan) -> None:
    """Rename the uses of a renamed import -- or, where that is not certain, import it as the
    old name (``from m import New as Old``), which leaves every use as it is."""
    scopes = wrapper.resolve(ScopeProvider)
    glob = next((s for s in scopes.values() if isinstance(s, GlobalScope)), None)
    names_in_file = {n.value for n in walk(wrapper.module) if isinstance(n, cst.Name)}
    exported = all_strings(wrapper.module)
    for node, es in plan.imports.items():
        for e in es:
            if e.new_name == e.name:
                continue
            alias = next(a for a in node.names if _alias_name(a) == e.name)  # type: ignore[union-attr]
            if alias.asname is not None:
                continue  # `import Old as X`: only the imported name changes
            refs = _references(glob, e.name, node)
            if refs is None or e.new_name in names_in_file or e.name in exported:
                plan.aliased.add((node, e.name))
                continue
            for r in refs:
                plan.renames[r] = e.new_name


def _references(
    glob: GlobalScope | None, name: str, node: cst.ImportFrom
) -> list[cst.CSTNode] | None:
    """The nodes that use this import's binding, if it is the name's only binding and every
    use is a plain name (or a string annotation holding just that name)."""
    if glob is None:
        return None
    assignments = list(glob.assignments[name])
    if len(assignments) != 1 or getattr(assignments[0], "node", None) is not node:
        return None
    out: list[cst.CSTNode] = []
    for ref in assignments[0].references:
        n = ref.node
        plain = isinstance(n, cst.Name) and n.value == name
        annotation = isinstance(n, cst.SimpleString) and n.evaluated_value == name
        if not (plain or annotation):
            return None
        out.append(n)
    return out


def _groups(node: cst.ImportFrom, es: list[ImportEdit]) -> list[tuple[str, list[cst.ImportAlias]]]:
    """The statement's aliases by the module they come from after the edits, in order; the
    first group stays in the original statement (its own module first, when any remain)."""
    by_name = {e.name: e for e in es}
    groups: dict[str, list[cst.ImportAlias]] = {}
    own = dotted(node.module)
    for a in node.names:  # type: ignore[union-attr]
        e = by_name.get(_alias_name(a))
        groups.setdefault(e.new_module if e else own, []).append(a)
    order = sorted(groups, key=lambda m: m != own)
    return [(m, groups[m]) for m in order]


def _renamed(alias: cst.ImportAlias, e: ImportEdit | None, aliased: bool) -> cst.ImportAlias:
    if e is None or e.new_name == e.name:
        return alias
    new = alias.with_changes(name=cst.parse_expression(e.new_name))
    if aliased:
        new = new.with_changes(asname=cst.AsName(name=cst.Name(e.name)))
    return new


def _statement(group: tuple[str, list[cst.ImportAlias]]) -> cst.SimpleStatementLine:
    """A new ``from MODULE import a, b as c`` line for names that go to another module."""
    name, aliases = group
    empty = cst.Module(body=[])
    texts = [empty.code_for_node(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in aliases]
    stmt = cst.parse_statement(f"from {name} import {', '.join(texts)}\n")
    assert isinstance(stmt, cst.SimpleStatementLine)
    return stmt


class _Apply(cst.CSTTransformer):
    def __init__(self, plan: _Plan) -> None:
        super().__init__()
        self.plan = plan
        self.pending: list[cst.SimpleStatementLine] = []

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        es = self.plan.imports.get(original)
        if not es:
            return updated
        by_name = {e.name: e for e in es}
        first_module, keep = _groups(original, es)[0]
        kept = {id(a) for a in keep}
        aliases = list(original.names)  # type: ignore[arg-type]
        names = [
            _renamed(
                a, by_name.get(_alias_name(a)), (original, _alias_name(a)) in self.plan.aliased
            )
            for a in without(aliases, {i for i, a in enumerate(aliases) if id(a) not in kept})
        ]
        extra = [_rename_group(g, by_name, original, self.plan) for g in _groups(original, es)[1:]]
        self.pending.extend(_statement(g) for g in extra)
        out = updated.with_changes(names=names)
        if first_module != dotted(original.module):
            out = out.with_changes(module=cst.parse_expression(first_module))
        return out

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine]:
        if not self.pending:
            return updated
        extra, self.pending = self.pending, []
        return cst.FlattenSentinel([updated, *extra])

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.plan.renames.get(original)
        return updated.with_changes(value=new) if new else updated

    def leave_SimpleString(
        self, original: cst.SimpleString, updated: cst.SimpleString
    ) -> cst.SimpleString:
        new = self.plan.renames.get(original)
        if not new:
            return updated
        q = updated.quote
        return updated.with_changes(value=f"{updated.prefix}{q}{new}{q}")

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict) -> cst.Dict:
        drop = {i for i, el in enumerate(original.elements) if el in self.plan.keys}
        return (
            updated.with_changes(elements=without(list(updated.elements), drop))
            if drop
            else updated
        )

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        named = self.plan.args.get(original)
        if named is not None:  # from argument `first` on: by name, or dropped
            return _by_name(updated, named)
        es = self.plan.calls.get(original)
        if not es:
            return updated
        args = list(updated.args)
        drop: set[int] = set()
        for e in es:
            i = next(
                i
                for i, a in enumerate(args)
                if a.keyword is not None and a.keyword.value == e.keyword
            )
            if e.new is None:
                drop.add(i)
            else:
                args[i] = args[i].with_changes(keyword=cst.Name(e.new))
        return updated.with_changes(args=without(args, drop))


def _by_name(call: cst.Call, e: ArgumentsEdit) -> cst.Call:
    eq = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    names = dict(enumerate(e.names, e.first))
    args = [
        a.with_changes(keyword=cst.Name(n), equal=eq) if (n := names.get(i)) else a
        for i, a in enumerate(call.args)
    ]
    return call.with_changes(args=without(args, {i for i, n in names.items() if n is None}))


def _rename_group(
    group: tuple[str, list[cst.ImportAlias]],
    by_name: dict[str, ImportEdit],
    node: cst.ImportFrom,
    plan: _Plan,
) -> tuple[str, list[cst.ImportAlias]]:
    name, aliases = group
    return name, [
        _renamed(a, by_name.get(_alias_name(a)), (node, _alias_name(a)) in plan.aliased)
        for a in aliases
    ]
