#!/usr/bin/env node
// snodo-tasks over fencepost-wire/1: an in-memory snodo Tasks store (revisioned tasks with
// worker leases) in Node.js 20, no dependencies. The protocol, the exact codec and Python's
// rules on values come from ./fencepost-wire (beside this file, required by its path: no npm
// install); this file is the store and its mapping onto the contract's values.
//
//   node examples/node/snodo_tasks.js [--bug NAME]      (or SNODO_TASKS_BUG=NAME)
//   fencepost check snodo-tasks --adapter "exec:node examples/node/snodo_tasks.js"
//
// The rules follow the snodo-tasks contract (spec/snodo_tasks/ and its notes): the order
// of checks of each operation, and the readings named by the contract's options. See
// README.md beside this file for how the contract maps onto this code.
'use strict';

const {
  serve, refuse, bugSwitch, valueClasses, evolve, PyFloat, PyTuple, PyDict, Opaque,
  isStr, isInt, isNumber, isMapping, isObj, cmpNum, toFloat, add, sub, ceilInt, pyEq, cmpStr,
} = require('./fencepost-wire');

const NAME = 'snodo-tasks-node';
const VERSION = '0.1.0';
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
  reopen_keeps_values: 'a reopened store still honours the accesses and leases it issued before',
};

const BUG = bugSwitch({ program: 'snodo_tasks.js', bugs: BUGS, env: 'SNODO_TASKS_BUG' });

// --- the contract's value classes -----------------------------------------------------------

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
const CLASS_TABLE = valueClasses(CLASSES, DEFAULTS);
const make = (type, values) => CLASS_TABLE.make(type, values);

// 1 us after a time in ms, from the whole number of microseconds (docs/protocol.md: the float
// nearest the exact decimal, never a running sum of 0.001s).
function microsecondAfter(t) {
  return new PyFloat((Math.round(toFloat(t) * 1000) + 1) / 1000);
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
  reopen_claims: ['kept', 'released'],
  reap_order: ['task_id', 'expiry'],
  create_validation_order: ['last', 'after_access'],
};
const SETTINGS = ['max_tasks', 'max_active_tasks_per_scope'];

const isName = (x) => isStr(x) && x !== '';                       // a non-empty string
const isPositive = (x) => isInt(x) && x > 0n;
const terminal = (status) => isStr(status) && TERMINAL.includes(status);
const requestKindOf = (kind) => (kind === 'input_responses_accepted' ? 'update' : kind === 'cancelled' ? 'cancel' : null);
const isWorkerKind = (kind) => isStr(kind) && WORKER_KINDS.includes(kind);
const dataGet = (data, key) => { const v = isMapping(data) ? data.get(key) : undefined; return v === undefined ? null : v; };
const items = (seq) => (seq instanceof PyTuple ? seq.items : Array.isArray(seq) ? seq
  : isMapping(seq) ? seq.ks : isStr(seq) ? Array.from(seq) : null);

// --- what the store keeps ----------------------------------------------------------------------
// A namespace's data (kept across close, dropped by discard) is {tasks: task id -> aggregate}.
// An aggregate is everything stored for one task: {scope, snap, claim, generation, seen: event id
// -> {event, result}}.
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
  // One opening of a namespace: its tasks, the identity its values are minted under, its options.
  constructor(tasks, identity, o) {
    this.tasks = tasks;
    this.id = identity;
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
    // A claim of an earlier boot: live until its deadline (reopen_claims=kept), else released.
    if (claim === null || (claim.store !== this.id && this.opt.reopen_claims === 'released')) return false;
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
    const claim = { owner, token: serial, generation: agg.generation + 1, exp: add(now, leaseMs), store: this.id };
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

serve({
  name: NAME,
  version: VERSION,
  contract: CONTRACT,
  capabilities: CAPABILITIES,
  classes: CLASS_TABLE,
  operations: OPERATIONS,
  choices: CHOICES,
  settings: SETTINGS,
  create: () => ({ tasks: new Map() }),
  // An open while the namespace is closed is a new boot (an open beside an open store shares
  // its boot): the values minted under an earlier boot are another store's, and its claims no
  // longer live. Under reopen_keeps_values there is one boot for ever.
  open: (space) => {
    if (!space.open || space.data.boot === undefined) space.data.boot = (space.data.boot || 0) + 1;
    return new Store(space.data.tasks, BUG === 'reopen_keeps_values' ? space.namespace
      : `${space.namespace}#${space.data.boot}`, space.options);
  },
});
