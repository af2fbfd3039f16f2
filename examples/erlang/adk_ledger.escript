#!/usr/bin/env escript
%% -*- erlang -*-
%%! -noinput
%%
%% adk-ledger over fencepost-wire/1: an in-memory invocation ledger, checked by Fencepost.
%%
%%   fencepost check adk-ledger --adapter exec:examples/erlang/adk_ledger.escript
%%   examples/erlang/adk_ledger.escript --bug same_token_reclaims   (a mutant)
%%
%% JSON lines on stdin (requests) and stdout (replies); stderr is the log. OTP libraries only.
%%
%% Processes:
%%   main       reads stdin line by line (a port on fd 0), decodes each request, answers
%%              hello and faults, keeps the namespace table and forwards everything else to a
%%              namespace;
%%   namespace  one process per namespace owns that store's records and runs its calls one
%%              after another, so every operation is atomic; it lives on after `close`
%%              (durable for the life of the OS process) and ends at `discard`;
%%   writer     the only process that writes to stdout (its own port on fd 1): one whole line
%%              per reply.
%%
%% stdin and stdout are ports on the file descriptors, not the io server (io:get_line and
%% io:put_chars cost a round of messages through the group leader per line); `-noinput` above
%% keeps the node's own user process from reading stdin too.
%%
%% Values are kept in their decoded wire form (see "JSON" below), so whatever the store does not
%% interpret (checkpoints, outcomes, metadata values) is written back exactly as it came.

-mode(compile).

-define(NAME, <<"adk-ledger-erlang">>).
-define(LINE_CHUNK, 65536).   % bytes of a line the stdin port delivers at a time
-define(VERSION, <<"0.1.0">>).
-define(PROTOCOL, <<"fencepost-wire/1">>).
-define(CONTRACT, <<"adk-ledger">>).
-define(CAPABILITIES, [<<"durable">>, <<"owner_liveness">>, <<"concurrency">>]).

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
%% Contract tables
%% ---------------------------------------------------------------------------------------------

%% The operations and their arguments, by name, in the Protocol's order.
ops() ->
    [{<<"create">>, create, [<<"invocation_id">>, <<"metadata">>, <<"checkpoint">>]},
     {<<"get">>, get, [<<"invocation_id">>]},
     {<<"claim">>, claim, [<<"invocation_id">>, <<"owner">>, <<"owner_token">>, <<"now_ms">>,
                           <<"lease_ms">>]},
     {<<"renew">>, renew, [<<"invocation_id">>, <<"owner_token">>, <<"now_ms">>,
                           <<"lease_ms">>]},
     {<<"checkpoint">>, checkpoint, [<<"invocation_id">>, <<"owner_token">>, <<"checkpoint">>,
                                     <<"now_ms">>, <<"lease_ms">>]},
     {<<"finish">>, finish, [<<"invocation_id">>, <<"owner_token">>, <<"phase">>,
                             <<"outcome">>, <<"checkpoint">>, <<"now_ms">>]},
     {<<"delete">>, delete, [<<"invocation_id">>]}].

%% The error an operation answers to arguments its guard excludes.
argument_error(create) -> <<"invalid_create_arguments">>;
argument_error(get) -> <<"invalid_invocation_id">>;
argument_error(delete) -> <<"invalid_invocation_id">>;
argument_error(claim) -> <<"invalid_claim_arguments">>;
argument_error(renew) -> <<"invalid_renew_arguments">>;
argument_error(checkpoint) -> <<"invalid_checkpoint_arguments">>;
argument_error(finish) -> <<"invalid_finish_arguments">>.

%% The documented choices: name, the values this store follows, the default (listed first).
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

%% The bug switches: each mirrors one mutant of the kit (name, expected clause).
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
%% Start
%% ---------------------------------------------------------------------------------------------

main(Args) ->
    %% A crash of the whole node must not leave an erl_crash.dump in the kit's directory.
    os:putenv("ERL_CRASH_DUMP_SECONDS", "0"),
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
    %% stdin is a port on fd 0, read here: its lines arrive as messages ({eol, Bytes}, or
    %% {noeol, Bytes} for a piece of a line longer than the port's buffer or a last line
    %% without a newline). It is watched, not linked: should reading fail, the requests read
    %% so far are still answered, as at end of input. stdout is the writer's own port.
    Port = open_port({fd, 0, 0}, [in, binary, {line, ?LINE_CHUNK}, eof]),
    unlink(Port),
    Watch = monitor(port, Port),
    Writer = spawn_link(fun() -> writer(open_port({fd, 1, 1}, [out, binary])) end),
    [log("running with bug ~ts", [N]) || N <- lists:usort(Names)],
    loop(#{writer => Writer, port => Port, watch => Watch, hello => #{}, spaces => #{}}, []).

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

log(Format, Args) ->
    io:format(standard_error, "adk_ledger: " ++ Format ++ "~n", Args).

%% ---------------------------------------------------------------------------------------------
%% The writer: one process owns stdout, every reply is one write of one whole line
%% ---------------------------------------------------------------------------------------------

%% Port: stdout (fd 1), opened by the writer, so nothing else writes to it; one port_command
%% per reply, each one whole line.
writer(Port) ->
    receive
        {line, Line} ->
            true = erlang:port_command(Port, Line),
            writer(Port);
        {sync, From, Ref} ->
            From ! {Ref, written},
            writer(Port)
    end.

send(#{writer := W}, Line) -> W ! {line, Line}.

%% The bytes of encode({obj, [{<<"id">>, Id}, {Key, Value}]}) and a newline.
reply_line(Id, Key, Value) ->
    [<<"{\"id\":">>, encode(Id), $,, encode(Key), $:, encode(Value), <<"}\n">>].

ok_line(Id, Value) -> reply_line(Id, <<"ok">>, Value).

error_line(Id, Code, Detail) ->
    reply_line(Id, <<"error">>, {obj, [{<<"code">>, Code}, {<<"detail">>, Detail},
                                       {<<"payload">>, null}]}).

fault(S, Id, Format, Args) ->
    Text = unicode:characters_to_binary(io_lib:format(Format, Args)),
    log("fault (id ~p): ~ts", [Id, Text]),
    send(S, reply_line(Id, <<"fault">>, Text)),
    S.

%% ---------------------------------------------------------------------------------------------
%% The reader: one request per line
%% ---------------------------------------------------------------------------------------------

%% Pending: the pieces so far (last first) of a line longer than the port's buffer.
loop(#{port := Port, watch := Watch} = S, Pending) ->
    receive
        {Port, {data, {eol, Bytes}}} ->
            loop(handle(joined(Bytes, Pending), S), []);
        {Port, {data, {noeol, Bytes}}} ->
            loop(S, [Bytes | Pending]);
        {Port, eof} ->
            %% A last line without a newline is still a line.
            S1 = case Pending of
                     [] -> S;
                     _ -> handle(joined(<<>>, Pending), S)
                 end,
            stop(S1, eof);
        {'DOWN', Watch, port, Port, Why} ->
            log("stdin: ~p", [Why]),
            stop(S, eof)
    end.

joined(Bytes, []) -> Bytes;
joined(Bytes, Pending) -> iolist_to_binary(lists:reverse([Bytes | Pending])).

handle(Line, S) ->
    try line(chomp(Line), S)
    catch
        Class:Reason:Stack ->
            log("request crashed: ~p:~p ~p", [Class, Reason, Stack]),
            fault(S, null, "internal error in the adapter", [])
    end.

chomp(Line) ->
    case byte_size(Line) of
        0 -> Line;
        N ->
            case binary:at(Line, N - 1) of
                C when C =:= $\n; C =:= $\r -> chomp(binary:part(Line, 0, N - 1));
                _ -> Line
            end
    end.

line(Line, S) ->
    case decode(Line) of
        {ok, {obj, Pairs}} ->
            %% The request's fields by name (the last of a duplicated name, as JSON readers do).
            Req = maps:from_list(Pairs),
            case field(<<"id">>, Req) of
                {ok, Id} when is_integer(Id), Id > 0 -> request(Id, Req, S);
                _ -> fault(S, null, "request has no readable id (a positive integer)", [])
            end;
        {ok, _} -> fault(S, null, "request is not a JSON object", []);
        error -> fault(S, null, "request is not JSON", [])
    end.

request(Id, Req, S) ->
    case field(<<"type">>, Req) of
        {ok, <<"hello">>} -> hello(Id, Req, S);
        {ok, <<"open">>} -> open(Id, Req, S);
        {ok, <<"close">>} -> close(Id, Req, S);
        {ok, <<"discard">>} -> discard(Id, Req, S);
        {ok, <<"call">>} -> call(Id, Req, S);
        {ok, <<"shutdown">>} -> stop(S, Id);
        {ok, Type} when is_binary(Type) -> fault(S, Id, "unknown type '~ts'", [show(Type)]);
        _ -> fault(S, Id, "request has no type", [])
    end.

%% shutdown (its id) or end of input: let every namespace answer what it was sent, answer
%% the shutdown, let the writer write it all, exit 0.
stop(#{spaces := Spaces} = S, Why) ->
    [sync(Pid) || {Pid, _} <- maps:values(Spaces)],
    case Why of
        eof -> log("end of input: exiting", []);
        Id -> send(S, ok_line(Id, null)), log("shutdown: exiting", [])
    end,
    sync(maps:get(writer, S)),
    erlang:halt(0).

sync(Pid) ->
    Ref = monitor(process, Pid),
    Pid ! {sync, self(), Ref},
    receive
        {Ref, _} -> demonitor(Ref, [flush]);
        {'DOWN', Ref, process, _, _} -> ok
    after 2000 -> ok
    end.

%% --- hello ---

hello(Id, Req, S) ->
    case {field(<<"protocol">>, Req), field(<<"contract">>, Req)} of
        {{ok, ?PROTOCOL}, {ok, ?CONTRACT}} ->
            case options(Req, #{}) of
                {ok, Options} ->
                    send(S, ok_line(Id, {obj, [{<<"name">>, ?NAME},
                                               {<<"version">>, ?VERSION},
                                               {<<"capabilities">>, ?CAPABILITIES}]})),
                    S#{hello := Options};
                {fault, Why} -> fault(S, Id, "~ts", [Why])
            end;
        {{ok, ?PROTOCOL}, Contract} ->
            fault(S, Id, "this adapter implements the contract 'adk-ledger' only, not ~ts",
                  [shown(Contract)]);
        {Protocol, _} ->
            fault(S, Id, "this adapter speaks fencepost-wire/1 only, not ~ts", [shown(Protocol)])
    end.

shown({ok, V}) -> show(V);
shown(error) -> "(none given)".

%% The options of a request ("options": {name: value}) laid over Base: every name must be a
%% documented choice and every value one this store follows.
options(Req, Base) ->
    case field(<<"options">>, Req) of
        error -> {ok, Base};
        {ok, null} -> {ok, Base};
        {ok, {obj, Given}} -> options_over(Given, Base);
        {ok, Other} -> {fault, io_lib:format("options must be an object, not ~ts", [show(Other)])}
    end.

options_over([], Acc) -> {ok, Acc};
options_over([{Name, Value} | Rest], Acc) ->
    case lists:keyfind(Name, 1, choices()) of
        false ->
            {fault, io_lib:format("unknown option '~ts' (adk-ledger has ~ts)",
                                  [show(Name), lists:join(", ", [N || {N, _} <- choices()])])};
        {_, Values} ->
            case lists:member(Value, Values) of
                true -> options_over(Rest, Acc#{Name => Value});
                false ->
                    {fault, io_lib:format("option '~ts': cannot follow ~ts (this store follows "
                                          "~ts)", [Name, show(Value), lists:join(", ", Values)])}
            end
    end.

%% Every choice's value for a namespace: the default, then hello's, then open's.
effective(Options) ->
    maps:merge(maps:from_list([{N, hd(Vs)} || {N, Vs} <- choices()]), Options).

%% --- namespaces ---

namespace(Req) ->
    case field(<<"namespace">>, Req) of
        {ok, Name} when is_binary(Name) -> {ok, Name};
        _ -> error
    end.

open(Id, Req, #{spaces := Spaces, hello := Hello} = S) ->
    case {namespace(Req), options(Req, Hello)} of
        {error, _} -> fault(S, Id, "open without a namespace (a string)", []);
        {_, {fault, Why}} -> fault(S, Id, "~ts", [Why]);
        {{ok, Name}, {ok, Options}} ->
            Opts = effective(Options),
            Pid = case Spaces of
                      #{Name := {Existing, _}} -> Existing;
                      _ -> spawn_link(fun() -> space(#{name => Name, data => #{},
                                                       writer => maps:get(writer, S),
                                                       options => Opts}) end)
                  end,
            Pid ! {open, Id, Opts},
            S#{spaces := Spaces#{Name => {Pid, open}}}
    end.

close(Id, Req, #{spaces := Spaces} = S) ->
    case namespace(Req) of
        {ok, Name} when is_map_key(Name, Spaces) ->
            {Pid, _} = maps:get(Name, Spaces),
            Pid ! {close, Id},
            S#{spaces := Spaces#{Name := {Pid, closed}}};
        {ok, Name} -> fault(S, Id, "unknown namespace '~ts' (never opened)", [show(Name)]);
        error -> fault(S, Id, "close without a namespace (a string)", [])
    end.

discard(Id, Req, #{spaces := Spaces} = S) ->
    case namespace(Req) of
        {ok, Name} when is_map_key(Name, Spaces) ->
            {Pid, _} = maps:get(Name, Spaces),
            Pid ! {discard, Id},
            S#{spaces := maps:remove(Name, Spaces)};
        {ok, _} ->
            %% Nothing stored under that name (never opened here, or already discarded):
            %% dropping it is done.
            send(S, ok_line(Id, null)),
            S;
        error -> fault(S, Id, "discard without a namespace (a string)", [])
    end.

%% --- call ---

call(Id, Req, #{spaces := Spaces} = S) ->
    case namespace(Req) of
        error -> fault(S, Id, "call without a namespace (a string)", []);
        {ok, Name} ->
            case Spaces of
                #{Name := {Pid, open}} -> call(Id, Pid, Req, S);
                #{Name := {_, closed}} -> fault(S, Id, "namespace '~ts' is closed", [show(Name)]);
                _ -> fault(S, Id, "unknown namespace '~ts' (never opened)", [show(Name)])
            end
    end.

call(Id, Pid, Req, S) ->
    Op = field(<<"op">>, Req),
    case {Op, lists:keyfind(element(2, Op), 1, ops())} of
        {{ok, _}, {_, Atom, Names}} ->
            case call_args(Req, Names) of
                {ok, Args, Now, Dead} ->
                    Pid ! {call, Id, Atom, Args, Now, Dead},
                    S;
                {fault, Why} -> fault(S, Id, "~ts", [Why])
            end;
        {{ok, Name}, false} -> fault(S, Id, "unknown op '~ts'", [show(Name)]);
        {error, _} -> fault(S, Id, "call without an op", [])
    end.

call_args(Req, Names) ->
    try
        Given = case field(<<"args">>, Req) of
                    {ok, {obj, Ps}} -> Ps;
                    _ -> throw("call without args (an object)")
                end,
        [throw(io_lib:format("unexpected argument '~ts'", [show(K)]))
         || {K, _} <- Given, not lists:member(K, Names)],
        Args = maps:from_list(
                 [case member(N, Given) of
                      {ok, V} ->
                          decodable(V) orelse
                              throw(io_lib:format("argument '~ts' cannot be decoded", [N])),
                          {binary_to_atom(N), V};
                      error -> throw(io_lib:format("missing argument '~ts'", [N]))
                  end || N <- Names]),
        Now = case field(<<"now">>, Req) of
                  {ok, T} when is_integer(T) -> T;
                  _ -> throw("call without now (integer ms)")
              end,
        Dead = case field(<<"dead">>, Req) of
                   {ok, L} when is_list(L) -> L;
                   {ok, null} -> [];
                   error -> [];
                   _ -> throw("dead must be a list of owners")
               end,
        {ok, Args, Now, Dead}
    catch
        throw:Why -> {fault, Why}
    end.

%% ---------------------------------------------------------------------------------------------
%% A namespace: one process, its records in its state, one call at a time
%% ---------------------------------------------------------------------------------------------

space(#{writer := W, data := Data, options := Opts} = St) ->
    receive
        {call, Id, Op, Args, Now, Dead} ->
            Ctx = #{now => Now, dead => Dead, options => Opts},
            {Line, Data1} =
                try
                    case run(Op, Args, Ctx, Data) of
                        {ok, Value, D1} -> {iolist_to_binary(ok_line(Id, Value)), D1};
                        {error, Code, Detail} ->
                            {iolist_to_binary(error_line(Id, Code, iolist_to_binary(Detail))),
                             Data}
                    end
                catch
                    Class:Reason:Stack ->
                        log("~p ~p crashed: ~p:~p ~p", [Id, Op, Class, Reason, Stack]),
                        {reply_line(Id, <<"fault">>, <<"internal error in the adapter">>), Data}
                end,
            W ! {line, Line},
            space(St#{data := Data1});
        {open, Id, NewOpts} ->
            W ! {line, ok_line(Id, null)},
            space(St#{options := NewOpts});
        {close, Id} ->
            W ! {line, ok_line(Id, null)},
            space(St);
        {discard, Id} ->
            W ! {line, ok_line(Id, null)},
            ok;
        {sync, From, Ref} ->
            From ! {Ref, done},
            space(St)
    end.

%% ---------------------------------------------------------------------------------------------
%% The ledger
%% ---------------------------------------------------------------------------------------------

option(Name, #{options := Opts}) -> maps:get(Name, Opts).

run(Op, Args, Ctx, Data) ->
    case admitted(Op, Args, option(<<"empty_strings">>, Ctx) =:= <<"refused">>) of
        true -> op(Op, Args, Ctx, Data);
        false -> {error, argument_error(Op), [atom_to_list(Op), ": arguments its guard excludes"]}
    end.

%% The guard of each operation's head, checked before anything is read.
admitted(create, #{invocation_id := Id, metadata := M, checkpoint := C}, NoEmpty) ->
    is_binary(Id) andalso not (NoEmpty andalso Id =:= <<>>)
        andalso mapping(M) andalso mapping(C);
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
        andalso mapping(C);
admitted(finish, #{invocation_id := Id, owner_token := T, phase := P, checkpoint := C,
                   now_ms := N}, _) ->
    is_binary(Id) andalso token(T) andalso is_integer(N) andalso mapping(C)
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
    case mapping(V) of
        true -> <<"mapping">>;
        false -> <<"other">>
    end.

view(#inv{} = Inv, #{now := Now} = Ctx) ->
    Owned = Inv#inv.token =/= null andalso
        (not (option(<<"owned_view">>, Ctx) =:= <<"live_lease">> orelse bug(owned_means_live))
         orelse Now < Inv#inv.lease_until),
    {obj, [{<<"__type__">>, <<"Invocation">>},
           {<<"invocation_id">>, Inv#inv.id},
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
           {<<"updated_at">>, Inv#inv.updated_at}]}.

%% ---------------------------------------------------------------------------------------------
%% Wire values
%% ---------------------------------------------------------------------------------------------
%%
%% Decoded JSON: null | true | false | integer() | {float, Text} (the number's own text, so
%% 1.0, -0.0 and 1e300 come back exactly) | binary() (a string, UTF-8; a lone surrogate of a
%% \u escape is kept as its 3-byte form) | [Value] | {obj, [{Key, Value}]} (keys in order).
%% Tagged codec values ({"__tuple__": ...} and the like) are objects like any other here.

-define(ONE_KEY_TAGS, [<<"__tuple__">>, <<"__bytes__">>, <<"__float__">>, <<"__opaque__">>,
                       <<"__forged_value__">>, <<"__ref__">>, <<"__forged__">>]).

%% Is it a mapping once the kit's codec reads it? A plain object or {"__dict__": pairs}; not a
%% one-key tagged value, not a value class ({"__type__": name, ...}).
mapping({obj, [{<<"__dict__">>, _}]}) -> true;
mapping({obj, [{Tag, _}]}) when Tag =/= <<"__type__">> -> not lists:member(Tag, ?ONE_KEY_TAGS);
mapping({obj, Pairs}) ->
    case member(<<"__type__">>, Pairs) of
        {ok, Name} -> Name =:= null;
        error -> true
    end;
mapping(_) -> false.

%% The value under a string key of a mapping; null when absent (metadata_keys=optional).
lookup(Key, {obj, [{<<"__dict__">>, Pairs}]}) ->
    case [V || [K, V] <- Pairs, K =:= Key] of
        [] -> null;
        Found -> lists:last(Found)
    end;
lookup(Key, {obj, Pairs}) ->
    case member(Key, Pairs) of
        {ok, V} -> V;
        error -> null
    end.

%% The last value under Key in an object's pairs (a JSON reader keeps the last duplicate).
member(Key, Pairs) -> member(Key, Pairs, error).

member(Key, [{Key, V} | Rest], _) -> member(Key, Rest, {ok, V});
member(Key, [_ | Rest], Found) -> member(Key, Rest, Found);
member(_, [], Found) -> Found.

%% A field of a request (the map of its fields, see line/2).
field(Key, Req) ->
    case Req of
        #{Key := V} -> {ok, V};
        _ -> error
    end.

%% Could the kit's codec decode it? (Tagged values must hold what their tag says.)
decodable(L) when is_list(L) -> lists:all(fun decodable/1, L);
decodable({obj, [{<<"__tuple__">>, Items}]}) -> is_list(Items) andalso decodable(Items);
decodable({obj, [{<<"__dict__">>, Pairs}]}) ->
    is_list(Pairs) andalso
        lists:all(fun([K, V]) -> hashable(K) andalso decodable(K) andalso decodable(V);
                     (_) -> false
                  end, Pairs);
decodable({obj, [{<<"__bytes__">>, Hex}]}) ->
    is_binary(Hex) andalso byte_size(Hex) rem 2 =:= 0 andalso
        lists:all(fun(C) -> (C >= $0 andalso C =< $9) orelse (C >= $a andalso C =< $f)
                                orelse (C >= $A andalso C =< $F)
                  end, binary_to_list(Hex));
decodable({obj, [{Tag, Text}]}) when Tag =/= <<"__type__">>, Tag =/= <<"__dict__">> ->
    case lists:member(Tag, ?ONE_KEY_TAGS) of
        true -> is_binary(Text);
        false -> decodable(Text)
    end;
decodable({obj, Pairs}) ->
    case member(<<"__type__">>, Pairs) of
        {ok, <<"Invocation">>} ->
            Fields = [K || {K, _} <- Pairs, K =/= <<"__type__">>],
            lists:sort(Fields) =:= lists:sort(invocation_fields())
                andalso lists:all(fun({_, V}) -> decodable(V) end, Pairs);
        {ok, null} -> lists:all(fun({_, V}) -> decodable(V) end, Pairs);
        {ok, _} -> false;
        error -> lists:all(fun({_, V}) -> decodable(V) end, Pairs)
    end;
decodable(_) -> true.

hashable(L) when is_list(L) -> false;
hashable({obj, [{<<"__tuple__">>, Items}]}) -> is_list(Items) andalso lists:all(fun hashable/1, Items);
hashable({obj, _} = V) -> not mapping(V) andalso member(<<"__type__">>, element(2, V)) =:= error;
hashable(_) -> true.

invocation_fields() ->
    [<<"invocation_id">>, <<"workflow_id">>, <<"workflow_version">>, <<"kind">>,
     <<"checkpoint">>, <<"phase">>, <<"outcome">>, <<"owned">>, <<"owner">>,
     <<"lease_until">>, <<"revision">>, <<"created_at">>, <<"updated_at">>].

%% A value for a fault, a detail or a log line: a string as itself, anything else as JSON.
show(V) when is_binary(V) ->
    case unicode:characters_to_binary(V) of
        V -> V;
        _ -> iolist_to_binary(encode(V))
    end;
show(V) -> iolist_to_binary(encode(V)).

%% ---------------------------------------------------------------------------------------------
%% JSON: decoder
%% ---------------------------------------------------------------------------------------------

%% The reader never hands a binary back to its caller: each step tail-calls the next with the
%% rest of the input (which starts at byte offset Pos of the whole line, Line), so the runtime
%% scans the line in one pass without building a sub-binary per token. What is being built waits on
%% an explicit stack: {array, Items}, {key, Pairs} (an object awaiting its next key's colon),
%% {object, Key, Pairs} (awaiting Key's value). Strings and numbers are slices of Line.
decode(Line) ->
    try value(Line, Line, 0, []) of
        V -> {ok, V}
    catch
        throw:bad -> error;
        error:_ -> error
    end.

-define(IS_WS(C), (C =:= $\s orelse C =:= $\t orelse C =:= $\n orelse C =:= $\r)).
-define(IS_PLAIN(C), (C >= 16#20 andalso C =/= $" andalso C =/= $\\)).

value(<<C, R/binary>>, Line, Pos, Stack) when ?IS_WS(C) -> value(R, Line, Pos + 1, Stack);
value(<<${, R/binary>>, Line, Pos, Stack) -> object(R, Line, Pos + 1, Stack);
value(<<$[, R/binary>>, Line, Pos, Stack) -> array(R, Line, Pos + 1, Stack);
value(<<$", R/binary>>, Line, Pos, Stack) -> string(R, Line, Pos + 1, 0, Stack);
value(<<"true", R/binary>>, Line, Pos, Stack) -> next(R, Line, Pos + 4, true, Stack);
value(<<"false", R/binary>>, Line, Pos, Stack) -> next(R, Line, Pos + 5, false, Stack);
value(<<"null", R/binary>>, Line, Pos, Stack) -> next(R, Line, Pos + 4, null, Stack);
value(<<$-, R/binary>>, Line, Pos, Stack) -> number_int(R, Line, Pos, 1, Stack);
value(<<C, _/binary>> = B, Line, Pos, Stack) when C >= $0, C =< $9 ->
    number_int(B, Line, Pos, 0, Stack);
value(_, _, _, _) -> throw(bad).

%% Just after "{": "}" (empty) or the first key.
object(<<C, R/binary>>, Line, Pos, Stack) when ?IS_WS(C) -> object(R, Line, Pos + 1, Stack);
object(<<$}, R/binary>>, Line, Pos, Stack) -> next(R, Line, Pos + 1, {obj, []}, Stack);
object(<<$", R/binary>>, Line, Pos, Stack) -> string(R, Line, Pos + 1, 0, [{key, []} | Stack]);
object(_, _, _, _) -> throw(bad).

%% Just after "," in an object: the next key.
key(<<C, R/binary>>, Line, Pos, Stack) when ?IS_WS(C) -> key(R, Line, Pos + 1, Stack);
key(<<$", R/binary>>, Line, Pos, Stack) -> string(R, Line, Pos + 1, 0, Stack);
key(_, _, _, _) -> throw(bad).

%% Just after a key: ":" and its value.
colon(<<C, R/binary>>, Line, Pos, Stack) when ?IS_WS(C) -> colon(R, Line, Pos + 1, Stack);
colon(<<$:, R/binary>>, Line, Pos, Stack) -> value(R, Line, Pos + 1, Stack);
colon(_, _, _, _) -> throw(bad).

%% Just after "[": "]" (empty) or the first item.
array(<<C, R/binary>>, Line, Pos, Stack) when ?IS_WS(C) -> array(R, Line, Pos + 1, Stack);
array(<<$], R/binary>>, Line, Pos, Stack) -> next(R, Line, Pos + 1, [], Stack);
array(B, Line, Pos, Stack) -> value(B, Line, Pos, [{array, []} | Stack]).

%% A value is complete: it goes where the stack says.
next(B, Line, Pos, V, [{key, Pairs} | Stack]) -> colon(B, Line, Pos, [{object, V, Pairs} | Stack]);
next(B, Line, Pos, V, [{object, Key, Pairs} | Stack]) ->
    after_pair(B, Line, Pos, [{Key, V} | Pairs], Stack);
next(B, Line, Pos, V, [{array, Items} | Stack]) -> after_item(B, Line, Pos, [V | Items], Stack);
next(B, _, _, V, []) -> trailing(B), V.

after_pair(<<C, R/binary>>, Line, Pos, Pairs, Stack) when ?IS_WS(C) ->
    after_pair(R, Line, Pos + 1, Pairs, Stack);
after_pair(<<$,, R/binary>>, Line, Pos, Pairs, Stack) ->
    key(R, Line, Pos + 1, [{key, Pairs} | Stack]);
after_pair(<<$}, R/binary>>, Line, Pos, Pairs, Stack) ->
    next(R, Line, Pos + 1, {obj, lists:reverse(Pairs)}, Stack);
after_pair(_, _, _, _, _) -> throw(bad).

after_item(<<C, R/binary>>, Line, Pos, Items, Stack) when ?IS_WS(C) ->
    after_item(R, Line, Pos + 1, Items, Stack);
after_item(<<$,, R/binary>>, Line, Pos, Items, Stack) ->
    value(R, Line, Pos + 1, [{array, Items} | Stack]);
after_item(<<$], R/binary>>, Line, Pos, Items, Stack) ->
    next(R, Line, Pos + 1, lists:reverse(Items), Stack);
after_item(_, _, _, _, _) -> throw(bad).

%% Only whitespace may follow the value of the line.
trailing(<<C, R/binary>>) when ?IS_WS(C) -> trailing(R);
trailing(<<>>) -> ok;
trailing(_) -> throw(bad).

%% -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? : an integer without fraction or exponent,
%% otherwise {float, its text}. Start is where the number (its sign) begins; Len counts the
%% bytes so far.
number_int(<<$0, R/binary>>, Line, Start, Len, Stack) ->
    number_frac(R, Line, Start, Len + 1, Stack);
number_int(<<C, R/binary>>, Line, Start, Len, Stack) when C >= $1, C =< $9 ->
    number_digits(R, Line, Start, Len + 1, Stack);
number_int(_, _, _, _, _) -> throw(bad).

number_digits(<<C, R/binary>>, Line, Start, Len, Stack) when C >= $0, C =< $9 ->
    number_digits(R, Line, Start, Len + 1, Stack);
number_digits(B, Line, Start, Len, Stack) -> number_frac(B, Line, Start, Len, Stack).

number_frac(<<$., C, R/binary>>, Line, Start, Len, Stack) when C >= $0, C =< $9 ->
    fraction(R, Line, Start, Len + 2, Stack);
number_frac(<<$., _/binary>>, _, _, _, _) -> throw(bad);
number_frac(<<E, _/binary>> = B, Line, Start, Len, Stack) when E =:= $e; E =:= $E ->
    exponent(B, Line, Start, Len, Stack);
number_frac(B, Line, Start, Len, Stack) ->
    next(B, Line, Start + Len, binary_to_integer(binary_part(Line, Start, Len)), Stack).

fraction(<<C, R/binary>>, Line, Start, Len, Stack) when C >= $0, C =< $9 ->
    fraction(R, Line, Start, Len + 1, Stack);
fraction(<<E, _/binary>> = B, Line, Start, Len, Stack) when E =:= $e; E =:= $E ->
    exponent(B, Line, Start, Len, Stack);
fraction(B, Line, Start, Len, Stack) -> float_text(B, Line, Start, Len, Stack).

exponent(<<_, S, C, R/binary>>, Line, Start, Len, Stack)
  when S =:= $+ orelse S =:= $-, C >= $0, C =< $9 ->
    exponent_digits(R, Line, Start, Len + 3, Stack);
exponent(<<_, C, R/binary>>, Line, Start, Len, Stack) when C >= $0, C =< $9 ->
    exponent_digits(R, Line, Start, Len + 2, Stack);
exponent(_, _, _, _, _) -> throw(bad).

exponent_digits(<<C, R/binary>>, Line, Start, Len, Stack) when C >= $0, C =< $9 ->
    exponent_digits(R, Line, Start, Len + 1, Stack);
exponent_digits(B, Line, Start, Len, Stack) -> float_text(B, Line, Start, Len, Stack).

float_text(B, Line, Start, Len, Stack) ->
    next(B, Line, Start + Len, {float, binary_part(Line, Start, Len)}, Stack).

%% A string after its opening quote: its text starts at offset Pos of Line, N plain bytes of
%% it are read so far. Plain characters are anything but a quote, a backslash and a control character (which a
%% JSON string may not hold unescaped); a string without escapes is a slice of Line.
string(<<C, R/binary>>, Line, Pos, N, Stack) when ?IS_PLAIN(C) ->
    string(R, Line, Pos, N + 1, Stack);
string(<<$", R/binary>>, Line, Pos, N, Stack) ->
    next(R, Line, Pos + N + 1, binary_part(Line, Pos, N), Stack);
string(<<$\\, R/binary>>, Line, Pos, N, Stack) ->
    {Text, Rest} = escaped_string(R, [binary_part(Line, Pos, N)]),
    next(Rest, Line, byte_size(Line) - byte_size(Rest), Text, Stack);
string(_, _, _, _, _) -> throw(bad).

%% The rest of a string with escapes (just after a backslash), put together from pieces (the
%% last first in Acc); the string and what follows its closing quote.
escaped_string(B, Acc) ->
    {Char, R} = escape(B),
    pieces(R, R, 0, [Char | Acc]).

pieces(<<C, R/binary>>, B, N, Acc) when ?IS_PLAIN(C) -> pieces(R, B, N + 1, Acc);
pieces(<<$", R/binary>>, B, N, Acc) ->
    {iolist_to_binary(lists:reverse(Acc, [binary_part(B, 0, N)])), R};
pieces(<<$\\, R/binary>>, B, N, Acc) -> escaped_string(R, [binary_part(B, 0, N) | Acc]);
pieces(_, _, _, _) -> throw(bad).

escape(<<$", R/binary>>) -> {<<$">>, R};
escape(<<$\\, R/binary>>) -> {<<$\\>>, R};
escape(<<$/, R/binary>>) -> {<<$/>>, R};
escape(<<$b, R/binary>>) -> {<<8>>, R};
escape(<<$f, R/binary>>) -> {<<12>>, R};
escape(<<$n, R/binary>>) -> {<<10>>, R};
escape(<<$r, R/binary>>) -> {<<13>>, R};
escape(<<$t, R/binary>>) -> {<<9>>, R};
escape(<<$u, H:4/binary, R/binary>>) ->
    case hex4(H) of
        High when High >= 16#D800, High =< 16#DBFF ->
            case R of
                <<$\\, $u, L:4/binary, R2/binary>> ->
                    case hex4(L) of
                        Low when Low >= 16#DC00, Low =< 16#DFFF ->
                            {utf8(16#10000 + ((High - 16#D800) bsl 10) + (Low - 16#DC00)), R2};
                        _ -> {utf8(High), R}
                    end;
                _ -> {utf8(High), R}
            end;
        Code -> {utf8(Code), R}
    end;
escape(_) -> throw(bad).

hex4(H) ->
    lists:all(fun(C) -> (C >= $0 andalso C =< $9) orelse (C >= $a andalso C =< $f)
                            orelse (C >= $A andalso C =< $F) end, binary_to_list(H))
        orelse throw(bad),
    binary_to_integer(H, 16).

%% UTF-8 of a code point, surrogates included (their 3-byte form), so every string survives.
utf8(C) when C < 16#80 -> <<C>>;
utf8(C) when C < 16#800 -> <<(2#110 bsl 5 bor (C bsr 6)), (2#10 bsl 6 bor (C band 63))>>;
utf8(C) when C < 16#10000 ->
    <<(2#1110 bsl 4 bor (C bsr 12)), (2#10 bsl 6 bor ((C bsr 6) band 63)),
      (2#10 bsl 6 bor (C band 63))>>;
utf8(C) ->
    <<(2#11110 bsl 3 bor (C bsr 18)), (2#10 bsl 6 bor ((C bsr 12) band 63)),
      (2#10 bsl 6 bor ((C bsr 6) band 63)), (2#10 bsl 6 bor (C band 63))>>.

%% ---------------------------------------------------------------------------------------------
%% JSON: encoder (ASCII output: every other character as a \u escape)
%% ---------------------------------------------------------------------------------------------

encode(null) -> <<"null">>;
encode(true) -> <<"true">>;
encode(false) -> <<"false">>;
encode(I) when is_integer(I) -> integer_to_binary(I);
encode({float, Text}) -> Text;
encode(S) when is_binary(S) ->
    case plain_ascii(S) of
        true -> [$", S, $"];
        false -> [$", escaped(S, 0, S, []), $"]
    end;
encode(L) when is_list(L) -> [$[, join([encode(V) || V <- L]), $]];
encode({obj, Pairs}) ->
    [${, join([[encode(K), $:, encode(V)] || {K, V} <- Pairs]), $}].

plain_ascii(<<C, R/binary>>) when C >= 16#20, C < 16#7F, C =/= $", C =/= $\\ -> plain_ascii(R);
plain_ascii(<<>>) -> true;
plain_ascii(_) -> false.

join([]) -> [];
join([H | T]) -> [H | [[$,, X] || X <- T]].

%% Walk S; runs of plain ASCII are copied as slices of the original binary.
escaped(<<>>, N, Orig, Acc) -> lists:reverse([binary:part(Orig, byte_size(Orig) - N, N) | Acc]);
escaped(<<C, R/binary>>, N, Orig, Acc) when C >= 16#20, C < 16#7F, C =/= $", C =/= $\\ ->
    escaped(R, N + 1, Orig, Acc);
escaped(B, N, Orig, Acc) ->
    Start = byte_size(Orig) - byte_size(B) - N,
    Run = binary:part(Orig, Start, N),
    {Esc, R} = escape_one(B),
    escaped(R, 0, Orig, [Esc, Run | Acc]).

escape_one(<<$", R/binary>>) -> {<<"\\\"">>, R};
escape_one(<<$\\, R/binary>>) -> {<<"\\\\">>, R};
escape_one(<<$\n, R/binary>>) -> {<<"\\n">>, R};
escape_one(<<$\r, R/binary>>) -> {<<"\\r">>, R};
escape_one(<<$\t, R/binary>>) -> {<<"\\t">>, R};
escape_one(<<2#110:3, A:5, 2#10:2, B:6, R/binary>>) -> {u_escape((A bsl 6) bor B), R};
escape_one(<<2#1110:4, A:4, 2#10:2, B:6, 2#10:2, C:6, R/binary>>) ->
    {u_escape((A bsl 12) bor (B bsl 6) bor C), R};
escape_one(<<2#11110:5, A:3, 2#10:2, B:6, 2#10:2, C:6, 2#10:2, D:6, R/binary>>) ->
    {u_escape((A bsl 18) bor (B bsl 12) bor (C bsl 6) bor D), R};
escape_one(<<C, R/binary>>) -> {u_escape(C), R}.   % a control character, or a stray byte

u_escape(C) when C >= 16#10000 ->
    V = C - 16#10000,
    [u_escape(16#D800 + (V bsr 10)), u_escape(16#DC00 + (V band 16#3FF))];
u_escape(C) ->
    Hex = string:lowercase(integer_to_binary(C, 16)),
    [<<"\\u">>, binary:copy(<<"0">>, 4 - byte_size(Hex)), Hex].
