"""What one run is asked to do, validated once: :class:`RunConfig`.

:func:`fencepost.api.check` (which ``fencepost check``, the pytest plugin and a campaign's seeds
go through) makes one with :meth:`RunConfig.of`, and a campaign checks its settings with it
before any seed runs: every input is checked here and what is wrong said in one line
(:class:`~fencepost.errors.ConfigurationError`). The engine's ``new_world``, a public entry of
its own, still fills the options' defaults and so checks them too. The command that replays a
run is made here only (:meth:`RunConfig.replay`).
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Mapping

import attrs

from fencepost.scenarios.guard import DEFAULT_CALL_TIMEOUT_S
from fencepost.scenarios.profiles import PROFILES, Profile
from fencepost.scenarios.shrinking import Shrinking

from .errors import ConfigurationError


@attrs.frozen
class RunConfig:
    """One run's settings, valid: ``profile`` is the named profile with the run's overrides
    (``concurrency``, ``concurrent_ops``, ``shrink``) applied."""

    contract: str
    profile_name: str
    profile: Profile
    seed: int
    options: Mapping[str, str]
    strict: bool = False
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    jobs: int = 1
    overrides: tuple[tuple[str, int], ...] = ()
    """The counts given (``("concurrency", 2)``, ``("ops", 50)``), for the replay command."""
    require: frozenset[str] = frozenset()
    """Capabilities the store must declare (``--require``): a missing one is a configuration
    error, not a run with their clauses unsupported."""

    @classmethod
    def of(
        cls,
        contract_name: str,
        *,
        seed: int,
        profile: str = "quick",
        options: Mapping[str, str] | None = None,
        concurrency: int | None = None,
        concurrent_ops: int | None = None,
        strict: bool = False,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        shrink_budget: str | Shrinking | None = None,
        jobs: int = 1,
        require: Collection[str] = (),
        tour: str | None = None,
    ) -> RunConfig:
        """The run's settings, each checked (a ConfigurationError names the first that is
        wrong, as the command's flag): the profile, the counts, the call timeout, the shrink
        budget, the jobs, the options (every one a choice or setting of the contract, with
        an allowed value) and the required capabilities (each one the contract knows)."""
        from .registry import contract_named, validate_capabilities, validate_options

        if profile not in PROFILES:
            raise ConfigurationError(f"unknown profile {profile!r}; use {', '.join(PROFILES)}")
        chosen = PROFILES[profile]
        overrides: list[tuple[str, int]] = []
        for flag, count in (("concurrency", concurrency), ("ops", concurrent_ops)):
            if count is None:
                continue
            if flag == "ops" and count < 1:  # no calls: LIN unknown, for no reason of the store's
                raise ConfigurationError(f"--ops must be 1 or more, not {count} (--concurrency 0 "
                                         "skips the concurrent run)")
            if count < 0:
                raise ConfigurationError(f"--{flag} must be 0 or more, not {count}")
            overrides.append((flag, count))
        if concurrency is not None:
            chosen = attrs.evolve(chosen, concurrency=concurrency)
        if concurrent_ops is not None:
            chosen = attrs.evolve(chosen, concurrent_ops=concurrent_ops)
        if not call_timeout_s > 0:
            raise ConfigurationError(
                f"--call-timeout must be more than 0 seconds, not {call_timeout_s:g}")
        if shrink_budget is not None:
            try:
                shrink = (shrink_budget if isinstance(shrink_budget, Shrinking)
                          else Shrinking.parse(shrink_budget))
            except ValueError as e:
                raise ConfigurationError(f"--shrink-budget: {e}") from None
            chosen = attrs.evolve(chosen, shrink=shrink)
        if jobs < 1:
            raise ConfigurationError(f"--jobs must be 1 or more, not {jobs}")
        if tour is not None:
            chosen = attrs.evolve(chosen, tour=_tour_scope(contract_name, tour))
        given = validate_options(contract_name, dict(options or {}))
        if concurrent_ops is None:  # the profile's calls, as many as the contract's run needs
            scale = contract_named(contract_name).suite.concurrent_scale
            chosen = attrs.evolve(chosen, concurrent_ops=chosen.concurrent_ops * scale)
        try:
            needed = validate_capabilities(contract_name, require)
        except ConfigurationError as e:
            raise ConfigurationError(f"--require: {e}") from None
        return cls(contract_name, profile, chosen, seed, given, strict, call_timeout_s, jobs,
                   tuple(overrides), needed)

    def replay(self, adapter: str) -> str:
        """The ``fencepost check`` command that runs this again on ``adapter`` (a spec)."""
        words = ["fencepost", "check", self.contract, "--adapter", adapter, "--profile",
                 self.profile_name, "--seed", str(self.seed)]
        for key, value in sorted(self.options.items()):
            words += ["--option", f"{key}={value}"]
        for flag, count in self.overrides:
            words += [f"--{flag}", str(count)]
        if self.strict:
            words.append("--strict")
        if self.profile.shrink != PROFILES[self.profile_name].shrink:
            words += ["--shrink-budget", self.profile.shrink.describe()]
        if self.profile.tour != PROFILES[self.profile_name].tour:
            words += ["--tour", self.profile.tour or "none"]
        if self.call_timeout_s != DEFAULT_CALL_TIMEOUT_S:
            words += ["--call-timeout", f"{self.call_timeout_s:g}"]
        return shlex.join(words)


def _tour_scope(contract_name: str, tour: str) -> str:
    """``tour`` as a scope of the contract's tour ("" for ``none``: no tour)."""
    from .registry import contract_named

    if tour in ("", "none"):
        return ""
    scopes = contract_named(contract_name).suite.tours
    if not scopes:
        raise ConfigurationError(f"--tour: {contract_name} has no transition tour")
    if tour not in scopes:
        raise ConfigurationError(f"--tour: {contract_name} has no tour scope {tour!r}; use "
                                 f"{', '.join(scopes)}")
    return tour
