/** History rows leave out a message's leading ids only where putting them back gives the very same bytes. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { historyMessage, leadingIdBytes } from '../../src/store/history-message.js';
import { encodeOrder } from '../../src/wire/order-message.js';
import { hex, order } from './helpers.js';

const lowerIds = (n: number) => ({ id: hex(n), market: hex(1000 + (n % 3)), party: hex(2000 + (n % 5)) });

test('a message the network writes loses its three ids, 198 bytes, and gets them back', () => {
  const message = encodeOrder(order(7, { reference: 'ref', remaining: 3n }));
  const ids = lowerIds(7);
  assert.equal(leadingIdBytes(message, ids), 198);
  assert.deepEqual(historyMessage(message.subarray(198), ids), Buffer.from(message));
});

test('any ids of 1 to 127 characters come back byte for byte; the rest is kept whole', () => {
  const text = fc.string({ unit: 'grapheme-ascii', maxLength: 130 });
  fc.assert(fc.property(fc.nat(1000), text, text, fc.string(), (n, market, party, reference) => {
    const o = order(n, { marketId: market, partyId: party, reference });
    const message = encodeOrder(o);
    const ids = { id: o.id, market: market.toLowerCase(), party: party.toLowerCase() };
    const leading = leadingIdBytes(message, ids);
    const fits = (s: string) => s.length >= 1 && s.length <= 127 && s === s.toLowerCase();
    assert.equal(leading > 0, fits(market) && fits(party), `market ${JSON.stringify(market)}, party ${JSON.stringify(party)}`);
    if (leading > 0) assert.deepEqual(historyMessage(message.subarray(leading), ids), Buffer.from(message));
  }));
});

test('ids in another case, out of order, or not the row\'s own keep the message whole', () => {
  const ids = lowerIds(7);
  const upper = encodeOrder(order(7, { partyId: ids.party.toUpperCase() }));
  assert.equal(leadingIdBytes(upper, ids), 0, 'a party in upper case');
  assert.equal(leadingIdBytes(encodeOrder(order(7)), { ...ids, id: hex(8) }), 0, 'another id');
  assert.equal(leadingIdBytes(encodeOrder(order(7, { marketId: '' })), { ...ids, market: '' }), 0, 'no market: the field is left out');
  const message = Buffer.from(encodeOrder(order(7)));
  // Swap the market and party fields: the same ids, not in the network's order.
  const swapped = Buffer.concat([message.subarray(0, 66), message.subarray(132, 198), message.subarray(66, 132), message.subarray(198)]);
  assert.equal(leadingIdBytes(swapped, ids), 0, 'party before market');
  assert.equal(leadingIdBytes(message.subarray(0, 150), ids), 0, 'a message cut short');
});
