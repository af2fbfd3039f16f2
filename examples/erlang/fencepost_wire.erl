%% fencepost_wire: the plumbing of a fencepost-wire/1 adapter in Erlang, so that an adapter is
%% its store's calls and its value mapping only (docs/protocol.md is the protocol).
%%
%% An adapter is a callback module of this behaviour; serve/1,2 runs it until shutdown:
%%
%%   -export([contract/0, name/0, version/0, capabilities/0, choices/0, operations/0,
%%            value_classes/0, open/3, call/4]).
%%   contract() -> <<"adk-ledger">>.
%%   operations() -> [{get, [invocation_id]}, ...].
%%   open(_Namespace, _Options, new) -> #{};          % a namespace's first open: empty data
%%   open(_Namespace, _Options, Data) -> Data.        % open again (durable): the same data
%%   call(get, #{invocation_id := Id}, _Context, Records) ->
%%       case Records of
%%           #{Id := Record} -> {ok, view(Record), Records};
%%           _ -> {error, <<"not_found">>, ["no invocation ", fencepost_wire:show(Id)]}
%%       end.
%%   main(_) -> fencepost_wire:serve(?MODULE).
%%
%% What it owns, so no adapter writes it again:
%%   - stdin and stdout as ports on file descriptors 0 and 1 (not the io server, whose group
%%     leader costs a round of messages per line), the line loop, and lines longer than the
%%     port's buffer joined back together;
%%   - the exact JSON codec (decode/1, encode/1) and the check that arguments are values the
%%     kit's codec could decode (tagged values holding what their tag says, value classes the
%%     adapter declares with exactly their fields);
%%   - hello (protocol, contract, name, version, capabilities), the options of hello and open
%%     checked against the adapter's documented choices, and faults for every malformed or
%%     unexpected request, with the texts the protocol asks for;
%%   - namespaces: one process per namespace holds the adapter's data for it and runs its
%%     calls one after another, so each call is atomic, while calls on different namespaces
%%     run in parallel (answers may come out of order). An `open` while the namespace is open
%%     is another connection to the same data; `close` ends the last one opened, and with the
%%     last connection the namespace is closed: the process and its data stay (durable for
%%     the life of the OS process); `discard` ends it;
%%   - one writer process, the only one to write to stdout: one whole line per reply;
%%   - shutdown and end of input: every namespace answers what it was sent, the writer writes
%%     it all, the node exits with status 0.
%%
%% The adapter owns the contract: which operations and arguments exist, what each call does to
%% its data, which error each refusal is. Nothing here knows a contract's rules.
%%
%% Values. Arguments reach call/4 in their wire form, which keeps every value exactly as the
%% kit wrote it:
%%
%%   null | true | false | integer() | {float, Text} | binary() | [Value] | {obj, [{Key, Value}]}
%%
%% A float is kept as the text of its number: OTP 25 has no nan or infinity, and compares 0.0
%% and -0.0 as equal, so `1.0`, `-0.0` and `1e300` come back unchanged only as text. A string
%% is a UTF-8 binary (a lone surrogate of a \u escape is kept in its 3-byte form). An object
%% keeps its pairs in order, and tagged values (`{"__tuple__": ...}`, `{"__bytes__": ...}`,
%% `{"__type__": ...}`) are objects like any other, so whatever a store does not interpret
%% (a checkpoint, an outcome) is written back as it came. is_mapping/1 and lookup/2 read them;
%% value/2, opaque/1 and exact_float/1 build them; encode/1 writes every non-ASCII character
%% as a \u escape.
%%
%% Used from an escript, with no build step: the escript compiles this file from its own
%% directory when it starts and loads the binary (compile:file/2 with [binary, return_errors],
%% then code:load_binary/3; see examples/erlang/adk_ledger.escript). Why this rather than the
%% other ways to share Erlang code with an escript: an -include'd .hrl would paste the helper
%% into each script, so it could not be a module with a behaviour, nor be used from rebar3; an
%% escript archive or a committed .beam needs a build step, ties the repository to one OTP
%% release and can drift from the source. Compiling at start writes no file (a read-only
%% checkout and a clean clone work alike), finds the source wherever the escript is run from,
%% and takes about 0.2 s, well inside the 20 s the kit allows for hello. In a rebar3
%% project the file is an ordinary module under src/.
%%
%% The escript must start the node with `-noinput` (its `%%!` line), so that the node's own
%% user process does not read stdin too.

-module(fencepost_wire).

-export([serve/1, serve/2]).
-export([decode/1, encode/1]).
-export([is_mapping/1, lookup/2, value/2, opaque/1, exact_float/1, show/1, log/2]).
-export_type([value/0, options/0, context/0, answer/0]).

-define(PROTOCOL, <<"fencepost-wire/1">>).
-define(LINE_CHUNK, 65536).   % bytes of a line the stdin port delivers at a time
-define(INTERNAL, <<"internal error in the adapter">>).
-define(ONE_KEY_TAGS, [<<"__tuple__">>, <<"__bytes__">>, <<"__float__">>, <<"__opaque__">>,
                       <<"__forged_value__">>, <<"__ref__">>, <<"__forged__">>]).

-type value() :: null | boolean() | integer() | {float, binary()} | binary() | [value()]
               | {obj, [{binary(), value()}]}.
%% A namespace's options: every documented choice's value, by name (all strings).
-type options() :: #{binary() => binary()}.
%% What a call is given besides its arguments: its namespace, the call's `now` (integer ms),
%% the owners the kit reports `dead` at this call (as values), the namespace's options.
-type context() :: #{namespace := binary(), now := integer(), dead := [value()],
                     options := options()}.
%% A call's answer. Data is the namespace's data after the call; an error leaves it unchanged
%% unless it is given. A fault quotes a refusal the contract has no code for.
-type answer() :: {ok, value(), Data :: term()}
                | {error, Code :: binary(), Detail :: unicode:chardata()}
                | {error, Code :: binary(), Detail :: unicode:chardata(), Payload :: value()}
                | {error, Code :: binary(), Detail :: unicode:chardata(), Payload :: value(),
                   Data :: term()}
                | {fault, Reason :: unicode:chardata()}.

%% The contract the adapter implements, as hello names it (`<<"adk-ledger">>`).
-callback contract() -> binary().
%% The adapter's name and version, answered to hello.
-callback name() -> binary().
-callback version() -> binary().
%% The contract's capabilities this adapter declares (`<<"durable">>`, `<<"concurrency">>`...).
-callback capabilities() -> [binary()].
%% Every documented choice of the contract: its name and the values this store follows, the
%% contract's default first; or `{setting, Default}` for a setting (a positive integer in ASCII
%% digits, or `infinity`). An option outside these is answered with a fault naming it.
-callback choices() -> [{binary(), [binary()] | {setting, binary()}}].
%% The operations and their arguments, by name. A call's op and argument names are matched
%% against these; its arguments reach call/4 as a map with these atoms as keys.
-callback operations() -> [{atom(), [atom()]}].
%% The contract's value classes and their fields: a `{"__type__": Name}` argument must be one
%% of them, with exactly these fields.
-callback value_classes() -> [{binary(), [binary()]}].
%% A namespace is opened: its data, made from `new` the first time, from what it held before
%% when it is opened again after close. Runs in the namespace's process.
-callback open(Namespace :: binary(), options(), Data :: new | term()) -> term().
%% One operation on a namespace's data. Runs in the namespace's process, one call at a time.
-callback call(Op :: atom(), Args :: #{atom() => value()}, context(), Data :: term()) ->
    answer().

%% ---------------------------------------------------------------------------------------------
%% Start
%% ---------------------------------------------------------------------------------------------

%% Serve the adapter Module on stdin and stdout until shutdown or end of input, then halt
%% with status 0. Options: `log_prefix`, the name stderr lines start with (the module's name
%% by default).
-spec serve(module()) -> no_return().
serve(Module) -> serve(Module, #{}).

-spec serve(module(), #{log_prefix => string()}) -> no_return().
serve(Module, Options) ->
    %% A crash of the whole node must not leave an erl_crash.dump in the kit's directory.
    os:putenv("ERL_CRASH_DUMP_SECONDS", "0"),
    persistent_term:put({?MODULE, log_prefix},
                        maps:get(log_prefix, Options, atom_to_list(Module))),
    %% stdin is a port on fd 0, read here: its lines arrive as messages ({eol, Bytes}, or
    %% {noeol, Bytes} for a piece of a line longer than the port's buffer or a last line
    %% without a newline). It is watched, not linked: should reading fail, the requests read
    %% so far are still answered, as at end of input. stdout is the writer's own port.
    Port = open_port({fd, 0, 0}, [in, binary, {line, ?LINE_CHUNK}, eof]),
    unlink(Port),
    Watch = monitor(port, Port),
    Writer = spawn_link(fun() -> writer(open_port({fd, 1, 1}, [out, binary])) end),
    Ops = maps:from_list([{atom_to_binary(Op), {Op, [{atom_to_binary(A), A} || A <- Args]}}
                          || {Op, Args} <- Module:operations()]),
    Classes = maps:from_list([{N, lists:sort(Fs)} || {N, Fs} <- Module:value_classes()]),
    loop(#{module => Module, ops => Ops, classes => Classes, writer => Writer, port => Port,
           watch => Watch, hello => #{}, spaces => #{}, draining => #{}}, []).

%% A line on stderr, the adapter's log: `PREFIX: text`.
-spec log(io:format(), [term()]) -> ok.
log(Format, Args) ->
    Prefix = persistent_term:get({?MODULE, log_prefix}, "fencepost_wire"),
    io:format(standard_error, "~ts: " ++ Format ++ "~n", [Prefix | Args]).

%% ---------------------------------------------------------------------------------------------
%% The writer: one process owns stdout, every reply is one write of one whole line
%% ---------------------------------------------------------------------------------------------

%% Port: stdout (fd 1), opened by the writer, so nothing else writes to it.
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
            stop(S, eof);
        {'DOWN', Ref, process, _, _} ->
            %% A discarded namespace has answered what it was sent, and ended.
            loop(S#{draining := maps:remove(Ref, maps:get(draining, S))}, Pending)
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
        {ok, <<"open">>} -> open_namespace(Id, Req, S);
        {ok, <<"close">>} -> close_namespace(Id, Req, S);
        {ok, <<"discard">>} -> discard_namespace(Id, Req, S);
        {ok, <<"call">>} -> call_namespace(Id, Req, S);
        {ok, <<"shutdown">>} -> stop(S, Id);
        {ok, Type} when is_binary(Type) -> fault(S, Id, "unknown type '~ts'", [show(Type)]);
        _ -> fault(S, Id, "request has no type", [])
    end.

%% A field of a request (the map of its fields, see line/2).
field(Key, Req) ->
    case Req of
        #{Key := V} -> {ok, V};
        _ -> error
    end.

%% shutdown (its id) or end of input: let every namespace answer what it was sent (a discarded
%% one too, which may still be answering calls sent before its discard), answer the shutdown,
%% let the writer write it all, exit 0.
stop(#{spaces := Spaces, draining := Draining} = S, Why) ->
    [sync(Pid) || {Pid, _} <- maps:values(Spaces)],
    [sync(Pid) || Pid <- maps:values(Draining)],
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

%% ---------------------------------------------------------------------------------------------
%% hello and options
%% ---------------------------------------------------------------------------------------------

hello(Id, Req, #{module := M} = S) ->
    Contract = M:contract(),
    case {field(<<"protocol">>, Req), field(<<"contract">>, Req)} of
        {{ok, ?PROTOCOL}, {ok, Contract}} ->
            case options(Req, #{}, M) of
                {ok, Options} ->
                    send(S, ok_line(Id, {obj, [{<<"name">>, M:name()},
                                               {<<"version">>, M:version()},
                                               {<<"capabilities">>, M:capabilities()}]})),
                    S#{hello := Options};
                {fault, Why} -> fault(S, Id, "~ts", [Why])
            end;
        {{ok, ?PROTOCOL}, Given} ->
            fault(S, Id, "this adapter implements the contract '~ts' only, not ~ts",
                  [Contract, shown(Given)]);
        {Protocol, _} ->
            fault(S, Id, "this adapter speaks fencepost-wire/1 only, not ~ts", [shown(Protocol)])
    end.

shown({ok, V}) -> show(V);
shown(error) -> "(none given)".

%% The options of a request ("options": {name: value}) laid over Base: every name must be a
%% documented choice and every value one this store follows.
options(Req, Base, M) ->
    case field(<<"options">>, Req) of
        error -> {ok, Base};
        {ok, null} -> {ok, Base};
        {ok, {obj, Given}} -> options_over(Given, Base, M:choices(), M);
        {ok, Other} -> {fault, io_lib:format("options must be an object, not ~ts", [show(Other)])}
    end.

options_over([], Acc, _, _) -> {ok, Acc};
options_over([{Name, Value} | Rest], Acc, Choices, M) ->
    case lists:keyfind(Name, 1, Choices) of
        false ->
            {fault, io_lib:format("unknown option '~ts' (~ts has ~ts)",
                                  [show(Name), M:contract(),
                                   lists:join(", ", [N || {N, _} <- Choices])])};
        {_, Follows} ->
            case follows(Value, Follows) of
                true -> options_over(Rest, Acc#{Name => Value}, Choices, M);
                false ->
                    {fault, io_lib:format("option '~ts': cannot follow ~ts (this store follows "
                                          "~ts)", [Name, show(Value), followed(Follows)])}
            end
    end.

follows(Value, {setting, _}) -> setting(Value);
follows(Value, Values) -> lists:member(Value, Values).

followed({setting, _}) -> "a positive integer or infinity";
followed(Values) -> lists:join(", ", Values).

%% A setting's spelling: "infinity", or a positive integer in ASCII digits with no sign and
%% no leading zero.
setting(<<"infinity">>) -> true;
setting(<<C, Rest/binary>>) when C >= $1, C =< $9 ->
    lists:all(fun(D) -> D >= $0 andalso D =< $9 end, binary_to_list(Rest));
setting(_) -> false.

%% Every choice's value for a namespace: the default, then hello's, then open's.
effective(Options, M) ->
    Defaults = [{N, case Follows of {setting, D} -> D; [D | _] -> D end}
                || {N, Follows} <- M:choices()],
    maps:merge(maps:from_list(Defaults), Options).

%% ---------------------------------------------------------------------------------------------
%% Namespaces
%% ---------------------------------------------------------------------------------------------

namespace(Req) ->
    case field(<<"namespace">>, Req) of
        {ok, Name} when is_binary(Name) -> {ok, Name};
        _ -> error
    end.

open_namespace(Id, Req, #{module := M, spaces := Spaces, hello := Hello} = S) ->
    case {namespace(Req), options(Req, Hello, M)} of
        {error, _} -> fault(S, Id, "open without a namespace (a string)", []);
        {_, {fault, Why}} -> fault(S, Id, "~ts", [Why]);
        {{ok, Name}, {ok, Options}} ->
            Opts = effective(Options, M),
            {Pid, Open} = case Spaces of
                              #{Name := Existing} -> Existing;
                              _ ->
                                  Space = #{module => M, name => Name, data => new,
                                            writer => maps:get(writer, S), options => Opts},
                                  {spawn_link(fun() -> space(Space) end), 0}
                          end,
            Pid ! {open, Id, Opts},
            S#{spaces := Spaces#{Name => {Pid, Open + 1}}}
    end.

close_namespace(Id, Req, #{spaces := Spaces} = S) ->
    case namespace(Req) of
        {ok, Name} when is_map_key(Name, Spaces) ->
            {Pid, Open} = maps:get(Name, Spaces),
            Pid ! {close, Id},
            S#{spaces := Spaces#{Name := {Pid, max(Open - 1, 0)}}};
        {ok, Name} -> fault(S, Id, "unknown namespace '~ts' (never opened)", [show(Name)]);
        error -> fault(S, Id, "close without a namespace (a string)", [])
    end.

discard_namespace(Id, Req, #{spaces := Spaces, draining := Draining} = S) ->
    case namespace(Req) of
        {ok, Name} when is_map_key(Name, Spaces) ->
            {Pid, _} = maps:get(Name, Spaces),
            Pid ! {discard, Id},
            %% Watched until it ends, so that a shutdown still waits for its answers.
            S#{spaces := maps:remove(Name, Spaces),
               draining := Draining#{monitor(process, Pid) => Pid}};
        {ok, _} ->
            %% Nothing stored under that name (never opened here, or already discarded):
            %% dropping it is done.
            send(S, ok_line(Id, null)),
            S;
        error -> fault(S, Id, "discard without a namespace (a string)", [])
    end.

%% A namespace: one process, the adapter's data in its state, one call at a time.
space(#{module := M, name := Name, writer := W, data := Data, options := Opts} = St) ->
    receive
        {call, Id, Op, Args, Now, Dead} ->
            Ctx = #{namespace => Name, now => Now, dead => Dead, options => Opts},
            {Line, Data1} = answer(M, Id, Op, Args, Ctx, Data),
            W ! {line, Line},
            space(St#{data := Data1});
        {open, Id, NewOpts} ->
            try M:open(Name, NewOpts, Data) of
                Data1 ->
                    W ! {line, ok_line(Id, null)},
                    space(St#{data := Data1, options := NewOpts})
            catch
                Class:Reason:Stack ->
                    log("~p open crashed: ~p:~p ~p", [Id, Class, Reason, Stack]),
                    W ! {line, reply_line(Id, <<"fault">>, ?INTERNAL)},
                    space(St)
            end;
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

%% The reply line to one call, and the namespace's data after it. A crash of the call, or an
%% answer that is not one (or holds no wire value), is a fault and changes nothing.
answer(M, Id, Op, Args, Ctx, Data) ->
    try reply(Id, M:call(Op, Args, Ctx, Data), Data)
    catch
        Class:Reason:Stack ->
            log("~p ~p crashed: ~p:~p ~p", [Id, Op, Class, Reason, Stack]),
            {reply_line(Id, <<"fault">>, ?INTERNAL), Data}
    end.

reply(Id, {ok, Value, Data1}, _) -> {iolist_to_binary(ok_line(Id, Value)), Data1};
reply(Id, {error, Code, Detail}, Data) -> reply(Id, {error, Code, Detail, null, Data}, Data);
reply(Id, {error, Code, Detail, Payload}, Data) ->
    reply(Id, {error, Code, Detail, Payload, Data}, Data);
reply(Id, {error, Code, Detail, Payload, Data1}, _) when is_binary(Code) ->
    {error_line(Id, Code, Detail, Payload), Data1};
reply(Id, {fault, Reason}, Data) ->
    Text = text(Reason),
    log("fault (id ~p): ~ts", [Id, Text]),
    {iolist_to_binary(reply_line(Id, <<"fault">>, Text)), Data}.

error_line(Id, Code, Detail, Payload) ->
    iolist_to_binary(reply_line(Id, <<"error">>, {obj, [{<<"code">>, Code},
                                                        {<<"detail">>, text(Detail)},
                                                        {<<"payload">>, Payload}]})).

%% Chardata as one binary; bytes that are not UTF-8 (an id shown as it came) are kept as they
%% are, which encode/1 escapes one by one.
text(Chars) ->
    case unicode:characters_to_binary(Chars) of
        Bin when is_binary(Bin) -> Bin;
        _ -> iolist_to_binary(Chars)
    end.

%% ---------------------------------------------------------------------------------------------
%% call: the op, its arguments, now and dead, checked before the namespace sees them
%% ---------------------------------------------------------------------------------------------

call_namespace(Id, Req, #{spaces := Spaces} = S) ->
    case namespace(Req) of
        error -> fault(S, Id, "call without a namespace (a string)", []);
        {ok, Name} ->
            case Spaces of
                #{Name := {_, 0}} -> fault(S, Id, "namespace '~ts' is closed", [show(Name)]);
                #{Name := {Pid, _}} -> forward_call(Id, Pid, Req, S);
                _ -> fault(S, Id, "unknown namespace '~ts' (never opened)", [show(Name)])
            end
    end.

forward_call(Id, Pid, Req, #{ops := Ops} = S) ->
    case field(<<"op">>, Req) of
        {ok, Name} when is_map_key(Name, Ops) ->
            {Op, Names} = maps:get(Name, Ops),
            case call_args(Req, Names, S) of
                {ok, Args, Now, Dead} ->
                    Pid ! {call, Id, Op, Args, Now, Dead},
                    S;
                {fault, Why} -> fault(S, Id, "~ts", [Why])
            end;
        {ok, Name} -> fault(S, Id, "unknown op '~ts'", [show(Name)]);
        error -> fault(S, Id, "call without an op", [])
    end.

call_args(Req, Names, #{classes := Classes}) ->
    try
        Given = case field(<<"args">>, Req) of
                    {ok, {obj, Ps}} -> Ps;
                    _ -> throw("call without args (an object)")
                end,
        [throw(io_lib:format("unexpected argument '~ts'", [show(K)]))
         || {K, _} <- Given, not lists:keymember(K, 1, Names)],
        Args = maps:from_list(
                 [case member(N, Given) of
                      {ok, V} ->
                          decodable(V, Classes) orelse
                              throw(io_lib:format("argument '~ts' cannot be decoded", [N])),
                          {Atom, V};
                      error -> throw(io_lib:format("missing argument '~ts'", [N]))
                  end || {N, Atom} <- Names]),
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

%% Could the kit's codec decode it? Tagged values must hold what their tag says, and a value
%% class (Classes: name => its sorted fields) must be one of the contract's with exactly its
%% fields.
decodable(L, Classes) when is_list(L) -> lists:all(fun(V) -> decodable(V, Classes) end, L);
decodable({obj, [{<<"__tuple__">>, Items}]}, Classes) ->
    is_list(Items) andalso decodable(Items, Classes);
decodable({obj, [{<<"__dict__">>, Pairs}]}, Classes) ->
    is_list(Pairs) andalso
        lists:all(fun([K, V]) ->
                          hashable(K) andalso decodable(K, Classes) andalso decodable(V, Classes);
                     (_) -> false
                  end, Pairs);
decodable({obj, [{<<"__bytes__">>, Hex}]}, _) ->
    is_binary(Hex) andalso byte_size(Hex) rem 2 =:= 0 andalso
        lists:all(fun is_hex/1, binary_to_list(Hex));
decodable({obj, [{Tag, Text}]}, Classes) when Tag =/= <<"__type__">>, Tag =/= <<"__dict__">> ->
    case lists:member(Tag, ?ONE_KEY_TAGS) of
        true -> is_binary(Text);
        false -> decodable(Text, Classes)
    end;
decodable({obj, Pairs}, Classes) ->
    Values = lists:all(fun({_, V}) -> decodable(V, Classes) end, Pairs),
    case member(<<"__type__">>, Pairs) of
        {ok, null} -> Values;
        {ok, Class} when is_map_key(Class, Classes) ->
            lists:sort([K || {K, _} <- Pairs, K =/= <<"__type__">>]) =:= maps:get(Class, Classes)
                andalso Values;
        {ok, _} -> false;
        error -> Values
    end;
decodable(_, _) -> true.

hashable(L) when is_list(L) -> false;
hashable({obj, [{<<"__tuple__">>, Items}]}) ->
    is_list(Items) andalso lists:all(fun hashable/1, Items);
hashable({obj, Pairs} = V) -> not is_mapping(V) andalso member(<<"__type__">>, Pairs) =:= error;
hashable(_) -> true.

is_hex(C) -> (C >= $0 andalso C =< $9) orelse (C >= $a andalso C =< $f)
                 orelse (C >= $A andalso C =< $F).

%% ---------------------------------------------------------------------------------------------
%% Reading and building values
%% ---------------------------------------------------------------------------------------------

%% Is it a mapping once the kit's codec reads it? A plain object or {"__dict__": pairs}; not a
%% one-key tagged value, not a value class ({"__type__": name, ...}).
-spec is_mapping(value()) -> boolean().
is_mapping({obj, [{<<"__dict__">>, _}]}) -> true;
is_mapping({obj, [{Tag, _}]}) when Tag =/= <<"__type__">> -> not lists:member(Tag, ?ONE_KEY_TAGS);
is_mapping({obj, Pairs}) ->
    case member(<<"__type__">>, Pairs) of
        {ok, Name} -> Name =:= null;
        error -> true
    end;
is_mapping(_) -> false.

%% The value under a string key of a mapping, or a field of a value class (the last one, as a
%% JSON reader keeps the last duplicate); null when the key is absent.
-spec lookup(binary(), value()) -> value().
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

member(Key, Pairs) -> member(Key, Pairs, error).

member(Key, [{Key, V} | Rest], _) -> member(Key, Rest, {ok, V});
member(Key, [_ | Rest], Found) -> member(Key, Rest, Found);
member(_, [], Found) -> Found.

%% A value of one of the contract's value classes: `{"__type__": Class, field: value, ...}`,
%% the fields in the order given.
-spec value(binary(), [{binary(), value()}]) -> value().
value(Class, Fields) -> {obj, [{<<"__type__">>, Class} | Fields]}.

%% A value the store minted (a lease, an access): `{"__opaque__": Text}`. The kit hands the same
%% object back when a later call uses it, and compares the texts.
-spec opaque(binary()) -> value().
opaque(Text) -> {obj, [{<<"__opaque__">>, Text}]}.

%% An Erlang float as a wire float: the shortest text that reads back as the same float
%% (`1767225600000.001`, `-0.0`), so the kit decodes exactly this float.
-spec exact_float(float()) -> value().
exact_float(F) when is_float(F) -> {float, float_to_binary(F, [short])}.

%% A value for a fault, a detail or a log line: a string as itself, anything else as JSON.
-spec show(value()) -> binary().
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
%% scans the line in one pass without building a sub-binary per token. What is being built
%% waits on an explicit stack: {array, Items}, {key, Pairs} (an object awaiting its next key's
%% colon), {object, Key, Pairs} (awaiting Key's value). Strings and numbers are slices of Line.
-spec decode(binary()) -> {ok, value()} | error.
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

%% A string after its opening quote: its text starts at offset Pos of Line, and N plain bytes
%% of it are read so far. A plain byte is anything but a quote, a backslash and a control
%% character (which a JSON string may not hold unescaped); a string without escapes is a slice
%% of Line.
string(<<C, R/binary>>, Line, Pos, N, Stack) when ?IS_PLAIN(C) ->
    string(R, Line, Pos, N + 1, Stack);
string(<<$", R/binary>>, Line, Pos, N, Stack) ->
    next(R, Line, Pos + N + 1, binary_part(Line, Pos, N), Stack);
string(<<$\\, R/binary>>, Line, Pos, N, Stack) ->
    {Text, Rest} = escaped_string(R, [binary_part(Line, Pos, N)]),
    next(Rest, Line, byte_size(Line) - byte_size(Rest), Text, Stack);
string(_, _, _, _, _) -> throw(bad).

%% The rest of a string with escapes (just after a backslash), put together from pieces (the
%% last first in Acc): the string, and what follows its closing quote.
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
    lists:all(fun is_hex/1, binary_to_list(H)) orelse throw(bad),
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

-spec encode(value()) -> iodata().
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
