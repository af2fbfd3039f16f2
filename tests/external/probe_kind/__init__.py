"""probe: a kind of check declared outside the kit (the proof of the check-kind seam).

A probe is a short pointed script a contract keeps beside its own checks: ``fn(harness,
prefix)``, run on the part's world like a scripted scenario, each one a check of its own
(``probe:NAME``). The kind is this module (its ``fencepost.check_kinds`` entry point names
:data:`KIND`); a contract that has probes declares them in a module of its own (its
``fencepost.checks`` entry point ``CONTRACT.probe``), here :mod:`.tiny_register`. No kit file
and no file of the contract is edited.
"""

from __future__ import annotations

from fencepost.authoring import CheckKind, Harness, PartRun, Said, Scenarios, material, run_one


def _probes(run: PartRun) -> Scenarios:
    found = material(run.suite, "probe")
    assert isinstance(found, Scenarios)
    return found


def run(part: PartRun, _name: str | None) -> None:
    probes = _probes(part)
    first = part.first_for("probe")
    names = sorted(probes, key=lambda name: name not in first)
    for k, name in enumerate(names, 1):
        if part.done(part.part.evidence):
            return
        part.progress(Said("probe", f"probe {k}/{len(names)}: {name}"))

        def body(h: Harness, fn=probes[name], prefix=f"p{k}") -> None:  # noqa: ANN001
            fn(h, prefix)

        run_one(part.suite, part.part, f"probe:{name}", body)


KIND = CheckKind("probe", run, applies=lambda suite: material(suite, "probe") is not None)
