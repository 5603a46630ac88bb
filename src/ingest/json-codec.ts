/**
 * BusEvent in protobuf's JSON mapping (what the data node's streaming API
 * emits): lowerCamel or original snake_case field names, enums as names or
 * numbers, 64-bit integers as strings or numbers, bytes as base64.
 * Hand-written because our schema keeps enum names in src/domain/enums.ts,
 * which protobufjs's fromObject cannot see.
 */
import type { NodeSignature, SignerAdded, SignerRemoved } from '../domain/bundle.js';
import {
  NodeSignatureKind, OrderError, OrderStatus, OrderType, PeggedReference, Side, TimeInForce,
  enumName, parseEnum, type EnumTable,
} from '../domain/enums.js';
import type { Order } from '../domain/order.js';
import { CorruptInputError } from '../errors.js';
import { busEventTypeOf, checkedOrder, parseEpochSeq } from './codec.js';
import type { BusEvent, EventBody } from './events.js';

type Json = Record<string, unknown>;

const snake = (camelName: string) => camelName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Reads the fields of one JSON object, naming the path in every error. */
class Fields {
  constructor(private readonly value: Json, private readonly path: string) {}

  private raw(name: string): unknown {
    const v = this.value[name] ?? this.value[snake(name)];
    return v === null ? undefined : v;
  }
  has(name: string): boolean {
    return this.raw(name) !== undefined;
  }
  private fail(name: string, what: string, v: unknown): never {
    throw new CorruptInputError(`${this.path}.${name}: ${what}, got ${JSON.stringify(v)}`);
  }
  str(name: string): string {
    const v = this.raw(name);
    if (v === undefined) return '';
    if (typeof v !== 'string') this.fail(name, 'expected a string', v);
    return v;
  }
  bool(name: string): boolean {
    const v = this.raw(name);
    if (v === undefined) return false;
    if (typeof v !== 'boolean') this.fail(name, 'expected a boolean', v);
    return v;
  }
  int64(name: string, unsigned = false): bigint {
    const v = this.raw(name);
    if (v === undefined) return 0n;
    const text = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
    if (typeof text !== 'string' || !/^-?\d{1,20}$/.test(text)) this.fail(name, 'expected an integer', v);
    const n = BigInt(text);
    const ok = unsigned ? n >= 0n && n < 2n ** 64n : n >= -(2n ** 63n) && n < 2n ** 63n;
    if (!ok) this.fail(name, `out of ${unsigned ? 'uint64' : 'int64'} range`, v);
    return n;
  }
  enumValue(name: string, table: EnumTable): number {
    const v = this.raw(name);
    if (v === undefined) return 0;
    const n = typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' ? parseEnum(table, v) : undefined;
    if (n === undefined) this.fail(name, `expected a ${table.typeName} name or number`, v);
    return n;
  }
  bytes(name: string): Uint8Array {
    const v = this.raw(name);
    if (v === undefined) return new Uint8Array();
    if (typeof v !== 'string' || !/^[A-Za-z0-9+/_-]*=*$/.test(v)) this.fail(name, 'expected base64', v);
    return new Uint8Array(Buffer.from(v, 'base64'));
  }
  object(name: string): Fields | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) this.fail(name, 'expected an object', v);
    return new Fields(v as Json, `${this.path}.${name}`);
  }
  list(name: string): Fields[] {
    const v = this.raw(name);
    if (v === undefined) return [];
    if (!Array.isArray(v)) this.fail(name, 'expected a list', v);
    return v.map((item, i) => {
      if (typeof item !== 'object' || item === null) this.fail(`${name}[${i}]`, 'expected an object', item);
      return new Fields(item as Json, `${this.path}.${name}[${i}]`);
    });
  }
}

function order(f: Fields): Order {
  const o: Order = {
    id: f.str('id'), marketId: f.str('marketId'), partyId: f.str('partyId'),
    side: f.enumValue('side', Side), price: f.str('price'), size: f.int64('size', true),
    remaining: f.int64('remaining', true), timeInForce: f.enumValue('timeInForce', TimeInForce),
    type: f.enumValue('type', OrderType), createdAt: f.int64('createdAt'),
    status: f.enumValue('status', OrderStatus), expiresAt: f.int64('expiresAt'),
    reference: f.str('reference'), updatedAt: f.int64('updatedAt'), version: f.int64('version', true),
    batchId: f.int64('batchId', true), liquidityProvisionId: f.str('liquidityProvisionId'),
    postOnly: f.bool('postOnly'), reduceOnly: f.bool('reduceOnly'),
  };
  if (f.has('reason')) o.reason = f.enumValue('reason', OrderError);
  const pegged = f.object('peggedOrder');
  if (pegged) o.peggedOrder = { reference: pegged.enumValue('reference', PeggedReference), offset: pegged.str('offset') };
  const iceberg = f.object('icebergOrder');
  if (iceberg) {
    o.icebergOrder = {
      peakSize: iceberg.int64('peakSize', true),
      minimumVisibleSize: iceberg.int64('minimumVisibleSize', true),
      reservedRemaining: iceberg.int64('reservedRemaining', true),
    };
  }
  return o;
}

function epochSeq(f: Fields): bigint {
  return parseEpochSeq(f.str('epochSeq') || '0');
}

function signerAdded(f: Fields): SignerAdded {
  return {
    signatureId: f.str('signatureId'), validatorId: f.str('validatorId'), timestamp: f.int64('timestamp'),
    newSigner: f.str('newSigner'), submitter: f.str('submitter'), nonce: f.str('nonce'), epochSeq: epochSeq(f),
  };
}

function signerRemoved(f: Fields): SignerRemoved {
  return {
    signatureSubmitters: f.list('signatureSubmitters').map((s) => ({ signatureId: s.str('signatureId'), submitter: s.str('submitter') })),
    validatorId: f.str('validatorId'), timestamp: f.int64('timestamp'), oldSigner: f.str('oldSigner'),
    nonce: f.str('nonce'), epochSeq: epochSeq(f),
  };
}

function nodeSignature(f: Fields): NodeSignature {
  return { id: f.str('id'), sig: f.bytes('sig'), kind: f.enumValue('kind', NodeSignatureKind) };
}

/** The oneof of BusEvent, in JSON names, with how to read each. */
const bodies: [string, (f: Fields) => EventBody][] = [
  ['beginBlock', (f) => ({ kind: 'beginBlock', height: f.int64('height', true), timestamp: f.int64('timestamp'), hash: f.str('hash') })],
  ['endBlock', (f) => ({ kind: 'endBlock', height: f.int64('height', true) })],
  ['timeUpdate', (f) => ({ kind: 'timeUpdate', timestamp: f.int64('timestamp') })],
  ['order', (f) => ({ kind: 'order', order: checkedOrder(order(f)) })],
  ['nodeSignature', (f) => ({ kind: 'nodeSignature', nodeSignature: nodeSignature(f) })],
  ['erc20MultisigSignerAdded', (f) => ({ kind: 'signerAdded', signerAdded: signerAdded(f) })],
  ['erc20MultisigSignerRemoved', (f) => ({ kind: 'signerRemoved', signerRemoved: signerRemoved(f) })],
];

const BUS_EVENT_TYPE_PREFIX = 'BUS_EVENT_TYPE_';

/** Parses one BusEvent from its protobuf JSON object. Throws CorruptInputError. */
export function busEventFromJson(value: unknown): BusEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CorruptInputError('a BusEvent must be a JSON object');
  }
  const f = new Fields(value as Json, 'event');
  const header = {
    id: f.str('id'), block: f.str('block'), chainId: f.str('chainId'),
    ...(f.has('txHash') ? { txHash: f.str('txHash') } : {}),
  };
  for (const [field, read] of bodies) {
    const sub = f.object(field);
    if (sub) {
      const body = read(sub);
      return { ...header, type: busEventTypeOf(body.kind), ...body };
    }
  }
  // Not a type we store: keep its type as given, for the skipped counts.
  const t = (value as Json).type;
  const type = typeof t === 'number' ? t : 0;
  const label = typeof t === 'string' ? t.replace(BUS_EVENT_TYPE_PREFIX, '') : undefined;
  return { ...header, type, kind: 'other', ...(label === undefined ? {} : { typeLabel: label }) };
}

const str = (v: bigint) => v.toString();

function orderJson(o: Order): Json {
  return {
    id: o.id, marketId: o.marketId, partyId: o.partyId, side: enumName(Side, o.side), price: o.price,
    size: str(o.size), remaining: str(o.remaining), timeInForce: enumName(TimeInForce, o.timeInForce),
    type: enumName(OrderType, o.type), createdAt: str(o.createdAt), status: enumName(OrderStatus, o.status),
    expiresAt: str(o.expiresAt), reference: o.reference,
    ...(o.reason === undefined ? {} : { reason: enumName(OrderError, o.reason) }),
    updatedAt: str(o.updatedAt), version: str(o.version), batchId: str(o.batchId),
    ...(o.peggedOrder ? { peggedOrder: { reference: enumName(PeggedReference, o.peggedOrder.reference), offset: o.peggedOrder.offset } } : {}),
    liquidityProvisionId: o.liquidityProvisionId, postOnly: o.postOnly, reduceOnly: o.reduceOnly,
    ...(o.icebergOrder ? { icebergOrder: {
      peakSize: str(o.icebergOrder.peakSize), minimumVisibleSize: str(o.icebergOrder.minimumVisibleSize),
      reservedRemaining: str(o.icebergOrder.reservedRemaining),
    } } : {}),
  };
}

function bodyJson(e: BusEvent): [string, Json] | undefined {
  switch (e.kind) {
    case 'beginBlock': return ['beginBlock', { height: str(e.height), timestamp: str(e.timestamp), hash: e.hash }];
    case 'endBlock': return ['endBlock', { height: str(e.height) }];
    case 'timeUpdate': return ['timeUpdate', { timestamp: str(e.timestamp) }];
    case 'order': return ['order', orderJson(e.order)];
    case 'nodeSignature': return ['nodeSignature', {
      id: e.nodeSignature.id, sig: Buffer.from(e.nodeSignature.sig).toString('base64'),
      kind: enumName(NodeSignatureKind, e.nodeSignature.kind),
    }];
    case 'signerAdded': return ['erc20MultisigSignerAdded', { ...e.signerAdded, timestamp: str(e.signerAdded.timestamp), epochSeq: str(e.signerAdded.epochSeq) }];
    case 'signerRemoved': return ['erc20MultisigSignerRemoved', { ...e.signerRemoved, timestamp: str(e.signerRemoved.timestamp), epochSeq: str(e.signerRemoved.epochSeq) }];
    case 'other': return undefined;
  }
}

/** The protobuf JSON form of an event (for NDJSON output and tests). */
export function busEventToJson(e: BusEvent): Json {
  const body = bodyJson(e);
  return {
    id: e.id, block: e.block, type: e.type, chainId: e.chainId,
    ...(e.txHash === undefined ? {} : { txHash: e.txHash }),
    ...(body ? { [body[0]]: body[1] } : {}),
  };
}
