"""The Node.js helper for wire adapters (examples/node/fencepost-wire/): it publishes as an npm
package of exactly its own files, the adapter its README shows passes wire-check, an operation's
promise is answered when it settles, and its codec and Python rules are exact. Needs Node.js
(and npm for the package): skipped without them, a failure under CI=true."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import require_program

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "examples" / "node" / "fencepost-wire"
HELLO = {"id": 1, "type": "hello", "protocol": "fencepost-wire/1", "contract": "adk-ledger",
         "options": {}}


def node(script: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``script`` run by Node.js, with ``stdin`` as its input."""
    return subprocess.run([require_program("node", "Node.js"), "-e", script], input=stdin,
                          capture_output=True, text=True, timeout=30, check=False)


def requiring_the_package(source: str) -> str:
    return source.replace("require('fencepost-wire')", f"require({json.dumps(str(PACKAGE))})")


def test_the_helper_package_publishes_exactly_its_files() -> None:
    npm = require_program("npm", "npm")
    packed = subprocess.run([npm, "pack", "--dry-run", "--json", "--offline"], cwd=PACKAGE,
                            capture_output=True, text=True, timeout=120, check=True)
    [tarball] = json.loads(packed.stdout)
    assert (tarball["name"], tarball["version"]) == ("fencepost-wire", "0.1.0")
    assert sorted(f["path"] for f in tarball["files"]) == [
        "README.md", "codec.js", "index.js", "package.json", "serve.js", "switches.js",
        "values.js"]
    manifest = json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert manifest["license"] == project["license"]["text"] == "Apache-2.0"
    assert (manifest["main"], manifest["engines"]) == ("index.js", {"node": ">=20"})
    assert "dependencies" not in manifest


def test_the_readme_adapter_passes_wire_check(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from fencepost.cli import main

    readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
    [sketch] = re.findall(r"^## An adapter in \d+ lines\n.*?```js\n(.*?)```", readme,
                          flags=re.MULTILINE | re.DOTALL)
    assert len(sketch.splitlines()) <= 25
    adapter = tmp_path / "sketch.js"
    adapter.write_text(requiring_the_package(sketch), encoding="utf-8")
    command = f"{require_program('node', 'Node.js')} {adapter}"
    assert main(["wire-check", "adk-ledger", command]) == 0
    out = capsys.readouterr().out
    assert f"17 of 17 probes answered as fencepost-wire/1 requires ({command})" in out


SLOW = requiring_the_package("""
const { serve, refuse } = require('fencepost-wire');
const later = (ms, f) => new Promise((done) => setTimeout(done, ms)).then(f);
serve({
  name: 'slow', version: '1', contract: 'adk-ledger', capabilities: ['concurrency'],
  operations: { get: ['invocation_id'], delete: ['invocation_id'] },
  open: () => ({
    get: ({ invocation_id: id }, now, dead) =>
      later(Number(now), () => (id === 'x' ? refuse('not_found', id) : [id, now, dead])),
    delete: () => later(1, () => { throw new Error('boom'); }),
  }),
});
""")


def test_an_operations_promise_is_answered_when_it_settles() -> None:
    def call(ident: int, op: str, invocation: str, now: int) -> dict[str, object]:
        return {"id": ident, "type": "call", "namespace": "n", "op": op,
                "args": {"invocation_id": invocation}, "now": now, "dead": ["c2"]}

    requests = [HELLO, {"id": 2, "type": "open", "namespace": "n"},
                call(3, "get", "a", 200), call(4, "get", "x", 50), call(3, "get", "a", 1),
                call(5, "delete", "a", 1), {"id": 6, "type": "shutdown"}]
    run = node(SLOW, "".join(json.dumps(r) + "\n" for r in requests))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        '{"id":1,"ok":{"name":"slow","version":"1","capabilities":["concurrency"]}}',
        '{"id":2,"ok":null}',
        '{"id":null,"fault":"request id 3 is already in flight"}',
        '{"id":5,"fault":"internal error: boom"}',
        '{"id":4,"error":{"code":"not_found","detail":"x","payload":null}}',
        '{"id":3,"ok":["a",200,["c2"]]}',
        '{"id":6,"ok":null}',  # shutdown waits for every request in flight
    ]


CODEC = requiring_the_package("""
const w = require('fencepost-wire');
const text = require('fs').readFileSync(0, 'utf8').trim();
const v = (json) => w.decode(w.parseJson(json));
const out = {
  again: w.encode(v(text)),
  eq: [w.pyEq(v('1'), v('1.0')), w.pyEq(v('1'), true), w.pyEq(v('1'), v('1.0'), true),
    w.pyEq(v('0.0'), v('-0.0'), true), w.pyEq(v('{"__float__": "nan"}'), v('{"__float__": "nan"}')),
    w.pyEq(v('{"__dict__": [[1, "a"]]}'), v('{"__dict__": [[1.0, "a"]]}'))],
  order: [w.cmpNum(v('9007199254740993'), v('9007199254740992.0')), w.cmpNum(v('2'), v('2.5'))],
  sorted: ['\\uFFFF', '\\u{10000}', 'a'].sort(w.cmpStr),
  sums: [w.encode(w.add(v('1'), v('2'))), w.encode(w.add(v('1'), v('0.5'))),
    w.encode(w.sub(v('3'), true))],
};
process.stdout.write(JSON.stringify(out));
""")


def test_the_codec_reads_and_writes_exactly_and_compares_as_python() -> None:
    text = ('{"i":1,"f":1.0,"z":-0.0,"big":123456789012345678901234567890,"e":1e+300,'
            '"n":{"__float__":"nan"},"t":{"__tuple__":[1,"a"]},"b":{"__bytes__":"00ff"},'
            '"d":{"__dict__":[[1,"one"],[{"__tuple__":[1.5]},2]]},"k":{"__dict__":[["__type__",1]]},'
            '"o":{"__opaque__":"x"},"g":{"__forged_value__":"y"},"s":"\\u00e9\\n"}')
    run = node(CODEC, text)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    # one change only: a string is written back as UTF-8 rather than an escape
    assert result["again"] == text.replace("\\u00e9", "\u00e9")
    assert result["eq"] == [True, True, False, False, False, True]
    assert result["order"] == [1, -1]
    assert result["sorted"] == ["a", "\uffff", "\U00010000"]
    assert result["sums"] == ["3", "1.5", "2"]


TALLY = requiring_the_package("""
const { serve } = require('fencepost-wire');
serve({
  name: 'tally', version: '1', contract: 'adk-ledger', capabilities: ['durable'],
  operations: { get: ['invocation_id'] },
  choices: { owned_view: ['token_stored', 'live_lease'] },
  settings: { max_calls: 'infinity' },
  create: () => ({ calls: 0n }),
  open: ({ data, options, openings }) => ({
    get() {
      data.calls += 1n;
      return [data.calls, BigInt(openings), options.owned_view, options.max_calls];
    },
  }),
});
""")


def replies(script: str, requests: list[dict[str, object]]) -> list[str]:
    run = node(script, "".join(json.dumps(r) + "\n" for r in requests))
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def get(ident: int) -> dict[str, object]:
    """A call of get on namespace "n"."""
    return {"id": ident, "type": "call", "namespace": "n", "op": "get",
            "args": {"invocation_id": "i"}, "now": 1, "dead": []}


def kind(ident: int, type_: str) -> dict[str, object]:
    """An open, close or discard of namespace "n"."""
    return {"id": ident, "type": type_, "namespace": "n"}


def test_a_namespace_keeps_its_data_across_close_and_loses_it_at_discard() -> None:
    got = replies(TALLY, [HELLO, kind(2, "open"), get(3), get(4), kind(5, "close"), get(6),
                          kind(7, "open"), get(8), kind(9, "discard"), kind(10, "open"), get(11)])
    assert got[1:] == [
        '{"id":2,"ok":null}', '{"id":3,"ok":[1,1,"token_stored",null]}',
        '{"id":4,"ok":[2,1,"token_stored",null]}', '{"id":5,"ok":null}',
        '{"id":6,"fault":"unknown namespace \\"n\\" (not open)"}', '{"id":7,"ok":null}',
        '{"id":8,"ok":[3,2,"token_stored",null]}', '{"id":9,"ok":null}', '{"id":10,"ok":null}',
        '{"id":11,"ok":[1,1,"token_stored",null]}']


def test_an_open_beside_an_open_store_is_a_connection_of_its_own_until_its_close() -> None:
    # each store answers the openings made before it: the second is the one opened beside
    got = replies(TALLY, [HELLO, kind(2, "open"), get(3), kind(4, "open"), get(5),
                          kind(6, "close"), get(7), kind(8, "close"), get(9)])
    answers = [json.loads(line) for line in got[1:]]
    assert [a["ok"][:2] if isinstance(a.get("ok"), list) else a.get("ok", "fault")
            for a in answers] == [None, [1, 1], None, [2, 2], None, [3, 1], None, "fault"]


def test_options_are_checked_against_the_readings_the_adapter_declares() -> None:
    def hello(ident: int, **options: str) -> dict[str, object]:
        return {**HELLO, "id": ident, "options": options}

    def open_(ident: int, namespace: str, **options: str) -> dict[str, object]:
        return {"id": ident, "type": "open", "namespace": namespace,
                **({"options": options} if options else {})}

    def get(ident: int, namespace: str) -> dict[str, object]:
        return {"id": ident, "type": "call", "namespace": namespace, "op": "get",
                "args": {"invocation_id": "i"}, "now": 1}

    got = replies(TALLY, [
        hello(1, owned_view="exact"), hello(2, renew_atomic="atomic"), hello(3, max_calls="x"),
        {**HELLO, "id": 4, "contract": "snodo-tasks"},
        hello(5, owned_view="live_lease", max_calls="3"),
        open_(6, "run"), get(7, "run"), open_(8, "own", owned_view="token_stored"), get(9, "own"),
        open_(10, "bad", owned_view="exact"), get(11, "bad")])
    assert got == [
        '{"id":1,"fault":"option owned_view=exact: cannot follow it '
        '(this store follows token_stored, live_lease)"}',
        '{"id":2,"fault":"option renew_atomic: cannot follow it (not an option of adk-ledger)"}',
        '{"id":3,"fault":"option max_calls=x: cannot follow it (use infinity or an integer)"}',
        '{"id":4,"fault":"does not implement contract \\"snodo-tasks\\": only adk-ledger"}',
        '{"id":5,"ok":{"name":"tally","version":"1","capabilities":["durable"]}}',
        '{"id":6,"ok":null}', '{"id":7,"ok":[1,1,"live_lease",3]}',
        # open's own options replace the run's, all of them: max_calls is back to infinity
        '{"id":8,"ok":null}', '{"id":9,"ok":[1,1,"token_stored",null]}',
        '{"id":10,"fault":"option owned_view=exact: cannot follow it '
        '(this store follows token_stored, live_lease)"}',
        '{"id":11,"fault":"unknown namespace \\"bad\\" (not open)"}']
