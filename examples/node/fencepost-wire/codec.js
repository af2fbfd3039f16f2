// The kit's exact JSON codec (docs/protocol.md, "Values"): JSON text <-> the values of
// values.js, keeping what JSON.parse and JSON.stringify lose (1 and 1.0, tuples, bytes, mappings
// with keys that are not strings, value classes, nan and the infinities).
'use strict';

const {
  PyFloat, PyTuple, PyBytes, Opaque, Forged, PyObj, PyDict, ValueClasses,
} = require('./values');

const TAGS = new Set(['__type__', '__tuple__', '__dict__', '__bytes__', '__float__',
  '__opaque__', '__forged_value__', '__ref__', '__forged__']);

const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

// A text or value the codec cannot read: a request holding one is answered with a fault.
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
      if (e === 'u') {
        const hex = s.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) { this.i = i; this.fail('bad \\u escape'); }
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else if (e !== undefined && own(ESCAPES, e)) {
        out += ESCAPES[e];
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

const ESCAPES = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const NAMED_FLOATS = { nan: NaN, inf: Infinity, '-inf': -Infinity };

// JSON text -> raw JSON: objects as Maps, integers as BigInt, other numbers as PyFloat; the
// tags are not resolved (see decode). Throws DecodeError.
function parseJson(text) { return new Parser(text).document(); }

// One tagged object ({"__tuple__": ...} and the like) -> its value; undefined for no tag.
function decodeTag(tag, inner, classes) {
  switch (tag) {
    case '__tuple__':
      if (!Array.isArray(inner)) throw new DecodeError('__tuple__ holds a list');
      return new PyTuple(inner.map((x) => decode(x, classes)));
    case '__dict__': {
      if (!Array.isArray(inner)) throw new DecodeError('__dict__ holds a list');
      const out = new PyDict();
      for (const pair of inner) {
        if (!Array.isArray(pair) || pair.length !== 2) throw new DecodeError('__dict__ holds [key, value] pairs');
        const key = decode(pair[0], classes);
        if (Array.isArray(key) || key instanceof PyDict) throw new DecodeError('unhashable dict key');
        out.set(key, decode(pair[1], classes));
      }
      return out;
    }
    case '__bytes__':
      if (typeof inner !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(inner)) throw new DecodeError('__bytes__ holds hex digits');
      return new PyBytes(inner.toLowerCase());
    case '__float__':
      if (typeof inner !== 'string' || !own(NAMED_FLOATS, inner)) throw new DecodeError('__float__ holds nan, inf or -inf');
      return new PyFloat(NAMED_FLOATS[inner]);
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
      return undefined;
  }
}

// Raw parsed JSON -> values (the tags resolved), as the kit's codec decodes them. `classes`
// (a ValueClasses) says which value classes exist; any other is a DecodeError.
function decode(raw, classes = EMPTY) {
  if (Array.isArray(raw)) return raw.map((x) => decode(x, classes));
  if (!(raw instanceof Map)) return raw;
  if (raw.size === 1) {
    const [[tag, inner]] = raw;
    const tagged = decodeTag(tag, inner, classes);
    if (tagged !== undefined) return tagged;
  }
  if (raw.has('__type__')) {
    const type = raw.get('__type__');
    if (!classes.has(type)) throw new DecodeError(`unknown value class ${JSON.stringify(type)}`);
    return valueObject(type, raw, classes);
  }
  const out = new PyDict();
  for (const [k, v] of raw) out.set(k, decode(v, classes));
  return out;
}

const EMPTY = new ValueClasses({});

// {"__type__": type, field: value, ...} -> a PyObj: every field of the class, by name (a field
// left out takes its default, when it has one).
function valueObject(type, raw, classes) {
  const names = classes.fields[type];
  for (const key of raw.keys()) {
    if (key !== '__type__' && !names.includes(key)) throw new DecodeError(`${type} has no field ${key}`);
  }
  const fields = Object.create(null);
  const defaults = classes.defaults[type] || {};
  for (const name of names) {
    if (raw.has(name)) fields[name] = decode(raw.get(name), classes);
    else if (name in defaults) fields[name] = defaults[name];
    else throw new DecodeError(`${type} needs its field ${name}`);
  }
  return new PyObj(type, fields);
}

function floatText(v) {
  if (Number.isNaN(v)) return '{"__float__":"nan"}';
  if (v === Infinity) return '{"__float__":"inf"}';
  if (v === -Infinity) return '{"__float__":"-inf"}';
  if (Object.is(v, -0)) return '-0.0';
  const s = String(v);  // the shortest text that reads back as v
  return /[.eE]/.test(s) ? s : s + '.0';
}

// Values -> JSON text in the exact codec. A JS number is written as a float (an integer is a
// BigInt); undefined as null.
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
    for (const name of Object.keys(v.f)) parts.push(JSON.stringify(name) + ':' + encode(v.f[name]));
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

module.exports = { TAGS, DecodeError, parseJson, decode, encode };
