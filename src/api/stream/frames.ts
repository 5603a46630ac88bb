/**
 * The frames of GET /api/v2/stream/orders as the original's gateway writes
 * them: its stream marshaler emits enums as numbers and leaves every field at
 * its default out, and Go's encoding/json escapes <, > and & (and U+2028,
 * U+2029) in the frame (docs/compatibility.md, section 12.4). One frame is a
 * line of newline-delimited JSON over plain HTTP, a text message over a
 * WebSocket.
 */
import { OrderError, OrderStatus, OrderType, PeggedReference, Side, TimeInForce, type EnumTable } from '../../domain/enums.js';
import { InternalError } from '../../errors.js';
import type { ApiError, ErrorDetail } from '../errors.js';

/** Orders per snapshot page and per updates message, as the original batches them. */
export const FRAME_ORDERS = 50;

/** A string as Go's encoding/json writes it: JSON.stringify's escapes, and the HTML-sensitive ones. */
function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `"key":value` members, those at their default left out. */
class Members {
  private readonly parts: string[] = [];

  string(key: string, v: string): this {
    if (v !== '') this.parts.push(`"${key}":${goString(v)}`);
    return this;
  }

  int64(key: string, v: bigint): this {
    if (v !== 0n) this.parts.push(`"${key}":"${v}"`);
    return this;
  }

  number(key: string, v: number): this {
    if (v !== 0) this.parts.push(`"${key}":${v}`);
    return this;
  }

  bool(key: string, v: boolean): this {
    if (v) this.parts.push(`"${key}":true`);
    return this;
  }

  raw(key: string, json: string | undefined): this {
    if (json !== undefined) this.parts.push(`"${key}":${json}`);
    return this;
  }

  toString(): string {
    return `{${this.parts.join(',')}}`;
  }
}

/** Enum members of an order node and of its messages, named in the unary JSON, numbered in the stream's. */
const ORDER_ENUMS: Readonly<Record<string, EnumTable>> = {
  side: Side, timeInForce: TimeInForce, type: OrderType, status: OrderStatus, reason: OrderError,
};
const MESSAGE_ENUMS: Readonly<Record<string, Readonly<Record<string, EnumTable>>>> = {
  peggedOrder: { reference: PeggedReference },
  icebergOrder: {},
};

/** Members of an order node that hold 64-bit integers as strings, whose default is "0". */
const INT64 = new Set(['size', 'remaining', 'createdAt', 'expiresAt', 'updatedAt', 'version', 'batchId', 'peakSize', 'minimumVisibleSize', 'reservedRemaining']);

function enumNumber(table: EnumTable, value: string | number): number {
  if (typeof value === 'number') return value;
  const n = table.names.indexOf(value);
  if (n < 0) throw new InternalError(`${table.typeName} has no value named ${value}`);
  return n;
}

/** A parsed node (an order, or one of its messages) as the stream marshaler writes it. */
function streamObject(node: Record<string, unknown>, enums: Readonly<Record<string, EnumTable>>): string {
  const members = new Members();
  for (const [key, value] of Object.entries(node)) {
    if (value === null || value === undefined) continue;
    const table = enums[key];
    if (table !== undefined) members.number(key, enumNumber(table, value as string | number));
    else if (INT64.has(key)) members.int64(key, BigInt(value as string));
    else if (typeof value === 'string') members.string(key, value);
    else if (typeof value === 'boolean') members.bool(key, value);
    else members.raw(key, streamObject(value as Record<string, unknown>, MESSAGE_ENUMS[key] ?? {}));
  }
  return members.toString();
}

/**
 * An order node as the stream writes it, from the node the list answers
 * (./store/node-json.ts, ./store/order-node.ts): the same state, so a stream
 * never says other than the list at the same block.
 */
export function streamOrderJson(listNode: string): string {
  return streamObject(JSON.parse(listNode) as Record<string, unknown>, ORDER_ENUMS);
}

/**
 * The snapshot's frames: pages of FRAME_ORDERS orders, `lastPage` on the last
 * only; no orders at all is one frame that says it is the last page.
 */
export function snapshotFrames(orders: readonly string[]): string[] {
  if (orders.length === 0) return ['{"result":{"snapshot":{"lastPage":true}}}'];
  const frames: string[] = [];
  for (let i = 0; i < orders.length; i += FRAME_ORDERS) {
    const page = orders.slice(i, i + FRAME_ORDERS).join(',');
    const last = i + FRAME_ORDERS >= orders.length;
    frames.push(`{"result":{"snapshot":{"orders":[${page}]${last ? ',"lastPage":true' : ''}}}}`);
  }
  return frames;
}

/** A block's changes as frames of at most FRAME_ORDERS orders; none when nothing changed. */
export function updateFrames(orders: readonly string[]): string[] {
  const frames: string[] = [];
  for (let i = 0; i < orders.length; i += FRAME_ORDERS) {
    frames.push(`{"result":{"updates":{"orders":[${orders.slice(i, i + FRAME_ORDERS).join(',')}]}}}`);
  }
  return frames;
}

/** A google.rpc.Status as the stream marshaler writes it: details, and their empty members, left out. */
function status(code: number, message: string, details: readonly ErrorDetail[]): string {
  const members = new Members().number('code', code).string('message', message);
  if (details.length > 0) {
    members.raw('details', `[${details.map((d) => new Members().string('@type', d['@type']).number('code', d.code).string('message', d.message).string('inner', d.inner).toString()).join(',')}]`);
  }
  return members.toString();
}

/** The error frame that ends a stream: a google.rpc.Status. */
export function errorFrame(code: number, message: string, details: readonly ErrorDetail[] = []): string {
  return `{"error":${status(code, message, details)}}`;
}

/**
 * A refusal as the stream answers it before its first frame: what the
 * gateway refuses itself as a bare status, what the data node refuses as an
 * error frame.
 */
export function refusalBody(e: ApiError): string {
  return e.fromGateway ? status(e.grpcCode, e.message, e.details) : errorFrame(e.grpcCode, e.message, e.details);
}
