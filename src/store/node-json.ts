/**
 * SQL expressions that make the database emit each API node as JSON text, so
 * that a page of a thousand rows never becomes a thousand JS objects. Written
 * once for both backends: what their SQL spells differently comes from the
 * dialect (./sql-dialect.ts). The format is
 * protobuf JSON as the original node prints it: lowerCamel keys in field
 * order, 64-bit integers as strings, enums as names (a number the table does
 * not know stays a bare number), every scalar present, an unset message null,
 * an unset optional field left out (docs/compatibility.md, section 3).
 */
import {
  OrderError,
  OrderStatus,
  OrderType,
  PeggedReference,
  Side,
  TimeInForce,
  type EnumTable,
} from '../domain/enums.js';
import type { SqlDialect } from './sql-dialect.js';

/** A SQL string literal. */
export function sqlText(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** The enum's quoted JSON name, generated from the one table of names. */
function enumJson(table: EnumTable, column: string): string {
  const arms = table.names
    .map((name, n) => (name === undefined ? '' : ` WHEN ${n} THEN ${sqlText(JSON.stringify(name))}`))
    .join('');
  return `(CASE ${column}${arms} ELSE CAST(${column} AS TEXT) END)`;
}

/**
 * The node is built by one concat() of many pieces: a chain of || copies the
 * growing string at every step, and that copying was most of a page's time.
 * Literal text is kept apart from SQL so that neighbouring literals merge into
 * one argument. An SQL piece may be NULL, which concat() reads as nothing.
 */
type Piece = { text: string } | { sql: string };

const text = (t: string): Piece => ({ text: t });
const sql = (s: string): Piece => ({ sql: s });

/** The concat() arguments of pieces, neighbouring literals merged. */
function render(pieces: Piece[]): string {
  const args: string[] = [];
  let literal: string | undefined;
  for (const p of pieces) {
    if ('text' in p) {
      literal = (literal ?? '') + p.text;
      continue;
    }
    if (literal !== undefined) args.push(sqlText(literal));
    literal = undefined;
    args.push(p.sql);
  }
  if (literal !== undefined) args.push(sqlText(literal));
  return `concat(${args.join(', ')})`;
}

/** A string column as a JSON string, escaped by the database. */
const str = (d: SqlDialect, column: string): Piece[] => [sql(d.jsonString(column))];

/**
 * A 64-bit integer column as a JSON string. An integer becomes its exact
 * base-10 text, and an unsigned value too large for INTEGER is stored as that
 * text already.
 */
const int64 = (column: string): Piece[] => [text('"'), sql(column), text('"')];

const bool = (column: string): Piece[] => [sql(`(CASE ${column} WHEN 0 THEN 'false' ELSE 'true' END)`)];

const enumValue = (table: EnumTable, column: string): Piece[] => [sql(enumJson(table, column))];

type Member =
  | [key: string, value: Piece[]]
  /** An optional field: present only when the condition holds. */
  | { optional: string; key: string; value: Piece[] }
  /** A message field: always present, null unless the condition holds. */
  | { nullUnless: string; key: string; value: Piece[] };

/** The pieces of `{"key":value,...}`. */
function objectPieces(members: Member[]): Piece[] {
  const pieces: Piece[] = [];
  let first = true;
  for (const m of members) {
    if (Array.isArray(m)) {
      const [key, value] = m;
      pieces.push(text(`${first ? '{' : ','}"${key}":`), ...value);
      first = false;
    } else if ('nullUnless' in m) {
      pieces.push(text(`${first ? '{' : ','}"${m.key}":`), sql(`(CASE WHEN ${m.nullUnless} THEN ${render(m.value)} ELSE 'null' END)`));
      first = false;
    } else {
      // No ELSE: NULL adds nothing to concat().
      pieces.push(sql(`(CASE WHEN ${m.optional} THEN ${render([text(`,"${m.key}":`), ...m.value])} END)`));
    }
  }
  pieces.push(text('}'));
  return pieces;
}

const object = (members: Member[]): string => render(objectPieces(members));

/** Where the order id lies in an order node: the first member, 64 hex digits that need no escaping. */
const NODE_ID_AT = '{"id":"'.length;
const NODE_ID_END = NODE_ID_AT + 64;

/**
 * The order id of a node orderJsonSql made. Page cursors take it from there:
 * selecting the id again would cost a second blob per row, which the driver
 * copies into a Buffer (BENCHMARKS.md, "Figures behind the code").
 */
export function orderIdOfNode(json: string): string {
  return json.slice(NODE_ID_AT, NODE_ID_END);
}

/**
 * The Order node of ListOrdersResponse, from a row of orders_current aliased
 * `o`, joined to its rows of markets (`m`) and parties (`p`).
 */
export function orderJsonSql(d: SqlDialect, o: string, m: string, p: string): string {
  const c = (name: string) => `${o}.${name}`;
  return object([
    // Hex needs no JSON escaping.
    ['id', [text('"'), sql(d.lowerHex(c('id_bytes'))), text('"')]],
    ['marketId', str(d, `${m}.id`)],
    ['partyId', str(d, `${p}.id`)],
    ['side', enumValue(Side, c('side'))],
    ['price', str(d, c('price'))],
    ['size', int64(c('size'))],
    ['remaining', int64(c('remaining'))],
    ['timeInForce', enumValue(TimeInForce, c('time_in_force'))],
    ['type', enumValue(OrderType, c('type'))],
    ['createdAt', int64(c('created_at'))],
    ['status', enumValue(OrderStatus, c('status'))],
    ['expiresAt', int64(c('expires_at'))],
    ['reference', str(d, c('reference'))],
    // Set to ORDER_ERROR_UNSPECIFIED is the same as not set: the original keeps 0 for both.
    { optional: `${c('reason')} <> 0`, key: 'reason', value: enumValue(OrderError, c('reason')) },
    ['updatedAt', int64(c('updated_at'))],
    ['version', int64(c('version'))],
    ['batchId', int64(c('batch_id'))],
    // The original keeps a pegged order as its reference and offset, and has none when the reference is unspecified.
    {
      nullUnless: `${c('pegged_reference')} <> 0`,
      key: 'peggedOrder',
      value: objectPieces([
        ['reference', enumValue(PeggedReference, c('pegged_reference'))],
        ['offset', str(d, c('pegged_offset'))],
      ]),
    },
    ['liquidityProvisionId', str(d, c('lp_id'))],
    ['postOnly', bool(c('post_only'))],
    ['reduceOnly', bool(c('reduce_only'))],
    {
      optional: `${c('iceberg_peak_size')} IS NOT NULL`,
      key: 'icebergOrder',
      value: objectPieces([
        ['peakSize', int64(c('iceberg_peak_size'))],
        ['minimumVisibleSize', int64(c('iceberg_minimum_visible_size'))],
        ['reservedRemaining', int64(c('iceberg_reserved_remaining'))],
      ]),
    },
  ]);
}

/**
 * "0x" and the lowercase hex of every node signature of the bundle, in
 * ascending byte order (both databases order bytes as memcmp does); "" when none has arrived.
 */
function packedSignatures(d: SqlDialect, signatureId: string): string {
  return (
    `COALESCE((SELECT '0x' || string_agg(${d.lowerHex('s.sig')}, '' ORDER BY s.sig) ` +
    `FROM node_signatures AS s WHERE s.resource_id = ${signatureId}), '')`
  );
}

/** The ERC20MultiSigSignerAddedBundle node, from a row of signer_added aliased `b`. */
export function bundleJsonSql(d: SqlDialect, b: string): string {
  const c = (name: string) => `${b}.${name}`;
  return object([
    ['newSigner', str(d, c('new_signer'))],
    ['submitter', str(d, c('submitter'))],
    ['nonce', str(d, c('nonce'))],
    ['timestamp', int64(c('timestamp'))],
    ['signatures', [text('"'), sql(packedSignatures(d, c('signature_id'))), text('"')]],
    ['epochSeq', int64(c('epoch_seq'))],
  ]);
}

/** The ERC20MultiSigSignerRemovedBundle node, from a row of signer_removed aliased `b` (one per signature submitter). */
export function removedBundleJsonSql(d: SqlDialect, b: string): string {
  const c = (name: string) => `${b}.${name}`;
  return object([
    ['oldSigner', str(d, c('old_signer'))],
    ['submitter', str(d, c('submitter'))],
    ['nonce', str(d, c('nonce'))],
    ['timestamp', int64(c('timestamp'))],
    ['signatures', [text('"'), sql(packedSignatures(d, c('signature_id'))), text('"')]],
    ['epochSeq', int64(c('epoch_seq'))],
  ]);
}
