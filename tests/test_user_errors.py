"""Every user mistake is one line on stderr (``fencepost: error: ...``) and exit 2, found before
the run starts (nothing is printed on stdout, where a run prints its table), and nothing is left
behind in the temporary directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import fencepost
from fencepost.adapter_spec import TempSqliteFactory
from fencepost.errors import ConfigurationError
from fencepost.model.history import History
from fencepost.registry import contract_named, contract_names
from fencepost.scenarios.synthetic import simulate
from fencepost.spec import adk_ledger as spec

ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0  # root may write anywhere
ADK_OPTIONS = ", ".join(sorted(c.name for c in (*spec.CHOICES, *getattr(spec, "SETTINGS", ()))))
ADK_SQLITE_ONLY = [m.name for m in contract_named("adk-ledger").mutants if "memory" not in m.bases]


def fencepost_cli(*args: str, cwd: Path, read_only: Path | None = None
                  ) -> subprocess.CompletedProcess[str]:
    """The command in a subprocess whose temporary directory is ``cwd/tmp`` (private, so the
    test can see what a run leaves there even with other tests running alongside); with
    ``read_only``, that directory (see :func:`read_only`) cannot be written by the command."""
    private = cwd / "tmp"
    private.mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(private))
    command = [sys.executable, "-m", "fencepost.cli", *args]
    if read_only is not None and ROOT_USER:
        command = _in_read_only_mount(read_only, command)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def read_only(parent: Path) -> Path:
    """A directory the command may not write into: mode 0500, and for root (who may write
    anywhere that mode allows) a read-only bind mount of it in a mount namespace of the
    command's own (``unshare -m``: nothing outside sees the mount)."""
    locked = parent / "locked"
    locked.mkdir(mode=0o500)
    if ROOT_USER:
        probe = subprocess.run(_in_read_only_mount(locked, ["true"]), capture_output=True,
                               text=True)
        if probe.returncode != 0:
            reason = f"root cannot make a read-only mount here: {probe.stderr.strip()}"
            if os.environ.get("CI") == "true":
                pytest.fail(reason)
            pytest.skip(reason)
    return locked


def _in_read_only_mount(directory: Path, command: list[str]) -> list[str]:
    script = ('mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"')
    return ["unshare", "-m", "sh", "-c", script, str(directory), *command]


def assert_one_line_usage_error(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("fencepost: error: "), lines[0]
    assert message in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    assert result.stdout == "", "the run must not have started"


def leftovers(cwd: Path) -> list[str]:
    return sorted(p.name for p in (cwd / "tmp").glob("fencepost-*"))


def saved_history(path: Path, **header: object) -> Path:
    """A small adk-ledger history, its header changed by ``header``."""
    History(spec.CONTRACT, simulate(20, 4, 2)).save(path)
    head, *events = path.read_text().splitlines()
    path.write_text("\n".join([json.dumps({**json.loads(head), **header}), *events]) + "\n")
    return path


# --- the SQLite path ---------------------------------------------------------------------------


def test_a_sqlite_path_in_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    result = fencepost_cli("check", "adk-ledger", "--adapter", "sqlite:////nonexistent/d/x.db",
                           "--quiet", cwd=tmp_path)
    assert_one_line_usage_error(
        result, "cannot use the SQLite database sqlite:////nonexistent/d/x.db: directory "
        "/nonexistent/d does not exist")
    assert leftovers(tmp_path) == []


def test_a_sqlite_path_under_a_file_or_naming_a_directory_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    result = fencepost_cli("check", "adk-ledger", "--adapter", "sqlite:///afile/x.db", "--quiet",
                           cwd=tmp_path)
    assert_one_line_usage_error(result, f"{tmp_path / 'afile'} is a file, not a directory")
    result = fencepost_cli("check", "adk-ledger", "--adapter", f"sqlite:///{tmp_path}",
                           "--quiet", cwd=tmp_path)
    assert_one_line_usage_error(result, f"{tmp_path} is a directory; name a file in it")


def test_a_sqlite_path_in_a_read_only_directory_is_one_line(tmp_path: Path) -> None:
    locked = read_only(tmp_path)
    try:
        result = fencepost_cli("check", "adk-ledger", "--adapter", f"sqlite:///{locked}/x.db",
                               "--quiet", cwd=tmp_path, read_only=locked)
    finally:
        locked.chmod(0o700)
    assert_one_line_usage_error(result, f"directory {locked} is not writable")


# --- report and JSON destinations, checked before the run --------------------------------------


@pytest.mark.parametrize("command", [["check", "adk-ledger"],
                                     ["mutants", "adk-ledger", "--only", "zombie_checkpoint"]])
def test_a_report_dir_that_is_a_file_is_found_before_the_run(tmp_path: Path,
                                                            command: list[str]) -> None:
    (tmp_path / "R").write_text("not a directory")
    result = fencepost_cli(*command, "--report", "R", "--quiet", cwd=tmp_path)
    assert_one_line_usage_error(result, "--report R is a file; name a directory")
    result = fencepost_cli(*command, "--report", "R/inner", "--quiet", cwd=tmp_path)
    assert_one_line_usage_error(result, f"{tmp_path / 'R'} is a file, not a directory")
    assert (tmp_path / "R").read_text() == "not a directory"


def test_a_report_file_that_is_a_directory_is_found_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "R" / "junit.xml").mkdir(parents=True)
    result = fencepost_cli("check", "adk-ledger", "--report", "R", "--quiet", cwd=tmp_path)
    assert_one_line_usage_error(result, "junit.xml cannot be overwritten")


def test_a_report_dir_that_is_not_writable_is_found_before_the_run(tmp_path: Path) -> None:
    locked = read_only(tmp_path)
    try:
        result = fencepost_cli("check", "adk-ledger", "--report", str(locked / "R"), "--quiet",
                               cwd=tmp_path, read_only=locked)
    finally:
        locked.chmod(0o700)
    assert_one_line_usage_error(result, f"directory {locked} is not writable")


@pytest.mark.parametrize("command", [["coverage", "adk-ledger", "--quiet"],
                                     ["bench", "--quick", "--quiet"]])
def test_a_json_file_in_a_missing_directory_is_found_before_the_run(tmp_path: Path,
                                                                   command: list[str]) -> None:
    result = fencepost_cli(*command, "--json", "/nonexistent/x.json", cwd=tmp_path)
    assert_one_line_usage_error(result, "--json /nonexistent/x.json: directory /nonexistent "
                                        "does not exist")
    (tmp_path / "J").mkdir()
    result = fencepost_cli(*command, "--json", "J", cwd=tmp_path)
    assert_one_line_usage_error(result, "--json J is a directory; name a file")


FULL = "not written: No space left on device"


@pytest.mark.parametrize(("command", "flag", "path", "said"), [
    (["check", "adk-ledger", "--adapter", "memory"], "--summary", "/dev/full",
     f"--summary /dev/full {FULL}"),
    (["coverage", "adk-ledger", "--adapter", "memory", "--seeds", "1"], "--json", "/dev/full",
     f"--json /dev/full {FULL}"),
])
def test_an_output_that_cannot_be_written_after_the_run_is_one_line_and_the_runs_exit_code(
        tmp_path: Path, command: list[str], flag: str, path: str, said: str) -> None:
    """A full disk (``/dev/full``): what the run found is printed, the output is said not
    written in one line, and the run's own exit code stands (no traceback, no exit 4)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs Linux's /dev/full")
    result = fencepost_cli(*command, flag, path, "--quiet", "--seed", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.splitlines() == [f"fencepost: {said}"]
    assert result.stdout.strip()


PROC_REFUSES = "nothing can be created in /proc (No such file or directory); name a writable place"


@pytest.mark.parametrize(("command", "flag", "path"), [
    (["check", "adk-ledger", "--adapter", "memory"], "--report", "/proc/fencepost-R"),
    (["check", "adk-ledger", "--adapter", "memory"], "--summary", "/proc/fencepost-s.md"),
    (["coverage", "adk-ledger", "--adapter", "memory", "--seeds", "1"], "--json",
     "/proc/fencepost.json"),
    (["mutants", "adk-ledger", "--only", "create_stamps_zero"], "--report", "/proc/fencepost-R"),
    (["campaign", "adk-ledger", "--adapter", "memory", "--seeds", "1"], "--out",
     "/proc/fencepost-C"),  # said of the campaign's first file, its settings.json
])
def test_a_place_that_passes_access_and_refuses_every_entry_is_found_before_the_run(
        tmp_path: Path, command: list[str], flag: str, path: str) -> None:
    """``/proc`` passes ``access()`` for root and refuses every new entry: an output there is
    a usage error before the run (one line, exit 2), not a run whose report is then lost."""
    if not os.path.isdir("/proc") or not os.access("/proc", os.W_OK | os.X_OK):
        pytest.skip("needs Linux's /proc, writable by its permission bits (root)")
    result = fencepost_cli(*command, flag, path, "--quiet", cwd=tmp_path)
    named = f"{path}/settings.json" if flag == "--out" else path
    assert_one_line_usage_error(result, f"{flag} {named}: {PROC_REFUSES}")


# --- options, capabilities and budgets of analyze ----------------------------------------------


@pytest.mark.parametrize(("extra", "message"), [
    (["--option", "nosuch=1"], f"unknown option 'nosuch'; this contract has {ADK_OPTIONS}"),
    (["--option", "finish_phases=sometimes"],
     "option finish_phases='sometimes' is not supported; use one of strict, any"),
    (["--option", "finish_phases"], "--option takes NAME=VALUE, not 'finish_phases'"),
    (["--capability", "teleport"], "unknown capability 'teleport' for adk-ledger; known: durable"),
    (["--budget", "-1"], "--budget must be 0 or more seconds, not -1.0"),
    (["--budget", "nan"], "--budget must be 0 or more seconds, not nan"),
])
def test_analyze_refuses_a_bad_option_capability_or_budget(tmp_path: Path, extra: list[str],
                                                           message: str) -> None:
    path = saved_history(tmp_path / "h.jsonl")
    assert_one_line_usage_error(fencepost_cli("analyze", str(path), *extra, cwd=tmp_path),
                                message)


@pytest.mark.parametrize(("options", "message"), [
    ({"nosuch": "1"}, "line 1: in the header's options: unknown option 'nosuch'"),
    ({"finish_phases": "sometimes"},
     "line 1: in the header's options: option finish_phases='sometimes' is not supported"),
])
def test_analyze_refuses_a_history_whose_header_has_a_bad_option(
        tmp_path: Path, options: dict[str, str], message: str) -> None:
    path = saved_history(tmp_path / "h.jsonl", options=options)
    assert_one_line_usage_error(fencepost_cli("analyze", str(path), cwd=tmp_path), message)
    with pytest.raises(ValueError, match="in the header's options"):
        History.load(path)


def test_a_history_with_valid_header_options_loads_with_them(tmp_path: Path) -> None:
    path = saved_history(tmp_path / "h.jsonl", options={"finish_phases": "any"})
    assert History.load(path).options == {"finish_phases": "any"}


# --- numbers and names that were already refused: still one line --------------------------------


@pytest.mark.parametrize(("args", "message"), [
    (["coverage", "adk-ledger", "--seeds", "0"], "--seeds must be 1 or more, not 0"),
    (["check", "adk-ledger", "--ops", "-1"], "ops must be 1 or more, not -1"),
    (["check", "adk-ledger", "--ops", "0"], "ops must be 1 or more, not 0 (--concurrency 0 skips"),
    (["check", "adk-ledger", "--concurrency", "-1"], "concurrency must be 0 or more, not -1"),
    (["bench", "--seeds", "0"], "--seeds must be at least 1"),
    (["bench", "--contract", "nosuch"], "unknown contract 'nosuch'"),
    (["check", "adk-ledger", "--option", "finish_phases"],
     "--option takes NAME=VALUE, not 'finish_phases'"),
    (["coverage", "adk-ledger", "--option", "nosuch=1"], "unknown option 'nosuch'"),
    *((["check", "snodo-tasks", "--option", f"max_tasks={bad}"],
       f"option max_tasks='{bad}' must be a positive integer (ASCII digits, no sign or leading "
       "zero) or 'infinity'") for bad in ("\u00b2", "007", "-3", "0", "")),
    (["mutants", "adk-ledger", "--only", ADK_SQLITE_ONLY[0]],
     f"not on --adapter memory: {ADK_SQLITE_ONLY[0]} only on --adapter sqlite"),
    (["check", "adk-ledger", "--adapter", "mutant:nosuch"],
     "adk-ledger has no mutant 'nosuch' (see fencepost mutants adk-ledger for the "
     f"{len(contract_named('adk-ledger').mutants)} there are)"),
    # the old name of the mutant: form is refused, not taken for MODULE:FACTORY
    (["check", "adk-ledger", "--adapter", "faulty:claim_completed"],
     "adapter 'faulty:claim_completed': faulty:NAME is now mutant:NAME; write "
     "mutant:claim_completed instead"),
    (["campaign", "adk-ledger", "--adapter", "faulty:claim_completed@sqlite", "--seeds", "1..2"],
     "adapter 'faulty:claim_completed@sqlite': faulty:NAME is now mutant:NAME; write "
     "mutant:claim_completed@sqlite instead"),
])
def test_bad_numbers_and_names_are_one_line(tmp_path: Path, args: list[str],
                                            message: str) -> None:
    assert_one_line_usage_error(fencepost_cli(*args, "--quiet", cwd=tmp_path), message)
    assert leftovers(tmp_path) == []


# --- the temporary SQLite directory ------------------------------------------------------------


def test_a_configuration_error_on_sqlite_leaves_no_temporary_directory(tmp_path: Path) -> None:
    result = fencepost_cli("check", "adk-ledger", "--option", "nosuch=1", "--quiet", cwd=tmp_path)
    assert_one_line_usage_error(result, "unknown option 'nosuch'")
    assert leftovers(tmp_path) == []


def test_the_api_on_sqlite_leaves_no_temporary_directory_after_a_configuration_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The options are refused after the adapter was resolved (the CLI checks them first)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(ConfigurationError, match="unknown option 'nosuch'"):
        fencepost.check("adk-ledger", "sqlite", options={"nosuch": "1"})
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.parametrize("name", contract_names())
def test_the_sqlite_directory_exists_from_the_first_store_to_close(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    unused = TempSqliteFactory(contract_named(name))
    unused.close()
    assert os.listdir(tmp_path) == [] and unused.url is None
    factory = TempSqliteFactory(contract_named(name))
    env = fencepost.AdapterEnv(clock=lambda: 1_000_000, namespace="ue1")
    store = factory(env)
    assert factory.directory is not None and os.path.isdir(factory.directory)
    assert factory.url == f"sqlite:///{factory.directory}/ledger.db"
    close = getattr(store, "close", None)
    if close is not None:
        close()
    factory.discard(env)
    factory.close()
    assert os.listdir(tmp_path) == [] and factory.directory is None


@pytest.mark.parametrize("option", ["max_tasks=3", "max_active_tasks_per_scope=2"])
def test_a_run_wide_capacity_limit_is_refused_with_why(tmp_path: Path, option: str) -> None:
    """Every check shares the store, each against a model that starts empty: a limit reached
    by earlier checks' records would fail a correct store (it did: SNODO-CAP-001)."""
    name, value = option.split("=")
    result = fencepost_cli("check", "snodo-tasks", "--adapter", "memory", "--option", option,
                           "--quiet", cwd=tmp_path)
    assert_one_line_usage_error(
        result, f"option {name}={value} cannot be checked run-wide: every check's records "
                f"would count against it, each against a model that starts empty; the kit "
                f"checks {name} itself on stores of its own, so leave it at infinity (run the "
                f"store under test without the limit)")


# --- JSON inputs nested deeper than any parser's recursion ------------------------------------


@pytest.mark.parametrize("command", [
    ["diff", "deep.json", "deep.json"],
    ["check", "adk-ledger", "--adapter", "memory", "--baseline", "deep.json"],
    ["analyze", "deep.jsonl"],
    ["analyze", "deep2.jsonl"],
])
def test_json_nested_100000_deep_is_one_line(tmp_path: Path, command: list[str]) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "deep.json").write_text(deep)
    (tmp_path / "deep.jsonl").write_text(deep + "\n")
    header = '{"fencepost": "history", "version": 1, "contract": "adk-ledger"}'
    (tmp_path / "deep2.jsonl").write_text(header + "\n" + deep + "\n")
    line = {"deep.jsonl": "line 1: nested too deeply to read",
            "deep2.jsonl": "line 2: nested too deeply to read"}.get(command[-1],
                                                                  "nested too deeply to read")
    assert_one_line_usage_error(fencepost_cli(*command, cwd=tmp_path), line)
