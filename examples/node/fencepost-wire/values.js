// The values of the kit's exact codec, and Python's rules on them: what a store needs to compare
// values as the kit's reference model (written in Python) does. null, booleans and strings are
// themselves; an integer is a BigInt; every other value is one of the small classes below, so
// that 1 and 1.0, a tuple and a list, never meet.
'use strict';

class PyFloat { constructor(v) { this.v = v; } }              // a float: 1.0, -0.0, nan
class PyTuple { constructor(items) { this.items = items; } }  // a tuple (a list is an Array)
class PyBytes { constructor(hex) { this.hex = hex; } }        // bytes, as lower-case hex
class Opaque { constructor(text) { this.text = text; } }      // a value a store minted
class Forged { constructor(label) { this.label = label; } }   // a value nobody minted

// A value class of the contract: `type` and its fields by name, in the class's order (the
// order of `f`'s keys, which is the order the codec writes them in).
class PyObj {
  constructor(type, fields) { this.type = type; this.f = fields; }
}

// A mapping with keys of any value, compared as Python compares keys (1 == 1.0 == true), in
// insertion order as a Python dict keeps it.
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

const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

// The value classes of one contract: each one's fields in order, and the defaults of the fields
// that have one (`fencepost protocol CONTRACT` lists the classes).
class ValueClasses {
  constructor(fields, defaults = {}) { this.fields = fields; this.defaults = defaults; }
  has(type) { return typeof type === 'string' && own(this.fields, type); }
  // `type` from its field values, positionally, in the class's order.
  make(type, values) {
    const fields = Object.create(null);
    this.fields[type].forEach((name, i) => { fields[name] = values[i]; });
    return new PyObj(type, fields);
  }
}

const valueClasses = (fields, defaults) => new ValueClasses(fields, defaults);

// A copy of a value class with some fields changed.
function evolve(obj, changes) {
  const fields = Object.create(null);
  for (const name of Object.keys(obj.f)) fields[name] = own(changes, name) ? changes[name] : obj.f[name];
  return new PyObj(obj.type, fields);
}

// --- what a value is ---------------------------------------------------------------------------

const isStr = (x) => typeof x === 'string';
const isInt = (x) => typeof x === 'bigint';                       // never a bool or a float
const isFloat = (x) => x instanceof PyFloat;
const isNumber = (x) => isInt(x) || isFloat(x);                   // not a bool
const isMapping = (x) => x instanceof PyDict;
const isObj = (x, type) => x instanceof PyObj && x.type === type;
// A number as Python sees it: a bool is an int too (true == 1).
const isNumeric = (x) => typeof x === 'bigint' || typeof x === 'boolean' || x instanceof PyFloat;
const asExact = (x) => (typeof x === 'boolean' ? (x ? 1n : 0n) : x);

// --- numbers: exact order and Python's arithmetic ------------------------------------------------

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

// A number as a JS double (an int rounded to the nearest, as Python's float() does).
function toFloat(x) { x = asExact(x); return typeof x === 'bigint' ? Number(x) : x.v; }

// a + b and a - b as Python computes them: int with int is an int, anything with a float a float.
function add(a, b) {
  a = asExact(a); b = asExact(b);
  if (typeof a === 'bigint' && typeof b === 'bigint') return a + b;
  return new PyFloat(toFloat(a) + toFloat(b));
}
function sub(a, b) {
  a = asExact(a); b = asExact(b);
  if (typeof a === 'bigint' && typeof b === 'bigint') return a - b;
  return new PyFloat(toFloat(a) - toFloat(b));
}

// math.ceil: an int as it is, a float rounded up to an int.
function ceilInt(x) { return typeof x === 'bigint' ? x : BigInt(Math.ceil(x.v)); }

// --- equality and string order ---------------------------------------------------------------------

// Python's ==; with `exact`, a bool, an int and a float are different values even when Python
// calls them equal (true == 1 == 1.0), and 0.0 is not -0.0.
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
    return b instanceof PyObj && a.type === b.type && Object.keys(a.f).every((n) => pyEq(a.f[n], b.f[n], exact));
  }
  if (a instanceof PyBytes) return b instanceof PyBytes && a.hex === b.hex;
  if (a instanceof Opaque) return b instanceof Opaque && a.text === b.text;
  return false;  // a forgery equals nothing but itself
}
function seqEq(a, b, exact = false) { return a.length === b.length && a.every((x, i) => pyEq(x, b[i], exact)); }

// Strings in code point order (Python's), not UTF-16's: a sort comparator (<0, 0, >0).
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

module.exports = {
  PyFloat, PyTuple, PyBytes, Opaque, Forged, PyObj, PyDict, ValueClasses, valueClasses, evolve,
  isStr, isInt, isFloat, isNumber, isMapping, isObj, isNumeric,
  cmpNum, toFloat, add, sub, ceilInt, pyEq, cmpStr,
};
