#!/usr/bin/env node
/**
 * The `ledger-query` command. This module loads nothing until it knows the
 * Node.js it runs on can run the rest: on an older one the embedded store's
 * native driver crashes the process (a segmentation fault) as it loads, so
 * it is refused first, on one line (README, "Node.js versions").
 */
const NEEDED = 22;
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= NEEDED)) {
  // The catalogue's error, loaded on its own: it needs nothing native.
  const { NodeVersionError } = await import('./errors.js');
  const error = new NodeVersionError(`needs Node.js ${NEEDED} or newer; this is ${process.versions.node}`);
  process.stderr.write(`ledger-query: ${error.message}\n`);
  process.exit(error.exitStatus);
}
const { main } = await import('./commands/main.js');
// serve and demo keep running on their open server; exitCode applies when the process ends.
process.exitCode = await main(process.argv.slice(2));
