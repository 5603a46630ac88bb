/** `ledger-query simulate`: writes a synthetic network's event file. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { loadConfiguration } from '../config/load.js';
import { UsageError } from '../errors.js';
import { writeEventFile } from '../simulate/write.js';
import { bar, StatusLine } from '../status-line.js';
import { helpOf } from './help.js';

/** Writes the simulated network's file, with a progress line on a terminal, and says what it holds. */
export async function simulate(out: string, blocks: number, seed: number, ordersPerBlock: number): Promise<void> {
  mkdirSync(dirname(out), { recursive: true });
  const line = process.stderr.isTTY ? new StatusLine(process.stderr) : undefined;
  const draw = (height: bigint, force = false) => line?.draw(() => {
    const done = Number(height) / blocks;
    return `${bar(done)} ${(done * 100).toFixed(0)}%  simulating block ${height} of ${blocks}`;
  }, force);
  let summary;
  try {
    summary = await writeEventFile(out, { blocks, seed, ordersPerBlock, onBlock: (height) => draw(height) });
    draw(BigInt(blocks), true);
  } finally {
    line?.end();
  }
  // As in the network's own recording, the first height comes twice: a data node keeps the first.
  const repeated = summary.blocks > summary.heights;
  console.log(
    `${out}: ${summary.events} events, ${summary.heights} heights in ${summary.blocks} blocks` +
      `${repeated ? ' (the first twice, as a restarted network sends it)' : ''}, ` +
      `${summary.orders} orders, ${summary.bundles} bundles`,
  );
}

export async function simulateCommand(args: string[]): Promise<void> {
  const config = loadConfiguration('simulate', args);
  if (config.help) return void process.stdout.write(helpOf('simulate'));
  const v = config.values;
  if (v.out === undefined) throw new UsageError('simulate needs --out FILE');
  await simulate(v.out, v.blocks, v.seed, v['orders-per-block']);
}
