import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NodeSignature, SignerAdded, SignerRemoved } from '../../src/domain/bundle.js';
import { simulateEvents } from '../../src/simulate/simulate.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { chain, FIXTURE, HEX64 } from './fixture.js';

/** An Ethereum address as events carry it: any case, the prefix too. */
const ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;
const KIND_ADDED = 3;
const KIND_REMOVED = 4;

interface At<T> {
  height: bigint;
  blockTime: bigint;
  value: T;
}

interface Multisig {
  added: At<SignerAdded>[];
  removed: At<SignerRemoved>[];
  signatures: At<NodeSignature>[];
}

function multisig(events: readonly BusEvent[]): Multisig {
  const out: Multisig = { added: [], removed: [], signatures: [] };
  let height = 0n;
  let blockTime = 0n;
  for (const e of events) {
    if (e.kind === 'beginBlock') {
      height = e.height;
      blockTime = e.timestamp;
    } else if (e.kind === 'signerAdded') out.added.push({ height, blockTime, value: e.signerAdded });
    else if (e.kind === 'signerRemoved') out.removed.push({ height, blockTime, value: e.signerRemoved });
    else if (e.kind === 'nodeSignature') out.signatures.push({ height, blockTime, value: e.nodeSignature });
  }
  return out;
}

test('signer-added bundles are well formed and carry their block time and epoch', async () => {
  const { added } = multisig((await chain()).events);
  assert.ok(added.length >= 10, `${added.length} bundles`);
  let previousEpoch = 0n;
  for (const { height, blockTime, value: b } of added) {
    assert.match(b.signatureId, HEX64);
    assert.match(b.validatorId, HEX64);
    assert.match(b.newSigner, ADDRESS);
    assert.match(b.submitter, ADDRESS);
    assert.match(b.nonce, /^[1-9]\d*$/);
    assert.equal(b.timestamp, blockTime);
    assert.equal(b.epochSeq, 1n + (height - 1n) / 10n, 'epochs of ten blocks, from 1');
    assert.ok(b.epochSeq >= previousEpoch);
    previousEpoch = b.epochSeq;
  }
  assert.ok(new Set(added.map((b) => b.value.epochSeq)).size >= 5, 'bundles across many epochs');
  assert.equal(new Set(added.map((b) => b.value.signatureId)).size, added.length, 'signature ids are unique');
  assert.ok(new Set(added.map((b) => b.value.submitter.toLowerCase())).size < added.length, 'submitters repeat');
});

test('bundle addresses come in mixed case, some with an upper-case 0X, some all lower case', async () => {
  const { added } = multisig((await chain()).events);
  const addresses = added.flatMap((b) => [b.value.newSigner, b.value.submitter]);
  for (const [what, list] of Object.entries({
    newSigner: added.map((b) => b.value.newSigner), submitter: added.map((b) => b.value.submitter),
  })) {
    assert.ok(list.some((a) => /[A-F]/.test(a.slice(2))), `${what}: some in mixed case`);
    assert.ok(list.some((a) => /^0x[0-9a-f]{40}$/.test(a)), `${what}: some in lower case`);
  }
  assert.ok(addresses.some((a) => a.startsWith('0X')), 'some with 0X');
});

test('bundle timestamps are their block\'s time, with nanosecond digits', async () => {
  const { added } = multisig((await chain()).events);
  assert.ok(added.every((b) => b.value.timestamp === b.blockTime));
  const offMicro = added.filter((b) => b.value.timestamp % 1000n !== 0n).length;
  assert.ok(offMicro >= added.length - 1, `${offMicro} of ${added.length} off the microsecond`);
});

test('seven validators join; some leave and come back, so a validator has several bundles', async () => {
  const { added, removed } = multisig((await chain()).events);
  const validators = new Set(added.map((b) => b.value.validatorId));
  assert.equal(validators.size, 7);
  assert.ok(removed.length >= 2, `${removed.length} removals`);
  for (const { blockTime, value: r } of removed) {
    assert.ok(validators.has(r.validatorId), 'a known validator leaves');
    assert.match(r.oldSigner, ADDRESS);
    assert.match(r.nonce, /^\d+$/);
    assert.equal(r.timestamp, blockTime);
    assert.ok(r.signatureSubmitters.length >= 1);
    for (const s of r.signatureSubmitters) {
      assert.match(s.signatureId, HEX64);
      assert.match(s.submitter, ADDRESS);
    }
  }
  const rejoined = removed.filter((r) => added.some((a) => a.value.validatorId === r.value.validatorId && a.height > r.height));
  assert.ok(rejoined.length >= 1, 'a removed validator is added again');
  const perValidator = new Map<string, number>();
  for (const a of added) perValidator.set(a.value.validatorId, (perValidator.get(a.value.validatorId) ?? 0) + 1);
  assert.ok([...perValidator.values()].some((n) => n >= 2));
  // A validator is never added twice in a row without a removal in between, nor removed twice.
  const history = new Map<string, string[]>();
  for (const e of (await chain()).events) {
    if (e.kind === 'signerAdded') history.set(e.signerAdded.validatorId, [...(history.get(e.signerAdded.validatorId) ?? []), 'add']);
    if (e.kind === 'signerRemoved') history.set(e.signerRemoved.validatorId, [...(history.get(e.signerRemoved.validatorId) ?? []), 'remove']);
  }
  for (const [id, steps] of history) {
    steps.forEach((s, i) => assert.equal(s, i % 2 === 0 ? 'add' : 'remove', `${id}: ${steps.join(',')}`));
  }
});

test('node signatures sign bundles, arriving before, with and after the bundle', async () => {
  const { added, removed, signatures } = multisig((await chain()).events);
  const addedAt = new Map(added.map((b) => [b.value.signatureId, b.height]));
  const removedAt = new Map(removed.flatMap((r) => r.value.signatureSubmitters.map((s) => [s.signatureId, r.height] as const)));
  let before = 0;
  let same = 0;
  let after = 0;
  for (const { height, value: s } of signatures) {
    assert.equal(s.sig.length, 65);
    const bundleHeight = addedAt.get(s.id) ?? removedAt.get(s.id);
    assert.ok(bundleHeight !== undefined || height > BigInt(FIXTURE.blocks) - 3n, `signature for unknown ${s.id}`);
    if (bundleHeight === undefined) continue;
    assert.equal(s.kind, addedAt.has(s.id) ? KIND_ADDED : KIND_REMOVED);
    if (height < bundleHeight) before++;
    else if (height === bundleHeight) same++;
    else after++;
  }
  assert.ok(before > 5 && same > 5 && after > 5, `before ${before}, same ${same}, after ${after}`);
  // Several validators sign each bundle.
  const signers = new Map<string, Set<string>>();
  for (const { value: s } of signatures) {
    const set = signers.get(s.id) ?? new Set<string>();
    set.add(Buffer.from(s.sig).toString('hex'));
    signers.set(s.id, set);
  }
  const signedBundles = added.filter((b) => (signers.get(b.value.signatureId)?.size ?? 0) >= 3);
  assert.ok(signedBundles.length >= added.length * 0.75, `${signedBundles.length} of ${added.length} bundles signed by three or more`);
  assert.ok(removed.some((r) => r.value.signatureSubmitters.some((s) => signers.has(s.signatureId))), 'removals are signed too');
});

test('nearly every bundle eventually gets signatures', () => {
  // A long run, so that there are enough bundles to count.
  const { added, signatures } = multisig([...simulateEvents({ seed: 3, blocks: 1500, ordersPerBlock: 1 })]);
  const signed = new Set(signatures.map((s) => s.value.id));
  const settled = added.filter((b) => b.height < 1500n - 7n);
  const withSignatures = settled.filter((b) => signed.has(b.value.signatureId)).length;
  assert.ok(settled.length > 50, `${settled.length} bundles`);
  assert.ok(withSignatures >= settled.length * 0.9, `${withSignatures} of ${settled.length}`);
  assert.ok(withSignatures < settled.length || settled.length < 100, 'and a rare one never is');
});
