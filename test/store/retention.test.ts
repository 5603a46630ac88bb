/**
 * Retention on every backend against the model's reading of the rules
 * (test/support/model-retention.ts): the real recording and a simulated
 * network with amendments, ingested through the real ingester in small
 * groups, so that the writer prunes between them as a live run does, then
 * every read compared with the model's (test/support/compare-model.ts).
 * Also: a window applied at once to a store kept whole, a store of the
 * schema before retention migrated and pruned, and what a writer says when
 * it opens a store pruned with a shorter window.
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Block } from '../../src/domain/block.js';
import { STATUS } from '../../src/domain/enums.js';
import { parseRetention, type Retention } from '../../src/domain/retention.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { ingest } from '../../src/ingest/ingester.js';
import { databasePath } from '../../src/store/location.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openStore, openWriter } from '../../src/store/open.js';
import { writeBlocks } from '../../src/store/store.js';
import { BACKENDS, type Backend, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';
import { assertAnswersAsModel } from '../support/compare-model.js';
import { createModelStore, latestRows, orderVersions, replay, type ModelState } from '../support/model.js';
import { retain } from '../support/model-retention.js';
import { postgresToVersion4, sqliteToVersion7 } from '../support/previous-schema.js';
import { realRecording } from '../support/real-recording.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-retention-'));
const stores: FreshStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

const windowOf = (text: string): Retention & { kind: 'window' } => parseRetention(text) as Retention & { kind: 'window' };

async function fresh(backend: Backend, label: string): Promise<FreshStore> {
  const store = await backend.fresh(dir, `${label}-${stores.length}`);
  stores.push(store);
  return store;
}

/** Ingests `file` through the real ingester, 25 blocks a group, pruning between groups; then until nothing older is answered. */
async function ingested(store: FreshStore, file: string, retention: Retention, notices: string[] = []): Promise<void> {
  const writer = await openWriter(store.config, { retention, onNotice: (m) => notices.push(m) });
  try {
    await ingest(fileSource(file), writer, { commit: { maxBlocks: 25 } });
    await writer.prune();
  } finally {
    await writer.close();
  }
}

/** What pruning must have done to `state` for a test to say something: the kinds of rows the rules speak of. */
function pruned(everything: ModelState, kept: ModelState) {
  const forgotten = [...everything.orders.keys()].filter((id) => !kept.orders.has(id));
  const [versionsBefore, versionsKept] = [orderVersions(everything), orderVersions(kept)];
  const lostVersions = [...versionsKept].filter(([id, v]) => v.size < versionsBefore.get(id)!.size).length;
  const oldest = kept.blocks[0]!;
  const latest = latestRows(kept);
  const resting = [...kept.orders].filter(([id, o]) =>
    (o.status === STATUS.ACTIVE || o.status === STATUS.PARKED) && latest.get(id)!.height < oldest.height).length;
  return { forgotten: forgotten.length, lostVersions, resting, blocksGone: everything.blocks.length - kept.blocks.length };
}

async function assertAsModel(store: FreshStore, blocks: readonly Block[], windowText: string, what: string) {
  const window = windowOf(windowText);
  const everything = replay(blocks);
  const model = createModelStore(blocks, (s) => retain(s, window.ns));
  const reader = await openStore(store.config, { readOnly: true });
  try {
    await assertAnswersAsModel(reader, model, everything, what);
    const status = await reader.retentionStatus!();
    assert.equal(status.oldestKeptBlock?.height, await model.firstChangeHeight(), `${what}: the oldest kept block reported`);
    assert.equal(status.prunedWith === undefined ? undefined : windowOf(status.prunedWith).ns, status.prunedWith && window.ns);
  } finally {
    await reader.close();
  }
  return pruned(everything, retain(everything, window.ns));
}

for (const backend of BACKENDS) {
  test(`${backend.name}: the real recording under windows of seconds and minutes answers as the rules say`, async (t) => {
    const file = realRecording(t);
    if (file === undefined) return;
    const blocks = await readBlocks(file);
    // Its blocks span ~12 minutes: 1s keeps only what can trade, 20m keeps everything.
    const seen = [];
    for (const w of ['1s', '2m', '5m', '20m']) {
      const store = await fresh(backend, `real-${w}`);
      await ingested(store, file, windowOf(w));
      seen.push(await assertAsModel(store, blocks, w, `window ${w}`));
    }
    const [oneSecond, , fiveMinutes, twenty] = seen;
    assert.ok(oneSecond!.forgotten > 0 && oneSecond!.resting > 0, `1s forgets orders and keeps live ones resting: ${JSON.stringify(oneSecond)}`);
    assert.ok(fiveMinutes!.forgotten > 0 && fiveMinutes!.resting > 0 && fiveMinutes!.blocksGone > 0,
      `5m: orders forgotten, live orders resting across the boundary: ${JSON.stringify(fiveMinutes)}`);
    assert.deepEqual(twenty, { forgotten: 0, lostVersions: 0, resting: 0, blocksGone: 0 }, '20m keeps everything');
  });

  test(`${backend.name}: a simulated network with amendments: versions forgotten, live orders resting`, async () => {
    const file = join(dir, `sim-${stores.length}.events`);
    await writeEventFile(file, { seed: 13, blocks: 160, ordersPerBlock: 5 });
    const blocks = await readBlocks(file);
    // Its live orders change every few seconds, the longest still in 25 s: 8 s leaves some resting.
    for (const [w, resting] of [['8s', true], ['40s', false]] as const) {
      const store = await fresh(backend, `sim-${w}`);
      await ingested(store, file, windowOf(w));
      const what = await assertAsModel(store, blocks, w, `simulated, window ${w}`);
      assert.ok(what.forgotten > 0 && what.lostVersions > 0 && (what.resting > 0) === resting, `${w}: ${JSON.stringify(what)}`);
    }
  });

  test(`${backend.name}: a window applied to a store kept whole prunes it at once; a longer one after says what is gone`, async (t) => {
    const file = realRecording(t);
    if (file === undefined) return;
    const blocks = await readBlocks(file);
    const store = await fresh(backend, 'later');
    await ingested(store, file, { kind: 'archive' });
    const notices: string[] = [];
    const writer = await openWriter(store.config, { retention: windowOf('3m'), onNotice: (m) => notices.push(m) });
    await writer.prune();
    await writer.close();
    assert.deepEqual(notices, [], 'nothing was pruned before');
    await assertAsModel(store, blocks, '3m', 'archive, then 3m');
    for (const [retention, said] of [[windowOf('10m'), true], [{ kind: 'archive' } as const, true], [windowOf('3m'), false], [windowOf('1m'), false]] as const) {
      const heard: string[] = [];
      await (await openWriter(store.config, { retention, onNotice: (m) => heard.push(m) })).close();
      assert.equal(heard.length, said ? 1 : 0, `${JSON.stringify(retention, (_k, v: unknown) => String(v))}: ${heard.join(' | ')}`);
      if (said) assert.match(heard[0]!, /pruned with a retention of 3m: what that pruned is gone/);
    }
  });

  test(`${backend.name}: a store of the schema before retention migrates, then prunes as the rules say`, async (t) => {
    const file = realRecording(t);
    if (file === undefined) return;
    const blocks = await readBlocks(file);
    const store = await fresh(backend, 'previous');
    const writer = await openWriter(store.config);
    await writeBlocks(writer, blocks.slice(0, 700));
    await writer.close();
    if (store.config.databaseUrl === undefined) {
      const db = new Database(databasePath(store.config.dataDir));
      sqliteToVersion7(db);
      db.close();
    } else {
      await postgresToVersion4(store.config.databaseUrl);
    }
    const notices: string[] = [];
    await ingested(store, file, windowOf('4m'), notices);
    await assertAsModel(store, blocks, '4m', 'migrated, then 4m');
    if (store.config.databaseUrl !== undefined) {
      assert.ok(notices.some((n) => /migrating PostgreSQL history into partitions by block height: \d+ of \d+ rows/.test(n)), notices.join(' | '));
    }
  });
}
