#!/usr/bin/env escript
%% -*- erlang -*-
%%! -noinput
%%
%% adk-ledger over fencepost-wire/1: an in-memory invocation ledger, checked by Fencepost.
%%
%%   fencepost check adk-ledger --adapter exec:examples/erlang/adk_ledger.escript
%%   examples/erlang/adk_ledger.escript --bug same_token_reclaims   (a mutant)
%%
%% This script is the store's calls and its value mapping only. The protocol's plumbing (the
%% stdin and stdout ports, the line loop, the JSON codec, hello, options, namespaces, faults,
%% shutdown) is fencepost_wire.erl, next to this file: the script compiles it when it starts
%% and loads it from memory, so there is no build step and no .beam file is written. The
%% script is a callback module of the fencepost_wire behaviour (the callbacks are exported
%% below; a -behaviour attribute would only warn on every start, because the behaviour is
%% loaded after the script is compiled). OTP libraries only.
%%
%% Each namespace is one fencepost_wire process whose data is this ledger's records (a map of
%% invocation id to #inv{}), so every operation below runs alone on its namespace. Values are
%% kept in their wire form (see fencepost_wire), so whatever the ledger does not interpret
%% (checkpoints, outcomes, metadata values) is written back exactly as it came.

-mode(compile).

-export([contract/0, name/0, version/0, capabilities/0, choices/0, operations/0,
         value_classes/0, open/3, call/4]).
%% The helper's readers and builders of wire values, used as if they were the script's own.
-import(fencepost_wire, [is_mapping/1, lookup/2, show/1, value/2]).

-define(READY, <<"ready">>).
-define(RUNNING, <<"running">>).
-define(COMPLETED, <<"completed">>).
-define(FINISH_PHASES, [<<"completed">>, <<"failed">>, <<"timed_out">>, <<"cancelled">>,
                        <<"paused">>]).

%% One stored invocation, owner token included (null: none stored).
-record(inv, {id, workflow_id = null, workflow_version = null, kind = null,
              checkpoint = {obj, []}, phase, outcome = null, token = null, owner = null,
              lease_until = 0, revision = 0, created_at, updated_at}).

%% ---------------------------------------------------------------------------------------------
%% Start
%% ---------------------------------------------------------------------------------------------

main(Args) ->
    Env = case os:getenv("ADK_LEDGER_BUG") of
              false -> [];
              Text -> string:lexemes(Text, ", ")
          end,
    Names = Env ++ parse_args(Args),
    Known = [N || {N, _, _} <- bugs()],
    case [N || N <- Names, not lists:member(N, Known)] of
        [] -> ok;
        [Bad | _] ->
            io:format(standard_error, "adk_ledger: unknown bug '~ts' (known: ~ts)~n",
                      [Bad, lists:join(", ", Known)]),
            halt(2)
    end,
    persistent_term:put({?MODULE, bugs}, [list_to_atom(N) || N <- lists:usort(Names)]),
    load_helper(),
    [io:format(standard_error, "adk_ledger: running with bug ~ts~n", [N])
     || N <- lists:usort(Names)],
    fencepost_wire:serve(?MODULE, #{log_prefix => "adk_ledger"}).

%% fencepost_wire.erl, found next to this script wherever it is run from, compiled to a binary
%% and loaded: nothing is written to disk.
load_helper() ->
    Source = filename:join(filename:dirname(escript:script_name()), "fencepost_wire.erl"),
    case compile:file(Source, [binary, return_errors]) of
        {ok, Module, Binary} -> {module, Module} = code:load_binary(Module, Source, Binary);
        Error ->
            io:format(standard_error, "adk_ledger: cannot compile ~ts: ~p~n", [Source, Error]),
            halt(2)
    end.

parse_args([]) -> [];
parse_args(["--bug", Name | Rest]) -> [Name | parse_args(Rest)];
parse_args(["--bug=" ++ Name | Rest]) -> [Name | parse_args(Rest)];
parse_args([Help | _]) when Help =:= "-h"; Help =:= "--help" ->
    io:format(standard_error,
              "usage: adk_ledger.escript [--bug NAME]...  (bugs: ~ts)~n",
              [lists:join(", ", [N || {N, _, _} <- bugs()])]),
    halt(0);
parse_args([Other | _]) ->
    io:format(standard_error, "adk_ledger: unknown argument '~ts' (usage: [--bug NAME])~n",
              [Other]),
    halt(2).

%% The bug switches: each mirrors one mutant of the kit (name, expected clause, what it does).
bugs() ->
    [{"same_token_reclaims", "ADK-CLAIM-004", "the same token re-claims a live lease"},
     {"claim_completed", "ADK-CLAIM-002", "claim allowed on a completed invocation"},
     {"get_missing_blank", "ADK-GET-001", "get of a missing id returns a blank record"},
     {"owned_means_live", "ADK-GET-003", "owned turns false when the lease expires"},
     {"claim_keeps_outcome", "ADK-CLAIM-006", "claim does not clear the previous outcome"},
     {"ignores_dead_owners", "ADK-CLAIM-007", "claim and delete ignore dead owners"},
     {"missing_write_is_stale", "ADK-WRITE-001",
      "renew/checkpoint/finish of a missing id answer stale_owner"},
     {"renew_keeps_revision", "ADK-REV-001", "renew does not bump the revision"},
     {"checkpoint_keeps_lease", "ADK-CKPT-001", "checkpoint does not extend the lease"},
     {"finish_any_phase", "ADK-FINISH-001", "finish accepts any phase"},
     {"paused_is_final", "ADK-FINISH-003", "a paused invocation cannot be resumed"},
     {"delete_missing_succeeds", "ADK-DELETE-001", "delete of a missing id answers ok"}].

bug(Name) ->
    lists:member(Name, persistent_term:get({?MODULE, bugs}, [])).

%% ---------------------------------------------------------------------------------------------
%% The fencepost_wire callbacks: the contract's tables
%% ---------------------------------------------------------------------------------------------

contract() -> <<"adk-ledger">>.

name() -> <<"adk-ledger-erlang">>.

version() -> <<"0.1.0">>.

capabilities() -> [<<"durable">>, <<"owner_liveness">>, <<"concurrency">>].

%% The documented choices: name, the values this store follows, the default listed first.
choices() ->
    [{<<"store_clock">>, [<<"store">>]},
     {<<"finish_phases">>, [<<"strict">>, <<"any">>]},
     {<<"renew_atomic">>, [<<"atomic">>, <<"non_atomic">>]},
     {<<"delete_completed">>, [<<"allowed">>, <<"forbidden">>]},
     {<<"metadata_keys">>, [<<"required">>, <<"optional">>]},
     {<<"finish_outcome">>, [<<"normalized">>, <<"as_given">>]},
     {<<"empty_strings">>, [<<"refused">>, <<"accepted">>]},
     {<<"owned_view">>, [<<"token_stored">>, <<"live_lease">>]},
     %% The view's owner is the claimant's name: one value per claimant, which both readings
     %% accept (node: any value, the same on every read; claimant: exactly the name).
     {<<"owner_view">>, [<<"node">>, <<"claimant">>]}].

%% The operations and their arguments, by name, in the Protocol's order.
operations() ->
    [{create, [invocation_id, metadata, checkpoint]},
     {get, [invocation_id]},
     {claim, [invocation_id, owner, owner_token, now_ms, lease_ms]},
     {renew, [invocation_id, owner_token, now_ms, lease_ms]},
     {checkpoint, [invocation_id, owner_token, checkpoint, now_ms, lease_ms]},
     {finish, [invocation_id, owner_token, phase, outcome, checkpoint, now_ms]},
     {delete, [invocation_id]}].

value_classes() ->
    [{<<"Invocation">>,
      [<<"invocation_id">>, <<"workflow_id">>, <<"workflow_version">>, <<"kind">>,
       <<"checkpoint">>, <<"phase">>, <<"outcome">>, <<"owned">>, <<"owner">>,
       <<"lease_until">>, <<"revision">>, <<"created_at">>, <<"updated_at">>]}].

%% A namespace's records: empty at its first open, the same ones when it is opened again.
open(_Namespace, _Options, new) -> #{};
open(_Namespace, _Options, Records) -> Records.

%% The error an operation answers to arguments its guard excludes.
argument_error(create) -> <<"invalid_create_arguments">>;
argument_error(get) -> <<"invalid_invocation_id">>;
argument_error(delete) -> <<"invalid_invocation_id">>;
argument_error(claim) -> <<"invalid_claim_arguments">>;
argument_error(renew) -> <<"invalid_renew_arguments">>;
argument_error(checkpoint) -> <<"invalid_checkpoint_arguments">>;
argument_error(finish) -> <<"invalid_finish_arguments">>.

%% ---------------------------------------------------------------------------------------------
%% The ledger: the call/4 callback
%% ---------------------------------------------------------------------------------------------

option(Name, #{options := Opts}) -> maps:get(Name, Opts).

call(Op, Args, Ctx, Data) ->
    case admitted(Op, Args, option(<<"empty_strings">>, Ctx) =:= <<"refused">>) of
        true -> op(Op, Args, Ctx, Data);
        false -> {error, argument_error(Op), [atom_to_list(Op), ": arguments its guard excludes"]}
    end.

%% The guard of each operation's head, checked before anything is read.
admitted(create, #{invocation_id := Id, metadata := M, checkpoint := C}, NoEmpty) ->
    is_binary(Id) andalso not (NoEmpty andalso Id =:= <<>>)
        andalso is_mapping(M) andalso is_mapping(C);
admitted(get, #{invocation_id := Id}, _) -> is_binary(Id);
admitted(delete, #{invocation_id := Id}, _) -> is_binary(Id);
admitted(claim, #{invocation_id := Id, owner := O, owner_token := T, now_ms := N,
                  lease_ms := L}, NoEmpty) ->
    is_binary(Id) andalso is_binary(O) andalso token(T)
        andalso not (NoEmpty andalso empty_token(T))
        andalso is_integer(N) andalso lease(L);
admitted(renew, #{invocation_id := Id, owner_token := T, now_ms := N, lease_ms := L}, _) ->
    is_binary(Id) andalso token(T) andalso is_integer(N) andalso lease(L);
admitted(checkpoint, #{invocation_id := Id, owner_token := T, checkpoint := C, now_ms := N,
                       lease_ms := L}, _) ->
    is_binary(Id) andalso token(T) andalso is_integer(N) andalso lease(L)
        andalso is_mapping(C);
admitted(finish, #{invocation_id := Id, owner_token := T, phase := P, checkpoint := C,
                   now_ms := N}, _) ->
    is_binary(Id) andalso token(T) andalso is_integer(N) andalso is_mapping(C)
        andalso is_binary(P).

%% A token is an Erlang binary: on the wire text (a string) or bytes ({"__bytes__": hex}).
%% Tokens are compared as they came; the kit never sends one token in both forms.
token(T) when is_binary(T) -> true;
token({obj, [{<<"__bytes__">>, Hex}]}) -> is_binary(Hex);
token(_) -> false.

empty_token(<<>>) -> true;
empty_token({obj, [{<<"__bytes__">>, <<>>}]}) -> true;
empty_token(_) -> false.

lease(L) -> is_integer(L) andalso L > 0.

live(Now, #inv{lease_until = Until}) -> Now < Until.

owner_dead(#inv{owner = null}, _) -> false;
owner_dead(#inv{owner = Owner}, #{dead := Dead}) ->
    not bug(ignores_dead_owners) andalso lists:member(Owner, Dead).

not_found(Id) -> {error, <<"not_found">>, ["no invocation ", show(Id)]}.

stale(Id) -> {error, <<"stale_owner">>, ["not the running owner of ", show(Id)]}.

op(create, #{invocation_id := Id, metadata := M, checkpoint := C}, #{now := Now}, Data) ->
    case Data of
        #{Id := _} -> {error, <<"already_exists">>, [show(Id), " exists"]};
        _ ->
            Inv = #inv{id = Id,
                       workflow_id = lookup(<<"workflow_id">>, M),
                       workflow_version = lookup(<<"workflow_version">>, M),
                       kind = lookup(<<"kind">>, M),
                       checkpoint = C, phase = ?READY, outcome = null,
                       created_at = Now, updated_at = Now},
            {ok, null, Data#{Id => Inv}}
    end;

op(get, #{invocation_id := Id}, Ctx, Data) ->
    case Data of
        #{Id := Inv} -> {ok, view(Inv, Ctx), Data};
        _ ->
            case bug(get_missing_blank) of
                true -> {ok, view(#inv{id = Id, phase = ?READY, created_at = 0,
                                       updated_at = 0}, Ctx),
                         Data};
                false -> not_found(Id)
            end
    end;

op(claim, #{invocation_id := Id, owner := Owner, owner_token := Token, now_ms := NowMs,
            lease_ms := LeaseMs}, Ctx, Data) ->
    case Data of
        #{Id := Inv} ->
            case claimable(Inv, Token, NowMs, Ctx) of
                true ->
                    Outcome = case bug(claim_keeps_outcome) of
                                  true -> Inv#inv.outcome;
                                  false -> null
                              end,
                    New = Inv#inv{phase = ?RUNNING, outcome = Outcome, token = Token,
                                  owner = Owner, lease_until = NowMs + LeaseMs,
                                  revision = Inv#inv.revision + 1, updated_at = NowMs},
                    {ok, view(New, Ctx), Data#{Id := New}};
                {false, Code} -> {error, Code, ["cannot claim ", show(Id)]}
            end;
        _ -> not_found(Id)
    end;

op(renew, #{invocation_id := Id, owner_token := Token, now_ms := NowMs, lease_ms := LeaseMs},
   _Ctx, Data) ->
    with_writer(Id, Token, NowMs, Data, fun(Inv) ->
        Bump = case bug(renew_keeps_revision) of true -> 0; false -> 1 end,
        Inv#inv{lease_until = NowMs + LeaseMs, revision = Inv#inv.revision + Bump,
                updated_at = NowMs}
    end);

op(checkpoint, #{invocation_id := Id, owner_token := Token, checkpoint := C, now_ms := NowMs,
                 lease_ms := LeaseMs}, _Ctx, Data) ->
    with_writer(Id, Token, NowMs, Data, fun(Inv) ->
        Until = case bug(checkpoint_keeps_lease) of
                    true -> Inv#inv.lease_until;
                    false -> NowMs + LeaseMs
                end,
        Inv#inv{checkpoint = C, lease_until = Until, revision = Inv#inv.revision + 1,
                updated_at = NowMs}
    end);

op(finish, #{invocation_id := Id, owner_token := Token, phase := Phase, outcome := Outcome,
             checkpoint := C, now_ms := NowMs}, Ctx, Data) ->
    case finish_phase(Phase, Ctx) of
        false -> {error, <<"invalid_terminal_phase">>, [show(Phase), " is no finish phase"]};
        true ->
            with_writer(Id, Token, NowMs, Data, fun(Inv) ->
                Inv#inv{phase = Phase, outcome = stored_outcome(Phase, Outcome, C, Ctx),
                        checkpoint = C, token = null, owner = null, lease_until = 0,
                        revision = Inv#inv.revision + 1, updated_at = NowMs}
            end)
    end;

op(delete, #{invocation_id := Id}, #{now := Now} = Ctx, Data) ->
    case Data of
        #{Id := #inv{token = null, phase = Phase}} ->
            case Phase =:= ?COMPLETED
                andalso option(<<"delete_completed">>, Ctx) =:= <<"forbidden">> of
                true -> {error, <<"completed">>, [show(Id), " is completed"]};
                false -> {ok, null, maps:remove(Id, Data)}
            end;
        #{Id := Inv} ->
            case live(Now, Inv) andalso not owner_dead(Inv, Ctx) of
                true -> {error, <<"invocation_owned">>, [show(Id), " is leased"]};
                false -> {ok, null, maps:remove(Id, Data)}
            end;
        _ ->
            case bug(delete_missing_succeeds) of
                true -> {ok, null, Data};
                false -> not_found(Id)
            end
    end.

%% claim: completed is final; otherwise free when no token is stored, the lease expired at
%% the claim's now_ms, or the owner is known dead. The claimant's token is not looked at.
claimable(#inv{phase = Phase, token = Stored} = Inv, Token, NowMs, Ctx) ->
    if
        Phase =:= ?COMPLETED ->
            bug(claim_completed) orelse {false, <<"completed">>};
        true ->
            PausedIsFinal = Phase =:= <<"paused">> andalso bug(paused_is_final),
            SameToken = Phase =:= ?RUNNING andalso Stored =:= Token
                andalso bug(same_token_reclaims),
            if
                PausedIsFinal -> {false, <<"completed">>};
                SameToken -> true;
                true -> free(Inv, NowMs, Ctx) orelse {false, <<"invocation_owned">>}
            end
    end.

free(#inv{token = null}, _, _) -> true;
free(Inv, NowMs, Ctx) -> not live(NowMs, Inv) orelse owner_dead(Inv, Ctx).

%% renew, checkpoint and finish share one guard, in this order: missing; nobody running holds
%% it; another token; the right token too late. Change applies only when all pass.
with_writer(Id, Token, NowMs, Data, Change) ->
    case Data of
        #{Id := #inv{phase = ?RUNNING, token = Token} = Inv} when Token =/= null ->
            case live(NowMs, Inv) of
                true -> {ok, null, Data#{Id := Change(Inv)}};
                false -> {error, <<"lease_expired">>, ["the lease of ", show(Id), " expired"]}
            end;
        #{Id := _} -> stale(Id);
        _ ->
            case bug(missing_write_is_stale) of
                true -> stale(Id);
                false -> not_found(Id)
            end
    end.

finish_phase(Phase, Ctx) ->
    case bug(finish_any_phase) of
        true -> true;
        false ->
            case option(<<"finish_phases">>, Ctx) of
                <<"any">> -> not lists:member(Phase, [<<>>, ?READY, ?RUNNING]);
                <<"strict">> -> lists:member(Phase, ?FINISH_PHASES)
            end
    end.

%% finish_outcome=normalized: a failed or cancelled finish keeps a projection of its own (the
%% shape of what it was given and the checkpoint), never the raw outcome.
stored_outcome(Phase, Outcome, Checkpoint, Ctx) ->
    case lists:member(Phase, [<<"failed">>, <<"cancelled">>])
        andalso option(<<"finish_outcome">>, Ctx) =:= <<"normalized">> of
        true -> {obj, [{<<"normalized">>, Phase}, {<<"given">>, shape(Outcome)},
                       {<<"checkpoint">>, Checkpoint}]};
        false -> Outcome
    end.

shape(null) -> <<"none">>;
shape(B) when is_boolean(B) -> <<"boolean">>;
shape(I) when is_integer(I) -> <<"integer">>;
shape({float, _}) -> <<"float">>;
shape(S) when is_binary(S) -> <<"string">>;
shape(L) when is_list(L) -> <<"list">>;
shape({obj, [{<<"__tuple__">>, _}]}) -> <<"tuple">>;
shape({obj, [{<<"__bytes__">>, _}]}) -> <<"bytes">>;
shape({obj, [{<<"__float__">>, _}]}) -> <<"float">>;
shape(V) ->
    case is_mapping(V) of
        true -> <<"mapping">>;
        false -> <<"other">>
    end.

view(#inv{} = Inv, #{now := Now} = Ctx) ->
    Owned = Inv#inv.token =/= null andalso
        (not (option(<<"owned_view">>, Ctx) =:= <<"live_lease">> orelse bug(owned_means_live))
         orelse Now < Inv#inv.lease_until),
    value(<<"Invocation">>,
          [{<<"invocation_id">>, Inv#inv.id},
           {<<"workflow_id">>, Inv#inv.workflow_id},
           {<<"workflow_version">>, Inv#inv.workflow_version},
           {<<"kind">>, Inv#inv.kind},
           {<<"checkpoint">>, Inv#inv.checkpoint},
           {<<"phase">>, Inv#inv.phase},
           {<<"outcome">>, Inv#inv.outcome},
           {<<"owned">>, Owned},
           {<<"owner">>, Inv#inv.owner},
           {<<"lease_until">>, Inv#inv.lease_until},
           {<<"revision">>, Inv#inv.revision},
           {<<"created_at">>, Inv#inv.created_at},
           {<<"updated_at">>, Inv#inv.updated_at}]).
