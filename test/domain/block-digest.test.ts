/**
 * The digest of a block's content (src/domain/block-digest.ts): the same for
 * the same events whatever they came in, and another one for any change of
 * what they say.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Block } from '../../src/domain/block.js';
import { blockDigest, canonicalBlockText } from '../../src/domain/block-digest.js';
import type { Order } from '../../src/domain/order.js';
import { BlockAssembler } from '../../src/ingest/assembler.js';
import { decodeBusEvent, encodeBusEvent } from '../../src/ingest/codec.js';
import type { BusEvent, EventBody } from '../../src/ingest/events.js';
import { busEventFromJson, busEventToJson } from '../../src/ingest/json-codec.js';
import { blockEvents, order } from '../support/events.js';

const U64_MAX = (1n << 64n) - 1n;

/** A block holding every kind of event stored, and every optional part of an order. */
function bodies(over: Partial<Order> = {}): EventBody[] {
  return [
    { kind: 'order', order: order(1, { size: U64_MAX, createdAt: -(2n ** 62n), reason: 0, reference: 'a,b:c é😀', ...over }) },
    { kind: 'order', order: order(2, {
      peggedOrder: { reference: 2, offset: '15' },
      icebergOrder: { peakSize: 5n, minimumVisibleSize: 1n, reservedRemaining: 2n ** 60n },
    }) },
    { kind: 'timeUpdate', timestamp: 5n },
    { kind: 'nodeSignature', nodeSignature: { id: 'ab', sig: new Uint8Array([0, 255, 7]), kind: 3 } },
    { kind: 'signerAdded', signerAdded: {
      signatureId: 's1', validatorId: 'v1', timestamp: 9n, newSigner: '0xA', submitter: '0xB', nonce: '12', epochSeq: 2n ** 63n,
    } },
    { kind: 'signerRemoved', signerRemoved: {
      signatureSubmitters: [{ signatureId: 's2', submitter: '0xC' }, { signatureId: 's3', submitter: '0xD' }],
      validatorId: 'v2', timestamp: 3n, oldSigner: '0xD', nonce: '1', epochSeq: 4n,
    } },
    { kind: 'other' },
  ];
}

/** The block the assembler makes of `events`. */
function assembled(events: BusEvent[]): Block {
  const assembler = new BlockAssembler();
  let block: Block | undefined;
  for (const e of events) block = assembler.push(e) ?? block;
  assert.ok(block, 'the events make a whole block');
  return block;
}

const digestOf = (b: EventBody[]) => blockDigest(assembled(blockEvents(7n, b)));

test('the same events give the same digest from protobuf, from NDJSON and as built', () => {
  const events = blockEvents(7n, bodies());
  const built = assembled(events);
  const fromProtobuf = assembled(events.map((e) => decodeBusEvent(encodeBusEvent(e))));
  const fromJson = assembled(events.map((e) => busEventFromJson(JSON.parse(JSON.stringify(busEventToJson(e))))));
  // The protobuf block keeps the messages as they came, the NDJSON block re-encodes them: bytes are not what is digested.
  assert.ok(fromProtobuf.orderMessages.length === 2 && fromJson.orderMessages.length === 2);
  assert.match(blockDigest(built), /^[0-9a-f]{64}$/);
  assert.equal(blockDigest(fromProtobuf), blockDigest(built));
  assert.equal(blockDigest(fromJson), blockDigest(built));
  // Another encoder may write the same fields in other bytes (here: a field this version does not know, 99 = 1).
  const otherBytes = { ...built, orderMessages: built.orderMessages.map((m) => Buffer.concat([m, Buffer.from([0x98, 0x06, 0x01])])) };
  assert.equal(blockDigest(otherBytes), blockDigest(built));
});

test('any change of what the events say changes the digest', () => {
  const digests = new Map<string, string>([['as built', digestOf(bodies())]]);
  const variant = (what: string, digest: string) => {
    for (const [other, d] of digests) assert.notEqual(digest, d, `${what} has the digest of ${other}`);
    digests.set(what, digest);
  };
  // One digit of a price: the corruption that motivated digests.
  variant('a price digit', digestOf(bodies({ price: '101' })));
  variant('a size', digestOf(bodies({ size: U64_MAX - 1n })));
  variant('no reason instead of reason 0', digestOf(bodies({ reason: undefined })));
  // Where one string ends and the next begins is part of the text.
  variant('a character moved from the reference to the liquidity provision id', digestOf(bodies({ reference: 'a,b:c é', liquidityProvisionId: '😀' })));
  variant('pegged', digestOf(bodies({ peggedOrder: { reference: 0, offset: '' } })));
  const [first, second, ...rest] = bodies();
  variant('two orders in the other order', digestOf([second!, first!, ...rest]));
  variant('without the node signature', digestOf([first!, second!, ...rest.filter((b) => b.kind !== 'nodeSignature')]));
  variant('another signature byte', digestOf(bodies().map((b) =>
    b.kind === 'nodeSignature' ? { ...b, nodeSignature: { ...b.nodeSignature, sig: new Uint8Array([0, 255, 8]) } } : b)));
  variant('another epoch', digestOf(bodies().map((b) =>
    b.kind === 'signerRemoved' ? { ...b, signerRemoved: { ...b.signerRemoved, epochSeq: 5n } } : b)));
  variant('another block time', blockDigest({ ...assembled(blockEvents(7n, bodies())), time: 1n }));
  variant('another height', blockDigest({ ...assembled(blockEvents(7n, bodies())), height: 8n }));
  // Events the store does not keep, and the time updates, are not part of it.
  assert.equal(digestOf(bodies().filter((b) => b.kind !== 'other' && b.kind !== 'timeUpdate')), digests.get('as built'));
});

test('the canonical text is frozen: stored digests of released versions must stay comparable', () => {
  const events = blockEvents(3n, [
    { kind: 'order', order: order(1, { price: '1203', reason: 4 }) },
    { kind: 'nodeSignature', nodeSignature: { id: 'ab', sig: new Uint8Array([1, 2]), kind: 3 } },
  ]);
  const block = assembled(events);
  const o = order(1);
  assert.equal(
    canonicalBlockText(block),
    `10:lq-block/1,3,${block.time},10:test-chain,1,` +
      `64:${o.id},64:${o.marketId},64:${o.partyId},1,4:1203,10,10,1,1,${o.createdAt},1,0,0:,4,0,1,0,-,0:,0,0,-,` +
      '1,2:ab,0102,3,0,0,',
  );
  // SHA-256 of that text, as `printf %s TEXT | sha256sum` gives it.
  assert.equal(blockDigest(block), '72b0a5b4987fbe6f49d12c040bf3aaecd973202606dbec44a3a1eff45aa47276');
});
