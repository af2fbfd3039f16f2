"""Real-thread races for the ledgence-tasks slice."""

from __future__ import annotations

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..harness import Harness
from ..races import release_together, settle_race
from ..registry import Races
from .scripted import DESCRIPTOR, SCOPE, task_input

RACES = Races()
race = RACES.register


@race
def concurrent_submissions(h: Harness, p: str, n: int, round_no: int) -> None:
    """N identical submissions of one key at once: one task, one `submitted` event."""
    command = spec.SubmitCommand(f"{p}-k", task_input(data={"round": round_no}))
    ops = [spec.AcceptResolvedSubmission(command, DESCRIPTOR) for _ in range(n)]
    actors = [f"client{k}" for k in range(n)]
    outcomes = release_together(h.world.open(), ops, run=h.run)
    settle_race(h, "LDG-SUBMIT-006", actors, ops, outcomes, winners_expected=n)
    task = f"task#{h.state.minted}"
    h.apply("client", spec.History(SCOPE, Ref(task), 0))
