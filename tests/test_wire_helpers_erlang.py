"""The Erlang wire helper (examples/erlang/fencepost_wire.erl): it compiles without a warning,
and an adapter written on it is a few callbacks: a tiny snodo-tasks escript that answers every
call with one fixed error passes ``wire-check``, and has its options checked against the
choices and settings it declares. Needs Erlang (escript, erlc): skipped without it, a failure
under CI=true."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import require_program

from fencepost.registry import contract_named

ROOT = Path(__file__).resolve().parent.parent
HELPER = ROOT / "examples" / "erlang" / "fencepost_wire.erl"

TINY = """\
#!/usr/bin/env escript
%%! -noinput
%% snodo-tasks, refused: release answers stale_lease, reap a list of wire values built by the
%% helper. Only fencepost_wire's callbacks.
-mode(compile).
-export([contract/0, name/0, version/0, capabilities/0, choices/0, operations/0,
         value_classes/0, open/3, call/4]).

main(_) ->
    Source = filename:join(filename:dirname(escript:script_name()), "fencepost_wire.erl"),
    {ok, Module, Binary} = compile:file(Source, [binary, return_errors]),
    {module, Module} = code:load_binary(Module, Source, Binary),
    fencepost_wire:serve(?MODULE, #{log_prefix => "tiny"}).

contract() -> <<"snodo-tasks">>.
name() -> <<"tiny-erlang">>.
version() -> <<"0.0.1">>.
capabilities() -> [<<"concurrency">>].
choices() -> CHOICES.
operations() -> [{release, [lease]}, {reap, []}].
value_classes() -> [].
open(_Namespace, _Options, _Data) -> none.
call(release, #{lease := _}, _Context, none) -> {error, <<"stale_lease">>, "no lease here"};
call(reap, #{}, #{now := Now}, none) ->
    {ok, [fencepost_wire:exact_float(Now + 0.001), fencepost_wire:exact_float(-0.0),
          fencepost_wire:opaque(<<"l1">>)], none}.
"""


def erlang_choices(contract: str) -> str:
    """The contract's choices (default first) and settings as ``choices/0`` spells them."""
    def text(value: str) -> str:
        return f'<<"{value}">>'

    entry = contract_named(contract)
    choices = [f"{{{text(c.name)}, [{', '.join(text(v) for v in values)}]}}"
               for c in entry.choices
               for values in [[c.default, *(v for v, _ in c.values if v != c.default)]]]
    settings = [f"{{{text(s.name)}, {{setting, {text(s.default)}}}}}" for s in entry.settings]
    return "[" + ",\n     ".join(choices + settings) + "]"


@pytest.fixture
def tiny(tmp_path: Path) -> str:
    """The command of the tiny adapter, written in tmp_path beside a copy of the helper."""
    require_program("escript", "Erlang")
    shutil.copy(HELPER, tmp_path / HELPER.name)
    script = tmp_path / "tiny.escript"
    script.write_text(TINY.replace("CHOICES", erlang_choices("snodo-tasks")), encoding="utf-8")
    return f"escript {script}"


def test_the_helper_compiles_without_a_warning(tmp_path: Path) -> None:
    erlc = require_program("erlc", "Erlang")
    done = subprocess.run([erlc, "+warnings_as_errors", "-o", str(tmp_path), str(HELPER)],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fencepost_wire.beam"]


def test_an_adapter_of_callbacks_only_passes_wire_check(
        tiny: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fencepost.cli import main

    assert main(["wire-check", "snodo-tasks", tiny]) == 0
    out = capsys.readouterr().out
    assert f"17 of 17 probes answered as fencepost-wire/1 requires ({tiny})" in out
    # the helper is compiled in memory: nothing is written beside the script
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fencepost_wire.erl", "tiny.escript"]


def test_a_call_gets_the_adapters_error_and_options_are_checked_against_its_choices(
        tiny: str) -> None:
    hello = {"protocol": "fencepost-wire/1", "contract": "snodo-tasks"}
    call = {"type": "call", "namespace": "n", "op": "release",
            "args": {"lease": {"__opaque__": "l1"}}, "now": 5, "dead": []}
    requests = [
        {"id": 1, "type": "hello", **hello, "options": {"max_tasks": "03"}},
        {"id": 2, "type": "hello", **hello, "options": {"reap_order": "random"}},
        {"id": 3, "type": "hello", **hello, "options": {"no_such_option": "x"}},
        {"id": 4, "type": "hello", **hello, "options": {"max_tasks": "3"}},
        {"id": 5, "type": "open", "namespace": "n", "options": {"max_tasks": "infinity"}},
        {"id": 6, **call},
        {"id": 7, **call, "args": {"lease": {"__type__": "Lease"}}},
        {"id": 8, **call, "op": "reap", "args": {}, "now": 1_000_000},
        {"id": 9, "type": "shutdown"},
    ]
    done = subprocess.run(tiny.split(), input="".join(json.dumps(r) + "\n" for r in requests),
                          capture_output=True, text=True, timeout=60)
    names = ", ".join([c.name for c in contract_named("snodo-tasks").choices]
                      + [s.name for s in contract_named("snodo-tasks").settings])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # floats are written exactly: the shortest text of the float, -0.0 kept
    assert lines[7] == '{"id":8,"ok":[1000000.001,-0.0,{"__opaque__":"l1"}]}'
    assert [json.loads(line) for line in lines[:7] + lines[8:]] == [
        {"id": 1, "fault": "option 'max_tasks': cannot follow 03 (this store follows a positive "
                           "integer or infinity)"},
        {"id": 2, "fault": "option 'reap_order': cannot follow random (this store follows "
                           "task_id, expiry)"},
        {"id": 3, "fault": f"unknown option 'no_such_option' (snodo-tasks has {names})"},
        {"id": 4, "ok": {"name": "tiny-erlang", "version": "0.0.1",
                         "capabilities": ["concurrency"]}},
        {"id": 5, "ok": None},
        {"id": 6, "error": {"code": "stale_lease", "detail": "no lease here", "payload": None}},
        {"id": 7, "fault": "argument 'lease' cannot be decoded"},
        {"id": 9, "ok": None},
    ]


def test_an_open_beside_an_open_namespace_is_another_connection_until_its_close(
        tiny: str) -> None:
    hello = {"type": "hello", "protocol": "fencepost-wire/1", "contract": "snodo-tasks"}
    call = {"type": "call", "namespace": "n", "op": "release",
            "args": {"lease": {"__opaque__": "l1"}}, "now": 5, "dead": []}
    opened, closed = ({"type": kind, "namespace": "n"} for kind in ("open", "close"))
    requests = [hello, opened, opened, call, closed, call, closed, call,
                {"type": "shutdown"}]
    done = subprocess.run(tiny.split(), input="".join(
        json.dumps({"id": k, **r}) + "\n" for k, r in enumerate(requests, 1)),
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("error", {}).get("code") or a.get("fault") or a.get("ok")
            for a in answers[1:]] == [
        None, None, "stale_lease", None, "stale_lease", None, "namespace 'n' is closed", None]


def test_the_example_escript_starts_without_a_compiler_warning(tmp_path: Path) -> None:
    require_program("escript", "Erlang")
    done = subprocess.run([str(ROOT / "examples" / "erlang" / "adk_ledger.escript")],
                          input='{"id": 1, "type": "shutdown"}\n', capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, '{"id":1,"ok":null}\n', "adk_ledger: shutdown: exiting\n")
    assert list(tmp_path.iterdir()) == []
