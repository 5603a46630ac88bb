/**
 * The shapes the API answers, as JSON Schemas for the OpenAPI document:
 * the nodes as ../../store/node-json.ts writes them (keys in the proto's
 * declaration order, 64-bit integers as strings, enums by name), the
 * connection (../connection.ts), the error body (../errors.ts) and the
 * operators' endpoints. test/api/openapi.test.ts checks real answers against
 * them, so a field added to a node and not here fails it.
 */
import { OrderError, OrderStatus, OrderType, PeggedReference, Side, TimeInForce, type EnumTable } from '../../domain/enums.js';
import { ERROR_DETAIL_TYPE } from '../errors.js';
import { enumNames, type JsonSchema } from '../parameters.js';

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const INT64 = { type: 'string', pattern: '^-?[0-9]+$' } as const;
const UINT64 = { type: 'string', pattern: '^[0-9]+$' } as const;
const HEX_ID = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
const int64 = (description: string): JsonSchema => ({ ...INT64, description });
const uint64 = (description: string): JsonSchema => ({ ...UINT64, description });

const enumSchema = (table: EnumTable): JsonSchema => ({
  type: 'string', enum: enumNames(table),
  description: `${table.typeName}, by name (a number no name is known for would come as a bare JSON number).`,
});

/** An object whose every property is always there, unless listed in `optional`. */
function object(properties: Record<string, JsonSchema>, optional: readonly string[] = [], description?: string): JsonSchema {
  return {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    properties,
    required: Object.keys(properties).filter((key) => !optional.includes(key)),
    additionalProperties: false,
  };
}

/** A listing's connection: `{"<field>":{"edges":[{"node":...,"cursor":"..."}],"pageInfo":{...}}}`. */
export function connectionSchema(field: string, node: string): JsonSchema {
  return object({
    [field]: object({
      edges: { type: 'array', items: object({ node: ref(node), cursor: { type: 'string', description: 'Opaque; give it as pagination.after or pagination.before.' } }) },
      pageInfo: ref('PageInfo'),
    }),
  });
}

const blockJson = (description: string): JsonSchema => ({
  anyOf: [
    object({ height: uint64('Block height.'), time: int64('Block time, Unix ns.'), chainId: { type: 'string' } }),
    { type: 'null' },
  ],
  description,
});

export const SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  OrderStatus: enumSchema(OrderStatus),
  OrderType: enumSchema(OrderType),
  TimeInForce: enumSchema(TimeInForce),
  Side: enumSchema(Side),
  PeggedReference: enumSchema(PeggedReference),
  OrderError: enumSchema(OrderError),
  PeggedOrder: object({ reference: ref('PeggedReference'), offset: { type: 'string', description: 'Price offset, a decimal integer.' } }),
  IcebergOrder: object({
    peakSize: uint64('Visible size at most.'),
    minimumVisibleSize: uint64('Refreshed when the visible size falls below this.'),
    reservedRemaining: uint64('Size still hidden.'),
  }),
  Order: object({
    id: { ...HEX_ID, description: 'Order id, lower-case hex.' },
    marketId: { ...HEX_ID, description: 'Market id, lower-case hex.' },
    partyId: { type: 'string', pattern: '^([0-9a-f]{64}|network)$', description: 'Party id, lower-case hex, or `network`.' },
    side: ref('Side'),
    price: { type: 'string', pattern: '^[0-9]*$', description: 'Price, an unsigned decimal integer (up to 256 bits).' },
    size: uint64('Size.'),
    remaining: uint64('Size left to trade.'),
    timeInForce: ref('TimeInForce'),
    type: ref('OrderType'),
    createdAt: int64('Unix ns, rounded down to the microsecond.'),
    status: ref('OrderStatus'),
    expiresAt: int64('Unix ns, rounded down to the microsecond; 0 for none.'),
    reference: { type: 'string', description: 'The client\'s reference.' },
    reason: { ...ref('OrderError'), description: 'Why the order was rejected or stopped: only on such orders.' },
    updatedAt: int64('Unix ns, rounded down to the microsecond; 0 if never updated.'),
    version: uint64('1 when created, one more at each amendment.'),
    batchId: uint64('The batch of the order\'s last change.'),
    peggedOrder: { anyOf: [ref('PeggedOrder'), { type: 'null' }], description: 'null but on pegged orders.' },
    liquidityProvisionId: { type: 'string', description: 'The liquidity provision that made it, lower-case hex; empty for others.' },
    postOnly: { type: 'boolean' },
    reduceOnly: { type: 'boolean' },
    icebergOrder: { ...ref('IcebergOrder'), description: 'Only on iceberg orders.' },
  }, ['reason', 'icebergOrder'], 'An order\'s current state, as the data node answers it (vega.Order in protobuf JSON).'),
  ERC20MultiSigSignerAddedBundle: object({
    newSigner: { type: 'string', pattern: '^0x[0-9a-f]{40}$', description: 'The signer added, lower-case.' },
    submitter: { type: 'string', pattern: '^0x[0-9a-f]{40}$', description: 'Who may submit it, lower-case.' },
    nonce: { type: 'string' },
    timestamp: int64('Unix ns, rounded down to the microsecond.'),
    signatures: { type: 'string', pattern: '^(0x([0-9a-f]{2})*)?$', description: '`0x` and every validator signature collected, in ascending byte order; empty until one arrives.' },
    epochSeq: uint64('The epoch.'),
  }),
  ERC20MultiSigSignerRemovedBundle: object({
    oldSigner: { type: 'string', pattern: '^0x[0-9a-f]{40}$', description: 'The signer removed, lower-case.' },
    submitter: { type: 'string', pattern: '^0x[0-9a-f]{40}$', description: 'Who may submit it, lower-case: one bundle per submitter.' },
    nonce: { type: 'string' },
    timestamp: int64('Unix ns, rounded down to the microsecond.'),
    signatures: { type: 'string', pattern: '^(0x([0-9a-f]{2})*)?$', description: '`0x` and every validator signature collected, in ascending byte order; empty until one arrives.' },
    epochSeq: uint64('The epoch.'),
  }),
  GetOrderResponse: object({ order: ref('Order') }),
  StreamOrder: {
    type: 'object',
    description: 'An order as the stream sends it (the original\'s stream marshaler): enums as numbers, and fields at their zero value left out.',
    properties: {
      id: HEX_ID, marketId: HEX_ID, partyId: { type: 'string' }, side: { type: 'integer' }, price: { type: 'string' },
      size: UINT64, remaining: UINT64, timeInForce: { type: 'integer' }, type: { type: 'integer' }, createdAt: INT64,
      status: { type: 'integer' }, expiresAt: INT64, reference: { type: 'string' }, reason: { type: 'integer' },
      updatedAt: INT64, version: UINT64, batchId: UINT64,
      peggedOrder: { type: 'object', properties: { reference: { type: 'integer' }, offset: { type: 'string' } } },
      liquidityProvisionId: { type: 'string' }, postOnly: { type: 'boolean' }, reduceOnly: { type: 'boolean' },
      icebergOrder: { type: 'object', properties: { peakSize: UINT64, minimumVisibleSize: UINT64, reservedRemaining: UINT64 } },
    },
  },
  ObserveOrdersFrame: {
    description:
      'One line of the stream (one WebSocket message): first the snapshot of live orders, 50 a frame, `lastPage` on the last; ' +
      'then each block\'s changes, 50 a frame; an `error` frame ends it.',
    oneOf: [
      object({
        result: {
          oneOf: [
            object({ snapshot: object({ orders: { type: 'array', items: ref('StreamOrder') }, lastPage: { type: 'boolean', const: true } }, ['orders', 'lastPage']) }),
            object({ updates: object({ orders: { type: 'array', items: ref('StreamOrder') } }, ['orders']) }),
          ],
        },
      }),
      object({ error: ref('Error') }),
    ],
  },
  PageInfo: object({
    hasNextPage: { type: 'boolean', description: 'A matching row lies beyond the page\'s end.' },
    hasPreviousPage: { type: 'boolean', description: 'A matching row lies before the page\'s start.' },
    startCursor: { type: 'string', description: 'The first row\'s cursor; empty for an empty page.' },
    endCursor: { type: 'string', description: 'The last row\'s cursor; empty for an empty page.' },
  }),
  ListOrdersResponse: connectionSchema('orders', 'Order'),
  ListERC20MultiSigSignerAddedBundlesResponse: connectionSchema('bundles', 'ERC20MultiSigSignerAddedBundle'),
  ListERC20MultiSigSignerRemovedBundlesResponse: connectionSchema('bundles', 'ERC20MultiSigSignerRemovedBundle'),
  ErrorDetail: object({
    '@type': { type: 'string', const: ERROR_DETAIL_TYPE },
    code: { type: 'integer', description: 'The data node\'s error code (10028: invalid pagination, ...).' },
    message: { type: 'string' },
    inner: { type: 'string', description: 'What was refused: the parameter and its value.' },
  }),
  Error: object({
    code: { type: 'integer', description: 'gRPC status code (3: invalid argument, 5: not found, 8: resource exhausted, ...).' },
    message: { type: 'string' },
    details: { type: 'array', items: ref('ErrorDetail') },
  }, [], 'Every refusal, whoever refuses: the original\'s google.rpc.Status.'),
  Health: object({
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    reason: { type: 'string', description: 'Why the instance cannot serve: only with `unavailable`.' },
    lastBlock: blockJson('The last block stored; null before any.'),
  }, ['reason']),
  Ready: object({
    status: { type: 'string', enum: ['ready', 'lagging', 'unavailable'] },
    reason: { type: 'string', description: 'Why it is not ready.' },
    lastBlock: blockJson('The last block stored; null before any.'),
    lagSeconds: { type: 'number', description: 'Seconds between the last block\'s time and now.' },
  }, ['reason', 'lagSeconds']),
  IngestStatus: object({
    role: { type: 'string', enum: ['writer', 'standby', 'reader'], description: '`reader`: an instance without a source.' },
    source: { type: 'string' },
    state: { type: 'string', enum: ['starting', 'running', 'finished', 'stopped', 'failed'] },
    error: { type: 'string' },
    listening: object({ host: { type: 'string' }, port: { type: 'integer' } }, [], 'A socket source\'s address, for the core to dial.'),
    lastBlock: object({ height: uint64('Block height.'), time: int64('Block time, Unix ns.') }),
    lagSeconds: { type: 'number' },
    heightRead: uint64('The newest block height read from the source (stored or not yet).'),
    events: { type: 'integer' },
    blocksCommitted: { type: 'integer' },
    blocksAlreadyStored: { type: 'integer' },
    blocksWithOtherHash: { type: 'integer' },
    incompleteBlock: object({ height: uint64('Its height, if its BeginBlock was read.'), offset: { type: 'integer' } }, ['height']),
    eventsPerSecond: { type: 'integer' },
    skipped: object({ outsideBlock: { type: 'integer' }, byType: { type: 'object', additionalProperties: { type: 'integer' } } }),
    secondsSinceRead: { type: 'number', description: 'While the source runs: seconds since it last gave an event (or since it was opened).' },
    retention: object({
      retention: { type: 'string', description: 'What the store\'s writer was last started with: `archive`, `standard`, `lite` or a window (`30d`).' },
      prunedWith: { type: 'string', description: 'The window the store was last pruned with, if it ever was.' },
      oldestKeptBlock: object({ height: uint64('Block height.'), time: int64('Block time, Unix ns.') }, [],
        'The oldest block whose changes are all kept: a stream may resume from the block before it.'),
      rowsPruned: uint64('History and current rows pruned since the store was created.'),
      pruneSeconds: { type: 'number', description: 'Writer time spent pruning since the store was created.' },
      longestBatchSeconds: { type: 'number', description: 'The longest prune batch.' },
      storeBytes: { type: 'integer', description: 'Bytes the store takes: the embedded store\'s files, or the PostgreSQL database.' },
    }, ['prunedWith', 'oldestKeptBlock'], 'What the store keeps (README "Retention").'),
  }, [
    'source', 'state', 'error', 'listening', 'lastBlock', 'lagSeconds', 'heightRead', 'events', 'blocksCommitted',
    'blocksAlreadyStored', 'blocksWithOtherHash', 'incompleteBlock', 'eventsPerSecond', 'skipped', 'secondsSinceRead', 'retention',
  ]),
};
