// fencepost-wire: write a fencepost-wire/1 adapter (docs/protocol.md of the Fencepost kit) in
// Node.js. serve() owns the protocol; values.js holds the codec's values and Python's rules on
// them; codec.js reads and writes them. README.md documents every name exported here.
'use strict';

const values = require('./values');
const codec = require('./codec');
const serving = require('./serve');
const { bugSwitch } = require('./switches');

module.exports = { ...values, ...codec, ...serving, bugSwitch };
