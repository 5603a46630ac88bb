/**
 * `node dist/bench/wal-pages.js DIR`: which B-trees the commits still in an
 * embedded store's WAL rewrote, in pages per commit (BENCHMARKS.md,
 * "Archive to 30M order versions"). DIR holds a copy of ledger.db and
 * ledger.db-wal taken while the writer was stopped (kill -STOP, cp, kill
 * -CONT): the copy is opened read-write, so that SQLite reads its WAL.
 *
 * The WAL's layout (a 32-byte header, then frames of a 24-byte header and
 * one page; a frame whose second word is non-zero ends a commit) is
 * SQLite's documented file format; no library reads it.
 */
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: wal-pages.js DIR');
const wal = readFileSync(join(dir, 'ledger.db-wal'));
const pageBytes = wal.readUInt32BE(8);
const salt = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
const commits: number[][] = [];
let pages: number[] = [];
for (let at = 32; at + 24 + pageBytes <= wal.length; at += 24 + pageBytes) {
  // Frames left from before the last reset carry the old salt: the log ends there.
  if (wal.readUInt32BE(at + 8) !== salt[0] || wal.readUInt32BE(at + 12) !== salt[1]) break;
  pages.push(wal.readUInt32BE(at));
  if (wal.readUInt32BE(at + 4) !== 0) {
    commits.push(pages);
    pages = [];
  }
}
const db = new Database(join(dir, 'ledger.db'));
const owner = new Map<number, string>();
for (const { name, pageno } of db.prepare('SELECT name, pageno FROM dbstat').iterate() as IterableIterator<{ name: string; pageno: number }>) {
  owner.set(pageno, name);
}
const leaves = new Map((db.prepare("SELECT name, count(*) AS n FROM dbstat WHERE pagetype = 'leaf' GROUP BY name").all() as { name: string; n: number }[])
  .map((r) => [r.name, r.n]));
const byTree = new Map<string, number>();
for (const commit of commits) {
  for (const page of commit) {
    const tree = owner.get(page) ?? '(free)';
    byTree.set(tree, (byTree.get(tree) ?? 0) + 1);
  }
}
const orders = db.prepare('SELECT count(*) FROM orders_current').pluck().get() as number;
db.close();
const n = commits.length;
const total = [...byTree.values()].reduce((a, b) => a + b, 0);
process.stdout.write(`${n} commits in the WAL, ${(total / n).toFixed(0)} pages of ${pageBytes} bytes each on average; ${orders} orders stored\n\n`);
process.stdout.write('| B-tree | pages per commit | share | leaf pages in all |\n|---|---|---|---|\n');
for (const [name, count] of [...byTree].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
  process.stdout.write(`| ${name} | ${(count / n).toFixed(0)} | ${((100 * count) / total).toFixed(0)}% | ${leaves.get(name) ?? '-'} |\n`);
}
