// fencepost-wire/1 (docs/protocol.md) on stdin/stdout: the line loop, hello, the namespaces,
// call dispatch, faults and shutdown. An adapter gives what is its own (the contract's name and
// terms, the options it follows, its store's operations) to serve().
'use strict';

const { PyDict, ValueClasses, isStr, isInt } = require('./values');
const { DecodeError, parseJson, decode, encode } = require('./codec');

const PROTOCOL = 'fencepost-wire/1';

// The contract's answer other than a result: an error code (one of the contract's), free text
// for people, and the payload the contract carries with that code (compared by the kit).
class Refusal {
  constructor(code, detail, payload = null) { this.code = code; this.detail = detail; this.payload = payload; }
}
function refuse(code, detail, payload = null) { throw new Refusal(code, detail, payload); }

// A request the adapter cannot process, or a refusal the contract has no code for: answered
// with a fault quoting the message (the check is then unknown, never pass).
class Fault extends Error {}

const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

// The options of a run or a store (a Map of strings), checked against what the adapter follows:
// a name it does not know or a reading it does not follow is a Fault naming the option.
function readOptions(raw, spec) {
  const out = {};
  if (raw === undefined || raw === null) return out;
  if (!(raw instanceof Map)) throw new Fault('options must be an object of strings');
  for (const [name, value] of raw) {
    if (!isStr(value)) throw new Fault(`option ${name}: the value must be a string`);
    if (own(spec.choices, name)) {
      if (!spec.choices[name].includes(value)) {
        throw new Fault(`option ${name}=${value}: cannot follow it (this store follows ${spec.choices[name].join(', ')})`);
      }
    } else if (own(spec.settings, name)) {
      if (value.trim() !== 'infinity' && !/^\s*[+-]?\d+(_\d+)*\s*$/.test(value)) {
        throw new Fault(`option ${name}=${value}: cannot follow it (use infinity or an integer)`);
      }
    } else {
      throw new Fault(`option ${name}: cannot follow it (not an option of ${spec.contract})`);
    }
    out[name] = value;
  }
  return out;
}

// Checked options -> what a store reads: every choice (its first reading when not given) and
// every setting (a BigInt, or null for infinity; its default when not given).
function storeOptions(options, spec) {
  const out = {};
  for (const [name, readings] of Object.entries(spec.choices)) out[name] = options[name] || readings[0];
  for (const [name, fallback] of Object.entries(spec.settings)) {
    const value = (options[name] || fallback).trim();
    out[name] = value === 'infinity' ? null : BigInt(value.replace(/_/g, ''));
  }
  return out;
}

function answer(id, body) { return `{"id":${id === null ? 'null' : id.toString()},${body}}`; }
function faultLine(id, reason) { return answer(id, `"fault":${JSON.stringify(reason)}`); }
function errorLine(id, e) {
  return answer(id, `"error":{"code":${JSON.stringify(e.code)},"detail":${JSON.stringify(e.detail)},"payload":${encode(e.payload)}}`);
}
const NO_REPLY = Symbol('no reply');  // shutdown answers by itself, once nothing is in flight
const thenable = (x) => x !== null && typeof x === 'object' && typeof x.then === 'function';

// The server of one process: the run's options and every namespace it was asked to open.
class Server {
  constructor(spec, out) {
    this.spec = spec;
    this.out = out;
    this.runOptions = {};
    this.spaces = new Map();     // namespace -> {namespace, data, options, openings, store, open}
    this.inFlight = new Set();   // ids of requests answered later (an operation's promise)
    this.shuttingDown = false;
    this.onIdle = null;
  }

  // One request line: its reply is written now, or when the operation's promise settles.
  line(text) {
    let msg;
    try {
      msg = parseJson(text);
    } catch (e) {
      if (e instanceof DecodeError) return this.out(faultLine(null, `not JSON: ${e.message}`));
      throw e;
    }
    if (!(msg instanceof Map)) return this.out(faultLine(null, 'a request is a JSON object'));
    const id = msg.get('id');
    if (!isInt(id) || id <= 0n) return this.out(faultLine(null, 'a request carries a positive integer id'));
    // Its id would tell two replies apart no more: the request is refused without it.
    if (this.inFlight.has(id)) return this.out(faultLine(null, `request id ${id} is already in flight`));
    return this.reply(id, () => this.request(id, msg));
  }

  // Run `work` and write its reply: now, or when the promise it returns settles.
  reply(id, work) {
    let result;
    try {
      result = work();
    } catch (e) {
      return this.out(this.replyLine(id, false, e));
    }
    if (result === NO_REPLY) return undefined;
    if (!thenable(result)) return this.out(this.replyLine(id, true, result));
    this.inFlight.add(id);
    const settle = (ok) => (value) => {
      this.inFlight.delete(id);
      this.out(this.replyLine(id, ok, value));
      if (this.inFlight.size === 0 && this.onIdle !== null) this.onIdle();
    };
    return result.then(settle(true), settle(false));
  }

  // The reply to `id`: ok with a result, or for what was thrown the contract's error, a fault,
  // or (anything else, a result the codec cannot write included) an internal error's fault.
  replyLine(id, ok, value) {
    try {
      if (ok) return answer(id, `"ok":${encode(value)}`);
      if (value instanceof Refusal) return errorLine(id, value);
      if (value instanceof Fault) return faultLine(id, value.message);
      throw value;
    } catch (e) {
      process.stderr.write(`internal error on request ${id}: ${e && e.stack ? e.stack : e}\n`);
      return faultLine(id, `internal error: ${e && e.message ? e.message : e}`);
    }
  }

  request(id, msg) {
    const type = msg.get('type');
    switch (type) {
      case 'hello': return this.hello(msg);
      case 'open': return this.open(msg);
      case 'close': return this.close(msg);
      case 'discard': return this.discard(msg);
      case 'call': return this.call(msg);
      case 'shutdown': return this.shutdown(id);
      default: throw new Fault(`unknown type ${JSON.stringify(String(type))}`);
    }
  }

  hello(msg) {
    const { spec } = this;
    if (msg.get('protocol') !== PROTOCOL) throw new Fault(`cannot speak protocol ${JSON.stringify(msg.get('protocol'))}: only ${PROTOCOL}`);
    if (msg.get('contract') !== spec.contract) throw new Fault(`does not implement contract ${JSON.stringify(msg.get('contract'))}: only ${spec.contract}`);
    this.runOptions = readOptions(msg.get('options'), spec);
    return new PyDict([['name', spec.name], ['version', spec.version], ['capabilities', spec.capabilities]]);
  }

  open(msg) {
    const namespace = msg.get('namespace');
    if (!isStr(namespace)) throw new Fault('open needs a namespace (a string)');
    // The options of open, when it has them, replace the run's (hello's) for this store.
    const given = msg.get('options');
    const options = given === undefined || given === null ? this.runOptions : readOptions(given, this.spec);
    let space = this.spaces.get(namespace);
    if (space === undefined) {
      space = { namespace, data: this.spec.create(namespace), openings: 0, store: null, open: false, below: [] };
      this.spaces.set(namespace, space);
    }
    space.openings += 1;
    // An open while the namespace is open is another connection to the same store: a store of
    // its own, which the calls go to until it is closed (the one under it then again).
    const beside = space.open ? space.store : null;
    space.options = storeOptions(options, this.spec);
    return after(this.spec.open(space), (store) => {
      if (beside !== null) space.below.push(beside);
      space.store = store;
      space.open = true;
      return null;
    });
  }

  close(msg) {
    const space = this.spaces.get(msg.get('namespace'));
    if (space === undefined) throw new Fault(`unknown namespace ${JSON.stringify(String(msg.get('namespace')))}`);
    const { store } = space;
    if (space.below.length > 0) {
      space.store = space.below.pop(); // the last store opened closes; the one under it is used
    } else {
      space.open = false;
      space.store = null;
    }
    return after(store !== null && this.spec.close ? this.spec.close(store, space) : null, () => null);
  }

  discard(msg) {
    const namespace = msg.get('namespace');
    const space = this.spaces.get(namespace);
    this.spaces.delete(namespace);
    return after(space !== undefined && this.spec.discard ? this.spec.discard(space) : null, () => null);
  }

  call(msg) {
    const namespace = msg.get('namespace');
    const space = this.spaces.get(namespace);
    if (!isStr(namespace) || space === undefined || !space.open) {
      throw new Fault(`unknown namespace ${JSON.stringify(String(namespace))} (not open)`);
    }
    const op = msg.get('op');
    const names = isStr(op) && own(this.spec.operations, op) ? this.spec.operations[op] : null;
    if (names === null || typeof space.store[op] !== 'function') throw new Fault(`unknown op ${JSON.stringify(String(op))}`);
    const now = msg.get('now');
    if (!isInt(now)) throw new Fault('a call carries now, an integer');
    const args = this.arguments(op, names, msg.has('args') ? msg.get('args') : new Map());
    const dead = this.decoded('dead', msg.has('dead') && msg.get('dead') !== null ? msg.get('dead') : []);
    if (!Array.isArray(dead)) throw new Fault('dead must be a list');
    return space.store[op](args, now, dead);
  }

  // The arguments of `op` by name, decoded: every one it takes, and no other.
  arguments(op, names, raw) {
    if (!(raw instanceof Map)) throw new Fault('args must be an object');
    const args = {};
    for (const [name, value] of raw) {
      if (!names.includes(name)) throw new Fault(`${op} takes no argument ${name}`);
      args[name] = this.decoded(`argument ${name}`, value);
    }
    for (const name of names) {
      if (!own(args, name)) throw new Fault(`${op} needs its argument ${name}`);
    }
    return args;
  }

  decoded(what, raw) {
    try {
      return decode(raw, this.spec.classes);
    } catch (e) {
      if (e instanceof DecodeError) throw new Fault(`cannot decode ${what}: ${e.message}`);
      throw e;
    }
  }

  // Answered once every request in flight is; then the process exits 0.
  shutdown(id) {
    this.shuttingDown = true;
    const bye = () => this.out(answer(id, '"ok":null'), () => process.exit(0));
    if (this.inFlight.size === 0) bye(); else this.onIdle = bye;
    return NO_REPLY;
  }
}

// f(x), after x settles when x is a promise.
function after(x, f) { return thenable(x) ? x.then(f) : f(x); }

const REQUIRED = ['name', 'version', 'contract', 'capabilities', 'operations', 'open'];

// The adapter's declaration, checked once and completed with the defaults.
function adapterSpec(adapter) {
  for (const key of REQUIRED) {
    if (adapter[key] === undefined) throw new TypeError(`serve(): the adapter needs ${key} (see fencepost-wire's README)`);
  }
  const settings = Array.isArray(adapter.settings)
    ? Object.fromEntries(adapter.settings.map((name) => [name, 'infinity'])) : adapter.settings || {};
  const classes = adapter.classes instanceof ValueClasses ? adapter.classes : new ValueClasses(adapter.classes || {});
  return {
    create: () => ({}), ...adapter, choices: adapter.choices || {}, settings, classes,
  };
}

// Serve the protocol on stdin/stdout until shutdown or end of file (then exit 0). See README.md.
function serve(adapter, { input = process.stdin, output = process.stdout } = {}) {
  const spec = adapterSpec(adapter);
  const server = new Server(spec, (line, done) => output.write(line + '\n', done));
  let buffer = '';
  input.setEncoding('utf8');
  input.on('data', (chunk) => {
    buffer += chunk;
    let end;
    while (!server.shuttingDown && (end = buffer.indexOf('\n')) >= 0) {
      let line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line.trim() !== '') server.line(line);
    }
  });
  input.on('end', () => {
    if (server.shuttingDown) return;
    if (buffer.trim() !== '') server.line(buffer);
    const bye = () => output.write('', () => process.exit(0));
    if (server.inFlight.size === 0) bye(); else server.onIdle = bye;
  });
  return server;
}

module.exports = { PROTOCOL, serve, refuse, Refusal, Fault };
