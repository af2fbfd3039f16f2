// The kit's examples switch on one known bug at a time (`--bug NAME`, or an environment
// variable; the command line wins), so that a check of the store with the bug can be shown to
// fail the clause that bug breaks.
'use strict';

function usage(program, message) {
  process.stderr.write(`${program}: ${message}\n`);
  process.exit(2);
}

// The bug named on the command line or in `env` (null for none), one of `bugs` (name ->
// description); anything else on the command line, or an unknown name, exits 2 with one line
// on stderr. A bug switched on is logged on stderr.
function bugSwitch({ program, bugs, env, argv = process.argv.slice(2) }) {
  const known = Object.keys(bugs).join(', ');
  let bug = (env && process.env[env]) || null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--bug') {
      if (i + 1 >= argv.length) usage(program, `--bug needs a name (one of: ${known})`);
      bug = argv[++i];
    } else if (arg.startsWith('--bug=')) {
      bug = arg.slice('--bug='.length);
    } else {
      usage(program, `unknown argument ${JSON.stringify(arg)} (usage: ${program} [--bug NAME])`);
    }
  }
  if (bug === '') bug = null;
  if (bug !== null && !Object.prototype.hasOwnProperty.call(bugs, bug)) {
    usage(program, `unknown bug ${JSON.stringify(bug)} (known: ${known})`);
  }
  if (bug !== null) process.stderr.write(`${program}: bug ${bug} switched on: ${bugs[bug]}\n`);
  return bug;
}

module.exports = { bugSwitch };
