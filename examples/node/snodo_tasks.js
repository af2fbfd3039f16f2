#!/usr/bin/env node
// snodo-tasks over fencepost-wire/1: an in-memory snodo Tasks store (revisioned tasks with
// worker leases) in one Node.js 20 file, no dependencies. It reads one JSON request per line
// on stdin and writes one JSON reply per line on stdout; stderr is its log.
//
//   node examples/node/snodo_tasks.js [--bug NAME]      (or SNODO_TASKS_BUG=NAME)
//   fencepost check snodo-tasks --adapter "exec:node examples/node/snodo_tasks.js"
//
// The rules follow the snodo-tasks contract (spec/snodo_tasks/ and its notes): the order
// of checks of each operation, and the readings named by the contract's options. See
// README.md beside this file for how the contract maps onto this code.
'use strict';

const NAME = 'snodo-tasks-node';
const VERSION = '0.1.0';
const PROTOCOL = 'fencepost-wire/1';
const CONTRACT = 'snodo-tasks';
const CAPABILITIES = ['durable', 'concurrency'];

// --- bug switches: each mirrors one mutant of the kit ------------------------------

const BUGS = {
  old_lease_accepted: 'a lease is matched by its task only: a re-claim does not fence it',
  expired_lease_accepted: 'renew, worker_snapshot and worker events ignore the expiry',
  deferred_rounded_down: 'deferred answers one ms less than the remaining time',
  lost_update: 'transition ignores expected_revision',
  duplicate_applied_twice: 'a replayed event id is applied again',
  committed_at_is_now: 'committed_at is now even when the clock did not move',
  foreign_tenant_get: 'scopes are not compared: another tenant reads and changes the task',
  get_ignores_ttl: 'get returns a task whose TTL has run out',
  reaps_one_ms_early: 'reap deletes tasks 1 ms before their TTL',
  cancel_keeps_message: 'cancelled keeps the previous status message',
  claim_live_at_expiry: 'a claim is still live at its expiry (<= for <)',
  max_tasks_off_by_one: 'max_tasks compared with > instead of >=',
  identity_per_process: 'values signed per opening: after a reopen every value is foreign',
};

function usage(message) {
  process.stderr.write(`snodo_tasks.js: ${message}\n`);
  process.exit(2);
}

function parseCommandLine(argv) {
  let bug = process.env.SNODO_TASKS_BUG || null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--bug') {
      if (i + 1 >= argv.length) usage('--bug needs a name (one of: ' + Object.keys(BUGS).join(', ') + ')');
      bug = argv[++i];
    } else if (arg.startsWith('--bug=')) {
      bug = arg.slice('--bug='.length);
    } else {
      usage(`unknown argument ${JSON.stringify(arg)} (usage: snodo_tasks.js [--bug NAME])`);
    }
  }
  if (bug === '') bug = null;
  if (bug !== null && !Object.prototype.hasOwnProperty.call(BUGS, bug)) {
    usage(`unknown bug ${JSON.stringify(bug)} (known: ${Object.keys(BUGS).join(', ')})`);
  }
  return bug;
}

const BUG = parseCommandLine(process.argv.slice(2));

// --- values: the kit's exact codec -------------------------------------------------------------
// null, booleans and strings are themselves; integers are BigInt; everything else is one of
// these small classes, so that 1 and 1.0, a tuple and a list, never meet.

class PyFloat { constructor(v) { this.v = v; } }
class PyTuple { constructor(items) { this.items = items; } }
class PyBytes { constructor(hex) { this.hex = hex; } }
class Opaque { constructor(text) { this.text = text; } }      // a value a store minted
class Forged { constructor(label) { this.label = label; } }   // a value nobody minted

// A value class of the contract: `type` and its fields by name, in the class's order.
class PyObj {
  constructor(type, fields) { this.type = type; this.f = fields; }
}

// A mapping with keys of any value, compared as Python compares keys (1 == 1.0 == true).
class PyDict {
  constructor(pairs) {
    this.ks = []; this.vs = []; this.strIndex = new Map();
    if (pairs) for (const [k, v] of pairs) this.set(k, v);
  }
  find(k) {
    if (typeof k === 'string') {
      const i = this.strIndex.get(k);
      return i === undefined ? -1 : i;
    }
    for (let i = 0; i < this.ks.length; i++) {
      if (typeof this.ks[i] !== 'string' && pyEq(this.ks[i], k)) return i;
    }
    return -1;
  }
  has(k) { return this.find(k) >= 0; }
  get(k) { const i = this.find(k); return i < 0 ? undefined : this.vs[i]; }
  set(k, v) {
    const i = this.find(k);
    if (i >= 0) { this.vs[i] = v; return; }
    if (typeof k === 'string') this.strIndex.set(k, this.ks.length);
    this.ks.push(k); this.vs.push(v);
  }
  get size() { return this.ks.length; }
  *entries() { for (let i = 0; i < this.ks.length; i++) yield [this.ks[i], this.vs[i]]; }
}

// The fields of every value class of the contract, in order; a default where the class has one.
const CLASSES = {
  Context: ['tenant', 'principal'],
  Action: ['kind', 'task_id'],
  Task: ['id', 'status', 'status_message', 'created_at', 'last_updated_at', 'ttl_ms',
    'poll_interval_ms', 'input_requests', 'result', 'error'],
  Work: ['idempotency_key', 'type', 'input', 'retry_policy'],
  Snapshot: ['task', 'work', 'revision', 'retry_count', 'retry_at', 'last_failure',
    'input_history', 'accepted_input_responses'],
  Event: ['id', 'kind', 'data'],
  Transition: ['outcome', 'snapshot', 'effects', 'event_revision', 'committed_at'],
  Claimed: ['snapshot', 'lease'],
  RequestAuthority: ['access'],
  WorkerAuthority: ['lease'],
};
const DEFAULTS = { Context: { principal: 'user' } };

const TAGS = new Set(['__type__', '__tuple__', '__dict__', '__bytes__', '__float__',
  '__opaque__', '__forged_value__', '__ref__', '__forged__']);

function make(type, values) {
  const fields = Object.create(null);
  CLASSES[type].forEach((name, i) => { fields[name] = values[i]; });
  return new PyObj(type, fields);
}

function evolve(obj, changes) {
  const fields = Object.create(null);
  for (const name of CLASSES[obj.type]) {
    fields[name] = Object.prototype.hasOwnProperty.call(changes, name) ? changes[name] : obj.f[name];
  }
  return new PyObj(obj.type, fields);
}

function isObj(value, type) { return value instanceof PyObj && value.type === type; }

class DecodeError extends Error {}

// A JSON text parser that keeps what JSON.parse loses: a number without '.' or exponent is an
// integer (BigInt), any other a float; objects come back as Maps (key order kept).
class Parser {
  constructor(text) { this.s = text; this.i = 0; }
  fail(what) { throw new DecodeError(`${what} at character ${this.i}`); }
  ws() {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.i++; else break;
    }
  }
  document() {
    this.ws();
    const value = this.value();
    this.ws();
    if (this.i !== this.s.length) this.fail('extra data');
    return value;
  }
  value() {
    const c = this.s[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    if (this.s.startsWith('true', this.i)) { this.i += 4; return true; }
    if (this.s.startsWith('false', this.i)) { this.i += 5; return false; }
    if (this.s.startsWith('null', this.i)) { this.i += 4; return null; }
    return this.fail('expected a value');
  }
  object() {
    const out = new Map();
    this.i++;
    this.ws();
    if (this.s[this.i] === '}') { this.i++; return out; }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('expected a string key');
      const key = this.string();
      this.ws();
      if (this.s[this.i] !== ':') this.fail("expected ':'");
      this.i++;
      this.ws();
      out.set(key, this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return out;
      if (c !== ',') this.fail("expected ',' or '}'");
    }
  }
  array() {
    const out = [];
    this.i++;
    this.ws();
    if (this.s[this.i] === ']') { this.i++; return out; }
    for (;;) {
      this.ws();
      out.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') this.fail("expected ',' or ']'");
    }
  }
  string() {
    const s = this.s;
    let i = ++this.i;
    let out = '';
    let start = i;
    for (;;) {
      if (i >= s.length) { this.i = i; this.fail('unterminated string'); }
      const c = s.charCodeAt(i);
      if (c === 34) { out += s.slice(start, i); this.i = i + 1; return out; }
      if (c < 32) { this.i = i; this.fail('control character in a string'); }
      if (c !== 92) { i++; continue; }
      out += s.slice(start, i);
      const e = s[i + 1];
      const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (e === 'u') {
        const hex = s.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) { this.i = i; this.fail('bad \\u escape'); }
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else if (e !== undefined && Object.prototype.hasOwnProperty.call(simple, e)) {
        out += simple[e];
        i += 2;
      } else {
        this.i = i; this.fail('bad escape');
      }
      start = i;
    }
  }
  number() {
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.s.slice(this.i, this.i + 400));
    if (!m) this.fail('bad number');
    this.i += m[0].length;
    if (m[2] === undefined && m[3] === undefined) return BigInt(m[0]);
    return new PyFloat(Number(m[0]));
  }
}

function parseJson(text) { return new Parser(text).document(); }

// Raw parsed JSON -> values (the tags resolved), as the kit's codec decodes them.
function decode(raw) {
  if (Array.isArray(raw)) return raw.map(decode);
  if (!(raw instanceof Map)) return raw;
  if (raw.size === 1) {
    const [[tag, inner]] = raw;
    switch (tag) {
      case '__tuple__':
        if (!Array.isArray(inner)) throw new DecodeError('__tuple__ holds a list');
        return new PyTuple(inner.map(decode));
      case '__dict__': {
        if (!Array.isArray(inner)) throw new DecodeError('__dict__ holds a list');
        const out = new PyDict();
        for (const pair of inner) {
          if (!Array.isArray(pair) || pair.length !== 2) throw new DecodeError('__dict__ holds [key, value] pairs');
          const key = decode(pair[0]);
          if (Array.isArray(key) || key instanceof PyDict) throw new DecodeError('unhashable dict key');
          out.set(key, decode(pair[1]));
        }
        return out;
      }
      case '__bytes__':
        if (typeof inner !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(inner)) throw new DecodeError('__bytes__ holds hex digits');
        return new PyBytes(inner.toLowerCase());
      case '__float__': {
        const named = { nan: NaN, inf: Infinity, '-inf': -Infinity };
        if (typeof inner !== 'string' || !Object.prototype.hasOwnProperty.call(named, inner)) throw new DecodeError('__float__ holds nan, inf or -inf');
        return new PyFloat(named[inner]);
      }
      case '__opaque__':
        if (typeof inner !== 'string') throw new DecodeError('__opaque__ holds a string');
        return new Opaque(inner);
      case '__forged_value__':
        if (typeof inner !== 'string') throw new DecodeError('__forged_value__ holds a string');
        return new Forged(inner);
      case '__ref__':
      case '__forged__':
        throw new DecodeError(`${tag} never appears on the wire`);
      default:
    }
  }
  if (raw.has('__type__')) {
    const type = raw.get('__type__');
    if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(CLASSES, type)) {
      throw new DecodeError(`unknown value class ${JSON.stringify(type)}`);
    }
    const names = CLASSES[type];
    for (const key of raw.keys()) {
      if (key !== '__type__' && !names.includes(key)) throw new DecodeError(`${type} has no field ${key}`);
    }
    const fields = Object.create(null);
    for (const name of names) {
      if (raw.has(name)) fields[name] = decode(raw.get(name));
      else if (DEFAULTS[type] && name in DEFAULTS[type]) fields[name] = DEFAULTS[type][name];
      else throw new DecodeError(`${type} needs its field ${name}`);
    }
    return new PyObj(type, fields);
  }
  const out = new PyDict();
  for (const [k, v] of raw) out.set(k, decode(v));
  return out;
}

function floatText(v) {
  if (Number.isNaN(v)) return '{"__float__":"nan"}';
  if (v === Infinity) return '{"__float__":"inf"}';
  if (v === -Infinity) return '{"__float__":"-inf"}';
  if (Object.is(v, -0)) return '-0.0';
  const s = String(v);  // the shortest text that reads back as v
  return /[.eE]/.test(s) ? s : s + '.0';
}

// Values -> JSON text in the exact codec.
function encode(v) {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'boolean': return v ? 'true' : 'false';
    case 'string': return JSON.stringify(v);
    case 'bigint': return v.toString();
    case 'number': return floatText(v);
    default:
  }
  if (v instanceof PyFloat) return floatText(v.v);
  if (Array.isArray(v)) return '[' + v.map(encode).join(',') + ']';
  if (v instanceof PyTuple) return '{"__tuple__":[' + v.items.map(encode).join(',') + ']}';
  if (v instanceof PyBytes) return '{"__bytes__":"' + v.hex + '"}';
  if (v instanceof Opaque) return '{"__opaque__":' + JSON.stringify(v.text) + '}';
  if (v instanceof Forged) return '{"__forged_value__":' + JSON.stringify(v.label) + '}';
  if (v instanceof PyObj) {
    const parts = ['"__type__":' + JSON.stringify(v.type)];
    for (const name of CLASSES[v.type]) parts.push(JSON.stringify(name) + ':' + encode(v.f[name]));
    return '{' + parts.join(',') + '}';
  }
  if (v instanceof PyDict) {
    const plain = v.ks.every((k) => typeof k === 'string' && !TAGS.has(k));
    if (plain) {
      return '{' + v.ks.map((k, i) => JSON.stringify(k) + ':' + encode(v.vs[i])).join(',') + '}';
    }
    return '{"__dict__":[' + v.ks.map((k, i) => '[' + encode(k) + ',' + encode(v.vs[i]) + ']').join(',') + ']}';
  }
  throw new Error(`cannot encode ${String(v)}`);
}

// --- Python's equality and arithmetic on these values -------------------------------------------

function isNumeric(x) { return typeof x === 'bigint' || typeof x === 'boolean' || x instanceof PyFloat; }
function asExact(x) { return typeof x === 'boolean' ? (x ? 1n : 0n) : x; }

// -1, 0 or 1 as Python orders two numbers exactly (an int and a float included); NaN unordered.
function cmpNum(a, b) {
  a = asExact(a); b = asExact(b);
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (a instanceof PyFloat && b instanceof PyFloat) {
    if (Number.isNaN(a.v) || Number.isNaN(b.v)) return NaN;
    return a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
  }
  if (a instanceof PyFloat) return -cmpNum(b, a);
  const f = b.v;  // a is an int, b a float
  if (Number.isNaN(f)) return NaN;
  if (f === Infinity) return -1;
  if (f === -Infinity) return 1;
  if (Number.isInteger(f)) { const g = BigInt(f); return a < g ? -1 : a > g ? 1 : 0; }
  return a <= BigInt(Math.floor(f)) ? -1 : 1;
}

function toFloat(x) { x = asExact(x); return typeof x === 'bigint' ? Number(x) : x.v; }
function add(a, b) {
  a = asExact(a); b = asExact(b);
  if (typeof a === 'bigint' && typeof b === 'bigint') return a + b;
  return new PyFloat(toFloat(a) + toFloat(b));
}
// 1 us after a time in ms, from the whole number of microseconds (docs/protocol.md: the float
// nearest the exact decimal, never a running sum of 0.001s).
function microsecondAfter(t) {
  return new PyFloat((Math.round(toFloat(asExact(t)) * 1000) + 1) / 1000);
}
function sub(a, b) {
  a = asExact(a); b = asExact(b);
  if (typeof a === 'bigint' && typeof b === 'bigint') return a - b;
  return new PyFloat(toFloat(a) - toFloat(b));
}
function ceilInt(x) { return typeof x === 'bigint' ? x : BigInt(Math.ceil(x.v)); }

// Python's ==; with `exact`, as the seed's pin (^event) compares: a bool, an int and a float
// are different values even when Python calls them equal (true == 1 == 1.0).
function pyEq(a, b, exact = false) {
  if (a === b) return typeof a !== 'object' || a === null || !(a instanceof PyFloat) || !Number.isNaN(a.v);
  if (exact && isNumeric(a) && isNumeric(b)) {
    if (typeof a !== typeof b || (a instanceof PyFloat) !== (b instanceof PyFloat)) return false;
    return a instanceof PyFloat ? Object.is(a.v, b.v) : a === b;
  }
  if (isNumeric(a) && isNumeric(b)) return cmpNum(a, b) === 0;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) return Array.isArray(b) && seqEq(a, b, exact);
  if (a instanceof PyTuple) return b instanceof PyTuple && seqEq(a.items, b.items, exact);
  if (a instanceof PyDict) {
    if (!(b instanceof PyDict) || a.size !== b.size) return false;
    for (const [k, v] of a.entries()) {
      const i = b.find(k);
      if (i < 0 || !pyEq(v, b.vs[i], exact)) return false;
    }
    return true;
  }
  if (a instanceof PyObj) {
    return b instanceof PyObj && a.type === b.type && CLASSES[a.type].every((n) => pyEq(a.f[n], b.f[n], exact));
  }
  if (a instanceof PyBytes) return b instanceof PyBytes && a.hex === b.hex;
  if (a instanceof Opaque) return b instanceof Opaque && a.text === b.text;
  if (a instanceof Forged) return false;  // a forgery equals nothing but itself
  return false;
}
function seqEq(a, b, exact = false) { return a.length === b.length && a.every((x, i) => pyEq(x, b[i], exact)); }

// Strings in code point order (Python's), not UTF-16's.
function cmpStr(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i); let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xD800 && y >= 0xD800) {
      x += x >= 0xE000 ? -0x800 : 0x2000;
      y += y >= 0xE000 ? -0x800 : 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

// --- the contract's terms ----------------------------------------------------------------------

const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
const TERMINAL = ['completed', 'failed', 'cancelled'];
const ACTIONS = ['create', 'get', 'update', 'cancel'];
const WORKER_KINDS = ['input_requested', 'retry_requested', 'completed', 'failed'];
const CANCEL_MESSAGE = 'Cancellation requested';
const MAX_RETRY_DELAY_MS = 4294967295n;

const CHOICES = {
  same_expiry_renewal: ['identical', 'successor'],
  forged_request_authority: ['unauthorized_action', 'not_found'],
  transition_check_order: ['row_first', 'authority_first'],
  create_check_order: ['exists_first', 'capacity_first'],
  committed_at_step: ['millisecond', 'microsecond'],
  reap_order: ['task_id', 'expiry'],
  create_validation_order: ['last', 'after_access'],
};
const SETTINGS = ['max_tasks', 'max_active_tasks_per_scope'];

// An answer of the contract other than a result (the error's code, and its payload).
class Refusal {
  constructor(code, detail, payload = null) { this.code = code; this.detail = detail; this.payload = payload; }
}
function refuse(code, detail, payload = null) { throw new Refusal(code, detail, payload); }

// A request the adapter cannot process: answered with a fault.
class Fault extends Error {}

const isStr = (x) => typeof x === 'string';
const isName = (x) => isStr(x) && x !== '';                       // a non-empty string
const isInt = (x) => typeof x === 'bigint';                       // never a bool or a float
const isPositive = (x) => isInt(x) && x > 0n;
const isNumber = (x) => isInt(x) || x instanceof PyFloat;         // not a bool
const isMapping = (x) => x instanceof PyDict;
const terminal = (status) => isStr(status) && TERMINAL.includes(status);
const requestKindOf = (kind) => (kind === 'input_responses_accepted' ? 'update' : kind === 'cancelled' ? 'cancel' : null);
const isWorkerKind = (kind) => isStr(kind) && WORKER_KINDS.includes(kind);
const dataGet = (data, key) => { const v = isMapping(data) ? data.get(key) : undefined; return v === undefined ? null : v; };
const items = (seq) => (seq instanceof PyTuple ? seq.items : Array.isArray(seq) ? seq
  : isMapping(seq) ? seq.ks : isStr(seq) ? Array.from(seq) : null);

// --- what the store keeps ----------------------------------------------------------------------
// namespace -> {identity, options, open, tasks: task id -> aggregate}. An aggregate is everything
// stored for one task: {scope, snap, claim, generation, seen: event id -> {event, result}}.
const spaces = new Map();
// Every access and lease minted in this process, by its opaque text: what it stands for.
const minted = new Map();
let serial = 0;

function mint(record) {
  serial += 1;
  const text = `${record.store}/${record.cls}/${serial}`;
  minted.set(text, record);
  return new Opaque(text);
}
function recall(value, cls) {
  const record = value instanceof Opaque ? minted.get(value.text) : undefined;
  return record !== undefined && record.cls === cls ? record : null;
}

class Store {
  constructor(space) {
    this.space = space;
    this.tasks = space.tasks;
    this.id = space.identity;
    const o = space.options;
    this.opt = o;
    this.maxTasks = o.max_tasks;
    this.maxPerScope = o.max_active_tasks_per_scope;
  }

  // -- predicates (the bug switches bend some) --
  expired(agg, now) {
    const t = agg.snap.f.task.f;
    return t.ttl_ms !== null && cmpNum(now, add(t.created_at, t.ttl_ms)) >= 0;
  }
  live(claim, now) {
    if (claim === null) return false;
    const c = cmpNum(now, claim.exp);
    return BUG === 'claim_live_at_expiry' ? c <= 0 : c < 0;
  }
  sameScope(access, agg) { return BUG === 'foreign_tenant_get' || pyEq(access.scope, agg.scope); }
  genuineAccess(value) { const a = recall(value, 'access'); return a !== null && a.store === this.id ? a : null; }
  genuineLease(value) { const l = recall(value, 'lease'); return l !== null && l.store === this.id ? l : null; }
  recoverable(agg, now) {
    const s = agg.snap.f;
    const due = s.retry_at === null || cmpNum(now, s.retry_at) >= 0;
    return !terminal(s.task.f.status) && s.work !== null && due && !this.live(agg.claim, now);
  }

  // The aggregate whose live claim `lease` is (`checkExpiry` false: its current claim, live or
  // not); else stale_lease.
  leased(value, now, checkExpiry = true) {
    const lease = this.genuineLease(value);
    const agg = lease === null ? undefined : this.tasks.get(lease.taskId);
    const c = agg === undefined ? null : agg.claim;
    let matches = c !== null;
    if (matches && BUG !== 'old_lease_accepted') {
      matches = c.owner === lease.owner && c.token === lease.token && c.generation === lease.generation
        && cmpNum(c.exp, lease.exp) === 0;
    }
    if (!matches) refuse('stale_lease', 'the lease is not the task\'s current claim');
    if (checkExpiry && BUG !== 'expired_lease_accepted' && !this.live(c, now)) {
      refuse('stale_lease', 'the lease has expired');
    }
    return agg;
  }

  // A worker's lease used on `taskId`: a lease of this store for another task is stale too.
  workerLease(value, taskId, now) {
    const lease = this.genuineLease(value);
    if (lease !== null && lease.taskId !== taskId) refuse('stale_lease', 'the lease is for another task');
    return this.leased(value, now);
  }

  // -- operations --
  authorize({ context, action }) {
    if (!isObj(context, 'Context') || !isObj(action, 'Action')) refuse('function_clause', 'authorize takes a Context and an Action');
    const { kind, task_id: taskId } = action.f;
    if (!isStr(kind) || !ACTIONS.includes(kind)) refuse('function_clause', 'no such action kind');
    if (!isName(taskId)) refuse('function_clause', 'the task id is not a non-empty string');
    return mint({ cls: 'access', store: this.id, scope: context.f.tenant, kind, taskId });
  }

  create({ task, work, access }) {
    if (!isObj(work, 'Work')) refuse('function_clause', 'create takes a Work');
    if (!isObj(task, 'Task')) refuse('function_clause', 'create takes a Task');
    const taskId = task.f.id;
    const a = this.genuineAccess(access);
    if (a === null || a.kind !== 'create' || !pyEq(a.taskId, taskId)) {
      refuse('unauthorized_action', 'no create access for this task id');
    }
    const invalid = taskProblem(task) || workProblem(work);
    if (invalid && this.opt.create_validation_order === 'after_access') refuse('invalid_task', invalid);
    const exists = this.tasks.has(taskId);
    if (this.opt.create_check_order === 'capacity_first') {
      this.checkCapacity(a.scope);
      if (exists) refuse('already_exists', taskId);
    } else {
      if (exists) refuse('already_exists', taskId);
      this.checkCapacity(a.scope);
    }
    if (invalid) refuse('invalid_task', invalid);
    const snap = make('Snapshot', [task, work, 0n, 0n, null, null, new PyDict(), new PyDict()]);
    this.tasks.set(taskId, { scope: a.scope, snap, claim: null, generation: 0, seen: new Map() });
    return snap;
  }

  checkCapacity(scope) {
    if (this.maxTasks !== null) {
      const stored = BigInt(this.tasks.size);
      if (BUG === 'max_tasks_off_by_one' ? stored > this.maxTasks : stored >= this.maxTasks) {
        refuse('capacity_exceeded', `${this.maxTasks} tasks stored`, 'max_tasks');
      }
    }
    if (this.maxPerScope !== null) {
      let active = 0n;
      for (const agg of this.tasks.values()) {
        if (pyEq(agg.scope, scope) && !terminal(agg.snap.f.task.f.status)) active += 1n;
      }
      if (active >= this.maxPerScope) {
        refuse('capacity_exceeded', `${this.maxPerScope} active tasks in the scope`, 'max_active_tasks_per_scope');
      }
    }
  }

  get({ task_id: taskId, access }, now) {
    if (!isStr(taskId)) refuse('function_clause', 'the task id is not a string');
    const agg = this.tasks.get(taskId);
    const a = this.genuineAccess(access);
    if (agg === undefined || a === null || !this.sameScope(a, agg) || !['get', 'update', 'cancel'].includes(a.kind)
        || a.taskId !== taskId || (BUG !== 'get_ignores_ttl' && this.expired(agg, now))) {
      refuse('not_found', taskId);
    }
    return agg.snap;
  }

  claim({ task_id: taskId, owner_id: owner, lease_ms: leaseMs }, now) {
    if (!isName(taskId) || !isName(owner) || !isPositive(leaseMs)) {
      refuse('function_clause', 'claim takes a task id, an owner id and a positive lease_ms');
    }
    const agg = this.tasks.get(taskId);
    if (agg === undefined) refuse('not_found', taskId);
    const s = agg.snap.f;
    if (terminal(s.task.f.status)) refuse('unavailable', `the task is ${s.task.f.status}`);
    if (s.work === null) refuse('unavailable', 'the task has no work');
    if (s.retry_at !== null && cmpNum(now, s.retry_at) < 0) {
      let ms = ceilInt(sub(s.retry_at, now));
      if (BUG === 'deferred_rounded_down') ms -= 1n;
      refuse('deferred', `retry due in ${ms} ms`, ms);
    }
    if (this.live(agg.claim, now)) refuse('unavailable', 'the task is claimed');
    return this.grant(taskId, agg, owner, leaseMs, now);
  }

  claim_next({ owner_id: owner, lease_ms: leaseMs }, now) {
    if (!isName(owner) || !isPositive(leaseMs)) {
      refuse('function_clause', 'claim_next takes an owner id and a positive lease_ms');
    }
    // Any recoverable task will do (the contract leaves the order to the store): the oldest,
    // ties by id.
    const created = (id) => this.tasks.get(id).snap.f.task.f.created_at;
    const ids = [...this.tasks.keys()].filter((id) => this.recoverable(this.tasks.get(id), now))
      .sort((x, y) => cmpNum(created(x), created(y)) || cmpStr(x, y));
    if (ids.length === 0) return null;
    return this.grant(ids[0], this.tasks.get(ids[0]), owner, leaseMs, now);
  }

  grant(taskId, agg, owner, leaseMs, now) {
    serial += 1;
    const claim = { owner, token: serial, generation: agg.generation + 1, exp: add(now, leaseMs) };
    agg.generation = claim.generation;
    agg.claim = claim;
    const lease = mint({ cls: 'lease', store: this.id, taskId, ...claim });
    return make('Claimed', [agg.snap, lease]);
  }

  renew({ lease, lease_ms: leaseMs }, now) {
    if (!isPositive(leaseMs)) refuse('function_clause', 'lease_ms is not a positive integer');
    const agg = this.leased(lease, now);
    const old = agg.claim.exp;
    let exp = add(now, leaseMs);
    if (cmpNum(exp, old) === 0) {
      if (this.opt.same_expiry_renewal !== 'successor') return lease;  // the identical lease
      exp = microsecondAfter(old);
    }
    agg.claim = { ...agg.claim, exp };
    return mint({ ...recall(lease, 'lease'), exp });
  }

  release({ lease }, now) {
    const agg = this.leased(lease, now, false);
    agg.claim = null;
    return null;
  }

  worker_snapshot({ task_id: taskId, lease }, now) {
    if (!isStr(taskId)) refuse('function_clause', 'the task id is not a string');
    const agg = this.tasks.get(taskId);
    if (agg === undefined) refuse('not_found', taskId);
    this.workerLease(lease, taskId, now);
    return agg.snap;
  }

  transition({ task_id: taskId, expected_revision: expected, event, authority }, now) {
    if (!isStr(taskId)) refuse('function_clause', 'the task id is not a string');
    if (!isInt(expected) || expected < 0n) refuse('function_clause', 'expected_revision is not a non-negative integer');
    const request = isObj(authority, 'RequestAuthority');
    if (!request && !isObj(authority, 'WorkerAuthority')) {
      refuse('function_clause', 'the authority is neither request nor worker authority');
    }
    if (!isObj(event, 'Event')) refuse('function_clause', 'transition takes an Event');
    const kind = event.f.kind;
    if (this.opt.transition_check_order === 'authority_first') {
      this.authorityShape(taskId, kind, request, authority);
    }
    const agg = this.tasks.get(taskId);
    if (agg === undefined) refuse('not_found', taskId);
    if (request) {
      const value = authority.f.access;
      const a = recall(value, 'access');
      if (a === null) this.forgedRequest(taskId);
      if (a.store !== this.id || !this.sameScope(a, agg) || this.expired(agg, now)) refuse('not_found', taskId);
      this.requestAction(a, taskId, kind);
    } else {
      this.workerLease(authority.f.lease, taskId, now);
      if (!isWorkerKind(kind)) refuse('unauthorized_action', `a worker cannot send ${String(kind)}`);
    }
    const problem = eventProblem(event);
    if (problem !== null) refuse(problem[0], problem[1]);
    const seen = BUG === 'duplicate_applied_twice' ? undefined : agg.seen.get(event.f.id);
    if (seen !== undefined) {
      if (!pyEq(seen.event, event, true)) refuse('event_id_reused', 'the event id was used for another event');
      const r = seen.result.f;
      return make('Transition', ['duplicate', agg.snap, r.effects, r.event_revision, r.committed_at]);
    }
    if (BUG !== 'lost_update' && expected !== agg.snap.f.revision) {
      refuse('conflict', `the revision is ${agg.snap.f.revision}`, agg.snap);
    }
    const committed = this.committedAt(agg.snap.f.task.f.last_updated_at, now);
    const [next, effects] = reduce(agg.snap, event, committed);
    if (next === null) {
      return make('Transition', ['unchanged', agg.snap, effects, agg.snap.f.revision, committed]);
    }
    const task = evolve(next.f.task, { last_updated_at: committed });
    const snap = evolve(next, { task, revision: agg.snap.f.revision + 1n });
    const result = make('Transition', ['applied', snap, effects, snap.f.revision, committed]);
    agg.snap = snap;
    agg.seen.set(event.f.id, { event, result });
    return result;
  }

  forgedRequest(taskId) {
    if (this.opt.forged_request_authority === 'not_found') refuse('not_found', taskId);
    refuse('unauthorized_action', 'the request authority is not an access');
  }

  // An access sends only its own request kind, on its own task.
  requestAction(a, taskId, kind) {
    if (a.kind !== 'update' && a.kind !== 'cancel') refuse('unauthorized_action', `a ${a.kind} access sends no events`);
    if (a.taskId !== taskId) refuse('unauthorized_action', 'the access is for another task');
    if (requestKindOf(kind) !== a.kind) refuse('unauthorized_action', `a ${a.kind} access cannot send ${String(kind)}`);
  }

  // transition_check_order=authority_first: what is refused before the task is read.
  authorityShape(taskId, kind, request, authority) {
    if (request) {
      const a = recall(authority.f.access, 'access');
      if (a === null) this.forgedRequest(taskId);
      if (a.store !== this.id) refuse('not_found', taskId);
      this.requestAction(a, taskId, kind);
      return;
    }
    const lease = recall(authority.f.lease, 'lease');
    if (lease === null) refuse('unauthorized_action', 'the worker authority is not a lease');
    if (lease.store !== this.id || lease.taskId !== taskId) refuse('stale_lease', 'another store\'s or another task\'s lease');
    if (!isWorkerKind(kind)) refuse('unauthorized_action', `a worker cannot send ${String(kind)}`);
  }

  committedAt(last, now) {
    if (BUG === 'committed_at_is_now' || cmpNum(last, now) < 0) return now;
    return this.opt.committed_at_step === 'microsecond' ? microsecondAfter(last) : add(last, 1n);
  }

  reap(_args, now) {
    const at = BUG === 'reaps_one_ms_early' ? now + 1n : now;
    const gone = [...this.tasks.keys()].filter((id) => this.expired(this.tasks.get(id), at)).sort(cmpStr);
    if (this.opt.reap_order === 'expiry') {
      const expiry = (id) => { const t = this.tasks.get(id).snap.f.task.f; return add(t.created_at, t.ttl_ms); };
      gone.sort((x, y) => cmpNum(expiry(x), expiry(y)) || 0);
    }
    for (const id of gone) this.tasks.delete(id);
    return gone;
  }
}

// The reducer: what one event does to a snapshot at `committed`: [new snapshot or null for
// unchanged, effects]. The revision and last_updated_at are the caller's.
function reduce(snap, event, committed) {
  const s = snap.f;
  const task = s.task;
  const data = event.f.data;
  if (terminal(task.f.status)) return [null, new PyDict()];
  switch (event.f.kind) {
    case 'input_requested': {
      const key = dataGet(data, 'key');
      const request = dataGet(data, 'request');
      if (s.input_history.has(key)) refuse('duplicate_input_key', 'the input key was requested before');
      const open = copyDict(task.f.input_requests); open.set(key, request);
      const history = copyDict(s.input_history); history.set(key, request);
      return [evolve(snap, { task: evolve(task, { status: 'input_required', input_requests: open }), input_history: history }), new PyDict()];
    }
    case 'input_responses_accepted': {
      const responses = dataGet(data, 'responses');
      const matched = new PyDict();
      if (isMapping(responses)) {
        for (const [k, v] of responses.entries()) if (task.f.input_requests.has(k)) matched.set(k, v);
      }
      if (matched.size === 0) return [null, new PyDict([['accepted_input_responses', new PyDict()]])];
      const left = new PyDict([...task.f.input_requests.entries()].filter(([k]) => !matched.has(k)));
      const accepted = copyDict(s.accepted_input_responses);
      for (const [k, v] of matched.entries()) accepted.set(k, v);
      const status = left.size === 0 ? 'working' : 'input_required';
      return [evolve(snap, { task: evolve(task, { status, input_requests: left }), accepted_input_responses: accepted }),
        new PyDict([['accepted_input_responses', matched]])];
    }
    case 'retry_requested': {
      const error = dataGet(data, 'error');
      const message = dataGet(data, 'statusMessage');
      const failure = new PyDict([['error', error], ['statusMessage', message]]);
      const delays = s.work === null ? [] : (items(s.work.f.retry_policy) || []);
      const count = s.retry_count;
      if (count < BigInt(delays.length)) {
        const delay = delays[Number(count)];
        const retryAt = add(committed, delay);
        const retry = new PyDict([['disposition', 'scheduled'], ['retry_at', retryAt], ['delay_ms', delay], ['retry_count', count + 1n]]);
        return [evolve(snap, { retry_count: count + 1n, retry_at: retryAt, last_failure: failure }), new PyDict([['retry', retry]])];
      }
      const failed = ended(task, 'failed', null, error, message);
      const retry = new PyDict([['disposition', 'exhausted'], ['retry_at', null], ['delay_ms', null], ['retry_count', count]]);
      return [evolve(snap, { task: failed, retry_at: null, last_failure: failure }), new PyDict([['retry', retry]])];
    }
    case 'completed':
      return [evolve(snap, { task: ended(task, 'completed', dataGet(data, 'result'), null, null), retry_at: null }), new PyDict()];
    case 'failed':
      return [evolve(snap, { task: ended(task, 'failed', null, dataGet(data, 'error'), dataGet(data, 'statusMessage')), retry_at: null }), new PyDict()];
    case 'cancelled': {
      const message = BUG === 'cancel_keeps_message' ? task.f.status_message : CANCEL_MESSAGE;
      return [evolve(snap, { task: ended(task, 'cancelled', null, null, message), retry_at: null }), new PyDict()];
    }
    default:
      throw new Error(`no reducer for ${String(event.f.kind)}`);  // the authority let it through
  }
}

function ended(task, status, result, error, message) {
  return evolve(task, { status, result, error, status_message: message, input_requests: new PyDict() });
}

function copyDict(d) { return new PyDict(d.entries()); }

// --- what create and transition validate -------------------------------------------------------

function taskProblem(task) {
  const t = task.f;
  if (!isName(t.id)) return 'the task id is not a non-empty string';
  if (!isStr(t.status) || !STATUSES.includes(t.status)) return 'no such status';
  if (t.status_message !== null && !isStr(t.status_message)) return 'status_message is neither None nor a string';
  if (!isNumber(t.created_at) || !isNumber(t.last_updated_at)) return 'the times are not numbers';
  if (cmpNum(t.last_updated_at, t.created_at) < 0) return 'last_updated_at precedes created_at';
  for (const name of ['ttl_ms', 'poll_interval_ms']) {
    if (t[name] !== null && !isPositive(t[name])) return `${name} is neither None nor a positive integer`;
  }
  if (!isMapping(t.input_requests) || t.input_requests.size > 0) return 'a task is created with no input requests';
  for (const name of ['result', 'error']) {
    if (t[name] !== null && !(isMapping(t[name]) && jsonSafe(t[name]))) return `${name} is neither None nor a JSON-safe mapping`;
  }
  const result = t.result !== null; const error = t.error !== null;
  const fits = {
    working: !result && !error,
    input_required: false,
    completed: result && !error,
    failed: error && !result,
    cancelled: !result && !error,
  }[t.status];
  if (!fits) return `a ${t.status} task cannot carry that result and error`;
  return null;
}

function workProblem(work) {
  const w = work.f;
  if (!isName(w.idempotency_key) || !isName(w.type)) return 'idempotency_key and type must be non-empty strings';
  if (!isMapping(w.input) || !jsonSafe(w.input)) return 'the work input is not a JSON-safe mapping';
  const delays = items(w.retry_policy);
  if (delays === null) return 'the retry policy is not a list of delays';
  for (const d of delays) {
    if (!isInt(d) || d < 0n || d > MAX_RETRY_DELAY_MS) return `retry delays are integers from 0 to ${MAX_RETRY_DELAY_MS}`;
  }
  return null;
}

// The fields each event kind's data holds, exactly (the contract's EVENT_FIELDS).
const EVENT_FIELDS = {
  input_requested: ['key', 'request'],
  input_responses_accepted: ['responses'],
  retry_requested: ['error', 'statusMessage'],
  completed: ['result'],
  failed: ['error', 'statusMessage'],
  cancelled: [],
};

// A JSON value as the contract's json_safe means it: null, a boolean, a string, an integer, a
// finite float, a list, or a mapping with string keys, all the way down (no tuple, no bytes).
function jsonSafe(v) {
  if (v === null || typeof v === 'boolean' || typeof v === 'string' || typeof v === 'bigint') return true;
  if (v instanceof PyFloat) return Number.isFinite(v.v);
  if (Array.isArray(v)) return v.every(jsonSafe);
  if (isMapping(v)) return v.ks.every(isStr) && v.vs.every(jsonSafe);
  return false;
}

const jsonMapping = (v) => isMapping(v) && jsonSafe(v);

function dataProblem(kind, data) {
  if (kind === 'input_requested') {
    if (!isName(data.get('key'))) return ['invalid_input_key', 'an input key is a non-empty string'];
    const request = data.get('request');
    if (!jsonMapping(request) || !isName(dataGet(request, 'method'))) {
      return ['invalid_input_request', 'a request is a JSON-safe mapping with a method'];
    }
  } else if (kind === 'input_responses_accepted') {
    const responses = data.get('responses');
    if (!jsonMapping(responses) || !responses.ks.every(isName) || !responses.vs.every(isMapping)) {
      return ['invalid_input_responses', 'responses map non-empty keys to mappings'];
    }
  } else if (kind === 'completed') {
    if (!jsonMapping(data.get('result'))) return ['invalid_task_result', 'a result is a JSON-safe mapping'];
  } else if (kind === 'retry_requested' || kind === 'failed') {
    if (!jsonMapping(data.get('error'))) return ['invalid_task_error', 'an error is a JSON-safe mapping'];
    const message = data.get('statusMessage');
    if (message !== null && !isStr(message)) return ['invalid_status_message', 'statusMessage is None or a string'];
  }
  return null;
}

// Event.validate's order: the id, the kind, the data's fields, then their values.
function eventProblem(event) {
  const e = event.f;
  if (!isName(e.id)) return ['invalid_event_id', 'an event id is a non-empty string'];
  if (!isStr(e.kind) || !Object.prototype.hasOwnProperty.call(EVENT_FIELDS, e.kind)) {
    return ['unsupported_event_kind', 'no such event kind'];
  }
  const wanted = EVENT_FIELDS[e.kind];
  if (!isMapping(e.data) || e.data.size !== wanted.length || !wanted.every((k) => e.data.has(k))) {
    return ['invalid_event_data', `${e.kind} data holds exactly its own fields`];
  }
  return dataProblem(e.kind, e.data);
}

// --- the protocol ------------------------------------------------------------------------------

const OPERATIONS = {
  authorize: ['context', 'action'],
  create: ['task', 'work', 'access'],
  get: ['task_id', 'access'],
  claim: ['task_id', 'owner_id', 'lease_ms'],
  claim_next: ['owner_id', 'lease_ms'],
  renew: ['lease', 'lease_ms'],
  release: ['lease'],
  transition: ['task_id', 'expected_revision', 'event', 'authority'],
  worker_snapshot: ['task_id', 'lease'],
  reap: [],
};

let helloOptions = {};
let shuttingDown = false;

// The options of a run or a store, checked: every one followed, with the defaults filled in.
function readOptions(raw, base) {
  const out = { ...base };
  if (raw === undefined || raw === null) return out;
  if (!(raw instanceof Map)) throw new Fault('options must be an object of strings');
  for (const [name, value] of raw) {
    if (!isStr(value)) throw new Fault(`option ${name}: the value must be a string`);
    if (Object.prototype.hasOwnProperty.call(CHOICES, name)) {
      if (!CHOICES[name].includes(value)) {
        throw new Fault(`option ${name}=${value}: cannot follow it (this store follows ${CHOICES[name].join(', ')})`);
      }
      out[name] = value;
    } else if (SETTINGS.includes(name)) {
      if (value.trim() !== 'infinity' && !/^\s*[+-]?\d+(_\d+)*\s*$/.test(value)) {
        throw new Fault(`option ${name}=${value}: cannot follow it (use infinity or an integer)`);
      }
      out[name] = value;
    } else {
      throw new Fault(`option ${name}: cannot follow it (not an option of ${CONTRACT})`);
    }
  }
  return out;
}

function storeOptions(options) {
  const out = {};
  for (const [name, values] of Object.entries(CHOICES)) out[name] = options[name] || values[0];
  for (const name of SETTINGS) {
    const value = (options[name] || 'infinity').trim();
    out[name] = value === 'infinity' ? null : BigInt(value.replace(/_/g, ''));
  }
  return out;
}

function openSpace(namespace, options) {
  let space = spaces.get(namespace);
  if (space === undefined) {
    space = { tasks: new Map(), openings: 0 };
    spaces.set(namespace, space);
  }
  space.openings += 1;
  space.identity = BUG === 'identity_per_process' ? `${namespace}#${space.openings}` : namespace;
  space.options = storeOptions(options);
  space.open = true;
}

function call(msg) {
  const namespace = msg.get('namespace');
  const space = spaces.get(namespace);
  if (!isStr(namespace) || space === undefined || !space.open) {
    throw new Fault(`unknown namespace ${JSON.stringify(String(namespace))} (not open)`);
  }
  const op = msg.get('op');
  if (!isStr(op) || !Object.prototype.hasOwnProperty.call(OPERATIONS, op)) {
    throw new Fault(`unknown op ${JSON.stringify(String(op))}`);
  }
  const now = msg.get('now');
  if (!isInt(now)) throw new Fault('a call carries now, an integer');
  const rawArgs = msg.has('args') ? msg.get('args') : new Map();
  if (!(rawArgs instanceof Map)) throw new Fault('args must be an object');
  const args = {};
  for (const [name, value] of rawArgs) {
    if (!OPERATIONS[op].includes(name)) throw new Fault(`${op} takes no argument ${name}`);
    try {
      args[name] = decode(value);
    } catch (e) {
      if (e instanceof DecodeError) throw new Fault(`cannot decode argument ${name}: ${e.message}`);
      throw e;
    }
  }
  for (const name of OPERATIONS[op]) {
    if (!Object.prototype.hasOwnProperty.call(args, name)) throw new Fault(`${op} needs its argument ${name}`);
  }
  const store = new Store(space);
  return store[op](args, now);
}

function answer(id, body) { return `{"id":${id === null ? 'null' : id.toString()},${body}}`; }
function faultLine(id, reason) { return answer(id, `"fault":${JSON.stringify(reason)}`); }

// One request line -> one reply line (or null for a line to ignore).
function handle(line) {
  let msg;
  try {
    msg = parseJson(line);
  } catch (e) {
    if (e instanceof DecodeError) return faultLine(null, `not JSON: ${e.message}`);
    throw e;
  }
  if (!(msg instanceof Map)) return faultLine(null, 'a request is a JSON object');
  const id = msg.get('id');
  if (!isInt(id) || id <= 0n) return faultLine(null, 'a request carries a positive integer id');
  const type = msg.get('type');
  try {
    switch (type) {
      case 'hello': {
        if (msg.get('protocol') !== PROTOCOL) throw new Fault(`cannot speak protocol ${JSON.stringify(msg.get('protocol'))}: only ${PROTOCOL}`);
        if (msg.get('contract') !== CONTRACT) throw new Fault(`does not implement contract ${JSON.stringify(msg.get('contract'))}: only ${CONTRACT}`);
        helloOptions = readOptions(msg.get('options'), {});
        return answer(id, `"ok":${JSON.stringify({ name: NAME, version: VERSION, capabilities: CAPABILITIES })}`);
      }
      case 'open': {
        const namespace = msg.get('namespace');
        if (!isStr(namespace)) throw new Fault('open needs a namespace (a string)');
        // The options of open, when it has them, replace the run's (hello's) for this store.
        const own = msg.get('options');
        openSpace(namespace, own === undefined || own === null ? helloOptions : readOptions(own, {}));
        return answer(id, '"ok":null');
      }
      case 'close': {
        const space = spaces.get(msg.get('namespace'));
        if (space === undefined) throw new Fault(`unknown namespace ${JSON.stringify(String(msg.get('namespace')))}`);
        space.open = false;
        return answer(id, '"ok":null');
      }
      case 'discard':
        spaces.delete(msg.get('namespace'));
        return answer(id, '"ok":null');
      case 'call':
        try {
          return answer(id, `"ok":${encode(call(msg))}`);
        } catch (e) {
          if (!(e instanceof Refusal)) throw e;
          return answer(id, `"error":{"code":${JSON.stringify(e.code)},"detail":${JSON.stringify(e.detail)},"payload":${encode(e.payload)}}`);
        }
      case 'shutdown':
        shuttingDown = true;
        process.stdout.write(answer(id, '"ok":null') + '\n', () => process.exit(0));
        return null;
      default:
        throw new Fault(`unknown type ${JSON.stringify(String(type))}`);
    }
  } catch (e) {
    if (e instanceof Fault) return faultLine(id, e.message);
    process.stderr.write(`internal error on request ${id}: ${e && e.stack ? e.stack : e}\n`);
    return faultLine(id, `internal error: ${e && e.message ? e.message : e}`);
  }
}

function main() {
  if (BUG !== null) process.stderr.write(`snodo_tasks.js: bug ${BUG} switched on: ${BUGS[BUG]}\n`);
  let buffer = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffer += chunk;
    let end;
    while (!shuttingDown && (end = buffer.indexOf('\n')) >= 0) {
      let line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line.trim() === '') continue;
      const reply = handle(line);
      if (reply !== null) process.stdout.write(reply + '\n');
    }
  });
  process.stdin.on('end', () => {
    if (shuttingDown) return;
    if (buffer.trim() !== '') {
      const reply = handle(buffer);
      if (reply !== null) process.stdout.write(reply + '\n');
    }
    process.stdout.write('', () => process.exit(0));
  });
}

main();
