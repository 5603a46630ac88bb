/**
 * What the EXPLAIN tests of both backends ask (./sqlite/plans.test.ts,
 * ./postgres/plans.test.ts): a skewed book, every filter shape with the index
 * that must drive it, and page requests of both orderings and modes, with and
 * without a cursor.
 */
import { STATUS, TIF, TYPE } from '../../src/domain/enums.js';
import type { Block } from '../../src/domain/block.js';
import type { BundleFilter, BundleKey } from '../../src/domain/bundle.js';
import { NETWORK_PARTY, type Order, type OrderFilter, type OrderKey } from '../../src/domain/order.js';
import type { PageRequest } from '../../src/domain/page.js';
import { block, hex, order, random, T0 } from './helpers.js';

/**
 * A skewed book, like a real one: most orders filled or cancelled, a few
 * rejected or parked, few network orders, few GFA, 2% live; 100 orders and
 * a bundle per block.
 */
export function skewedBook(blocks: number): Block[] {
  const rnd = random(99);
  let n = 0;
  const out: Block[] = [];
  for (let h = 1; h <= blocks; h++) {
    const orders: Order[] = [];
    for (let i = 0; i < 100; i++) {
      n++;
      const r = rnd();
      const status = r < 0.02 ? STATUS.ACTIVE : r < 0.025 ? STATUS.PARKED : r < 0.03 ? STATUS.REJECTED : r < 0.6 ? STATUS.FILLED : STATUS.CANCELLED;
      const network = rnd() < 0.01;
      orders.push(order(n, {
        status,
        type: network ? TYPE.NETWORK : TYPE.LIMIT,
        partyId: network ? NETWORK_PARTY : hex(0xa00 + Math.floor(rnd() * 200)),
        marketId: hex(0xb00 + Math.floor(rnd() * 10)),
        timeInForce: rnd() < 0.01 ? TIF.GFA : TIF.GTC,
        reference: rnd() < 0.3 ? `ref-${n}` : '',
        createdAt: T0 + BigInt(n),
      }));
    }
    out.push(block(h, {
      orders,
      signersAdded: [{ signatureId: hex(h), validatorId: hex(0xc0 + (h % 4)), timestamp: T0 + BigInt(h), newSigner: 'n', submitter: '0xs', nonce: '1', epochSeq: BigInt(h % 5) }],
    }));
  }
  return out;
}

export const cursorKey: OrderKey = { createdAt: T0 + 2000n, id: hex(2000) };

export function requests<K>(cursor: K): PageRequest<K>[] {
  const out: PageRequest<K>[] = [];
  for (const newestFirst of [true, false]) {
    for (const mode of ['first', 'last'] as const) {
      out.push({ newestFirst, mode, limit: 50 }, { newestFirst, mode, limit: 50, cursor });
    }
  }
  return out;
}

export const ORDER_SHAPES: [string, OrderFilter, string, boolean][] = [
  // name, filter, the index that must drive it, whether branches are merged
  ['no filter', {}, 'orders_by_time', false],
  ['rare statuses', { statuses: [STATUS.REJECTED, STATUS.PARKED] }, 'orders_by_status', true],
  ['one rare status', { statuses: [STATUS.PARKED] }, 'orders_by_status', false],
  ['common statuses', { statuses: [STATUS.FILLED, STATUS.CANCELLED] }, 'orders_by_status', true],
  ['every status', { statuses: [STATUS.ACTIVE, STATUS.PARKED, STATUS.REJECTED, STATUS.FILLED, STATUS.CANCELLED] }, 'orders_by_time', false],
  ['rare type', { types: [TYPE.NETWORK] }, 'orders_by_type', false],
  ['rare time in force', { timeInForces: [TIF.GFA, TIF.GFN] }, 'orders_by_time_in_force', true],
  ['excludeLiquidity', { excludeLiquidity: true }, 'orders_by_time', false],
  ['one party', { partyIds: [hex(0xa01)] }, 'orders_by_party', false],
  ['parties', { partyIds: [hex(0xa01), hex(0xa02), NETWORK_PARTY] }, 'orders_by_party', true],
  ['network orders', { partyIds: [NETWORK_PARTY], types: [TYPE.NETWORK] }, 'orders_by_', false],
  ['markets', { marketIds: [hex(0xb01), hex(0xb02)] }, 'orders_by_market', true],
  ['reference', { reference: 'ref-7' }, 'orders_by_reference', false],
  ['empty reference', { reference: '' }, 'orders_by_time', false],
  ['date range', { dateRange: { start: T0 + 100n, end: T0 + 3000n } }, 'orders_by_time', false],
  ['live only', { liveOnly: true }, 'orders_live_by_time', false],
  ['live party', { liveOnly: true, partyIds: [hex(0xa03)] }, 'orders_live_by_party', false],
  ['live markets', { liveOnly: true, marketIds: [hex(0xb03), hex(0xb04)] }, 'orders_live_by_market', true],
  ['party and market', { partyIds: [hex(0xa01)], marketIds: [hex(0xb01)] }, 'orders_by_party', false],
  ['party, status, dates', { partyIds: [hex(0xa05)], statuses: [STATUS.FILLED], dateRange: { start: T0 + 10n } }, 'orders_by_party', false],
  ['reference beats party', { reference: 'ref-9', partyIds: [hex(0xa01)], liveOnly: true }, 'orders_by_reference', false],
  ['everything', {
    statuses: [STATUS.ACTIVE, STATUS.PARKED], types: [TYPE.LIMIT], timeInForces: [TIF.GTC], excludeLiquidity: true,
    partyIds: [hex(0xa01), hex(0xa02)], marketIds: [hex(0xb01), hex(0xb02), hex(0xb03)], dateRange: { start: T0, end: T0 + 4000n }, liveOnly: true,
  }, 'orders_live_by_party', true],
];

export const BUNDLE_SHAPES: [string, BundleFilter, string][] = [
  ['no filter', {}, 'signer_added_by_time'],
  ['nodeId', { nodeId: hex(0xc1) }, 'signer_added_by_validator'],
  ['epochSeq', { epochSeq: 2n }, 'signer_added_by_epoch'],
  ['submitter', { submitter: '0xs' }, 'signer_added_by_submitter'],
  ['all', { nodeId: hex(0xc1), epochSeq: 2n, submitter: '0xs' }, 'signer_added_by_validator'],
];

export const BUNDLE_CURSOR: BundleKey = { timestamp: T0 + 20n, signatureId: hex(20) };
