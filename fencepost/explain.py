"""``fencepost explain CLAUSE|CONTRACT``: the rules, in the terminal, from the catalogue.

For a clause: its rule, what a store needs for it to apply, the situations a pass must reach,
the checks that put it to the test, the options that change it (both readings, where each comes
from in the seed) and the mutants that prove the kit catches it. For a contract: its protocol,
capabilities, refusals and options, then every clause that way. Everything is read from the
contract's declaration; nothing here is typed in twice.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
import textwrap
from collections.abc import Iterator

import attrs

from fencepost.model.base import options_with_defaults
from fencepost.scenarios.kinds import kind, kind_of
from fencepost.scenarios.tour_graph import explore
from fencepost.spec.clauses import Choice, Clause, Situation

from .contract import Contract
from .errors import ConfigurationError
from .registry import contract_named, contract_names

WIDTH = 96


def explain(target: str) -> str:
    """The text ``fencepost explain TARGET`` prints: TARGET is a contract's name or a clause id
    (ConfigurationError naming the nearest ones when it is neither)."""
    if target in contract_names():
        return explain_contract(contract_named(target))
    known: dict[str, Contract] = {}
    for name in contract_names():
        contract = contract_named(name)
        for clause in contract.clauses:
            known[clause.id] = contract
    wanted = target.upper()
    if wanted in known:
        contract = known[wanted]
        return explain_clause(contract, contract.clauses[wanted])
    near = difflib.get_close_matches(wanted, [*known, *contract_names()], n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(near)}?" if near else (
        f"; give a contract ({', '.join(contract_names())}) or a clause id "
        "(fencepost list CONTRACT lists them)")
    raise ConfigurationError(f"explain: {target!r} is neither a contract nor a clause id{hint}")


def explain_clause(contract: Contract, clause: Clause) -> str:
    """One clause, as the module's docstring says."""
    return "\n".join(_clause_lines(contract, clause))


def explain_contract(contract: Contract) -> str:
    """A contract and every clause of it."""
    lines = [f"{contract.name}: {contract.summary}",
             f"catalogue {contract.catalogue_version}, {len(contract.clauses)} clauses, "
             f"{len(contract.mutants)} mutants", ""]
    methods = contract.suite.protocol_methods
    lines += _wrap(f"protocol ({contract.spec.__name__}): {', '.join(methods)}")
    lines += ["", "capabilities a store may declare (store.capabilities):"]
    for name, meaning in contract.capabilities.items():
        lines += _wrap(f"{name}: {meaning}", "  ", "      ")
    lines += ["", "refusals (raise the error class; over the wire, error.code):"]
    for code, cls in sorted(refusals(contract).items()):
        said = _first_line(cls.__doc__)
        lines += _wrap(f"{code} ({cls.__name__}){': ' + said if said else ''}", "  ", "      ")
    if contract.choices or contract.settings:
        lines += ["", "options (--option NAME=VALUE):"]
        for choice in contract.choices:
            lines += _choice_lines(choice)
        for setting in contract.settings:
            lines += _wrap(f"{setting.name}={setting.default} (a setting): {setting.meaning}",
                           "  ", "      ")
    for clause in contract.clauses:
        lines += ["", "-" * WIDTH, *_clause_lines(contract, clause)]
    return "\n".join(lines)


def refusals(contract: Contract) -> dict[str, type]:
    """The contract's refusals by error code (every ``ContractError`` its spec declares, with
    ``backend_unavailable``)."""
    from fencepost.adapters.wire.store import error_classes

    return dict(error_classes(contract.spec))


def _clause_lines(contract: Contract, clause: Clause) -> Iterator[str]:
    yield f"{clause.id}  {clause.title}  ({contract.name})"
    yield ""
    yield from _wrap(clause.text, "  ", "  ")
    yield ""
    needs = ", ".join(sorted(clause.requires))
    yield (f"applies to stores that declare: {needs} (else unsupported)" if needs
           else "applies to every store")
    yield "situations (a pass that reached none of them is weak; --strict makes it unknown):"
    if not clause.situations:
        yield "  none: any check that exercises the clause puts it to the test"
    for s in clause.situations:
        yield f"  - {s.name}{_conditions(s)}"
    yield "checks (what puts it to the test):"
    for check in clause.checks:
        found = kind(kind_of(check))
        what = found.summary if found is not None and found.summary else "a check"
        yield from _wrap(f"- {check}: {what}", "  ", "      ")
    tour = kind("tour")
    edges = tour_edges(contract).get(clause.id, 0)
    if tour is not None and edges:
        yield from _wrap(f"- tour (with --tour {'/'.join(contract.suite.tours)}; {edges:,} "
                         f"edges of the smallest scope decide it): {tour.summary}", "  ",
                         "      ")
    choices = _choices_of(contract, clause)
    yield "options that change it:" if choices else "options that change it: none"
    for choice in choices:
        yield from _choice_lines(choice)
    proving = [m for m in contract.mutants if m.expected_clause == clause.id]
    yield (f"mutants that prove the kit catches it ({len(proving)}):" if proving
           else "mutants that prove the kit catches it: none")
    for m in proving:
        runs = "/".join(m.bases)
        under = "".join(f" {k}={v}" for k, v in sorted(m.options.items()))
        yield from _wrap(f"- {m.name} [{runs}{under}]: {m.bug}", "  ", "      ")
    deep = [m for m in contract.deep if m.expected_clause == clause.id]
    if deep:
        yield f"deep mutants, caught by the tour at every run ({len(deep)}):"
    for m in deep:
        yield from _wrap(f"- {m.name}: {m.bug}", "  ", "      ")


def tour_edges(contract: Contract) -> dict[str, int]:
    """Clause id -> the edges of the contract's smallest tour scope (its last) whose decision
    names it, for a store with every capability, under the default options (none when the
    contract has no tour)."""
    return _tour_edges(contract.name)


@functools.cache
def _tour_edges(name: str) -> dict[str, int]:
    contract = contract_named(name)
    if not contract.suite.tours:
        return {}
    scope = list(contract.suite.tours.values())[-1]
    model = contract.suite.model
    options = options_with_defaults(model.choices, {}, model.settings)
    # The graph alone: its edges are what is counted (the plan that runs them, as a tour makes
    # it, was most of the command's time).
    graph = explore(scope, model, options, frozenset(contract.spec.CAPABILITIES))
    return graph.clause_edges()


def _choices_of(contract: Contract, clause: Clause) -> list[Choice]:
    """The options the clause's rule or one of its situations depends on."""
    names = {clause.choice} | {name for s in clause.situations for name, _ in s.when}
    return [c for c in contract.choices if c.name in names]


def _choice_lines(choice: Choice) -> list[str]:
    lines = [f"  {choice.name} (default {choice.default}: what the seed implementation does)"]
    lines += _wrap(f"doc: {choice.doc_says}", "      ", "        ")
    lines += _wrap(f"implementation: {choice.implementation_does}", "      ", "        ")
    for value, meaning in choice.values:
        lines += _wrap(f"{value}: {meaning}", "      ", "        ")
    if choice.source:
        lines += _wrap(f"seed source: {choice.source}", "      ", "        ")
    return lines


def _conditions(s: Situation) -> str:
    parts = [f"only with {', '.join(sorted(s.requires))}"] if s.requires else []
    parts += [f"only under {name}={value}" for name, value in s.when]
    return f"  ({'; '.join(parts)})" if parts else ""


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n\n")[0].replace("\n", " ")


def _wrap(text: str, first: str = "", rest: str = "") -> list[str]:
    return textwrap.wrap(" ".join(text.split()), WIDTH, initial_indent=first,
                         subsequent_indent=rest, break_on_hyphens=False,
                         break_long_words=False) or [first.rstrip()]


def contract_markdown(contract: Contract) -> str:
    """The contract's reference page of the documentation site: what ``explain`` says, as
    Markdown, one section per clause (its id the anchor)."""
    out = [f"# {contract.name}", "", _md(contract.summary), "",
           f"Catalogue {contract.catalogue_version}: {len(contract.clauses)} clauses, "
           f"{len(contract.mutants)} mutants. The same in the terminal: "
           f"`fencepost explain {contract.name}`; one clause: `fencepost explain ID`.", "",
           *_overview(contract), "## Operations", "",
           f"The store's methods (`{contract.spec.__name__}`), called positionally with the "
           "arguments in this order:", "", "| operation | answers |", "|---|---|",
           *(f"| `{name}{args}` | `{answer}` |"
             for name, args, answer in operations(contract)), "",
           "## Capabilities", "", "| capability | what the store promises |", "|---|---|"]
    out += [f"| `{name}` | {_md(meaning)} |" for name, meaning in contract.capabilities.items()]
    out += ["", "## Refusals", "", "Raise the error class (over the wire: `error.code`).", "",
            "| code | class | when |", "|---|---|---|"]
    out += [f"| `{code}` | `{cls.__name__}` | {_md(_first_line(cls.__doc__))} |"
            for code, cls in sorted(refusals(contract).items())]
    if contract.choices or contract.settings:
        out += ["", "## Options", "", "`--option NAME=VALUE`; the default is what the seed's "
                "implementation does.", ""]
        for choice in contract.choices:
            out += [f"### `{choice.name}`", "", f"- default: `{choice.default}`",
                    f"- documentation says: {_md(choice.doc_says)}",
                    f"- implementation does: {_md(choice.implementation_does)}"]
            out += [f"- `{value}`: {_md(meaning)}" for value, meaning in choice.values]
            if choice.source:
                out.append(f"- seed source: {_md(choice.source)}")
            out.append("")
        for setting in contract.settings:
            out += [f"### `{setting.name}` (a setting)", "",
                    f"Default `{setting.default}`: {_md(setting.meaning)}", ""]
    out += _shapes(contract)
    out += ["", "## Clauses", ""]
    for clause in contract.clauses:
        out += _clause_markdown(contract, clause)
    return "\n".join(out) + "\n"


def operations(contract: Contract) -> list[tuple[str, str, str]]:
    """``(name, "(arg: type, ...)", answer type)`` of each protocol method, in the protocol's
    order, read from the spec's ``Protocol`` classes."""
    protocols = [v for v in vars(contract.spec).values()
                 if isinstance(v, type) and getattr(v, "_is_protocol", False)]
    found = []
    for name in contract.suite.protocol_methods:
        method = next(p.__dict__[name] for p in protocols if name in p.__dict__)
        signature = inspect.signature(method)
        args = [f"{a.name}: {a.annotation}" for a in signature.parameters.values()
                if a.name != "self"]
        found.append((name, f"({', '.join(args)})", str(signature.return_annotation)))
    return found


def _overview(contract: Contract) -> list[str]:
    """The spec package's docstring, its prose paragraphs as Markdown (its code example left
    out: the shapes and clauses below are the reference)."""
    text = inspect.getdoc(contract.spec) or ""
    paragraphs = [p for p in text.split("\n\n")[1:] if p.strip()]
    kept = []
    for paragraph in paragraphs:
        if paragraph.startswith(("Example", " ")):
            break
        kept += [_rst(paragraph), ""]
    return ["## Overview", "", *kept] if kept else []


def _shapes(contract: Contract) -> list[str]:
    """Every value class the contract's answers carry: its fields in order, with its docstring
    (where the shapes' examples are)."""
    from fencepost.spec.values import value_classes_in

    classes = value_classes_in(contract.spec)
    if not classes:
        return []
    out = ["", "## Compared shapes", "",
           "Every answer is compared exactly, field by field (over the wire: "
           "`{\"__type__\": NAME, field: value, ...}`).", ""]
    for name, cls in classes:
        fields = ", ".join(f"{f.name}: {f.type}" for f in attrs.fields(cls))
        out += [f"### `{name}`", "", f"`{name}({fields})`", ""]
        doc = inspect.getdoc(cls)
        if doc:
            out += ["```text", doc, "```", ""]
    return out


def _rst(text: str) -> str:
    """A docstring paragraph's reStructuredText roles and literals as Markdown code."""
    text = re.sub(r":[a-z]+:`~?\.?([^`]+)`", r"`\1`", text)
    return " ".join(text.replace("``", "`").split())


def _clause_markdown(contract: Contract, clause: Clause) -> list[str]:
    needs = ", ".join(f"`{c}`" for c in sorted(clause.requires))
    out = [f"### {clause.id}: {_md(clause.title)} {{#{clause.id}}}", "", _md(clause.text), "",
           f"- applies to: {'stores that declare ' + needs if needs else 'every store'}"]
    if clause.situations:
        out.append("- situations: " + "; ".join(f"{_md(s.name)}{_md(_conditions(s))}"
                                                for s in clause.situations))
    out.append("- checks: " + ", ".join(f"`{c}`" for c in clause.checks))
    choices = _choices_of(contract, clause)
    if choices:
        out.append("- options: " + ", ".join(f"`{c.name}`" for c in choices))
    proving = [m for m in contract.mutants if m.expected_clause == clause.id]
    out.append("- mutants: " + ("; ".join(f"`{m.name}` ({_md(m.bug)})" for m in proving)
                                if proving else "none"))
    return [*out, ""]


def _md(text: str) -> str:
    """``text`` on one line, safe in a Markdown paragraph or table cell."""
    flat = " ".join(text.split())
    for char in ("\\", "|", "<", ">", "*", "_", "[", "]"):
        flat = flat.replace(char, "\\" + char)
    return flat
