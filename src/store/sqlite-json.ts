/**
 * SQL expressions that make SQLite emit each API node as JSON text, so that a
 * page of a thousand rows never becomes a thousand JS objects. The format is
 * protobuf JSON as the original node prints it: lowerCamel keys in field
 * order, 64-bit integers as strings, enums as names (a number the table does
 * not know stays a bare number), every scalar present.
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

/** A SQL string literal. */
export function sqlText(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** The enum's quoted JSON name, generated from the one table of names. */
function enumJson(table: EnumTable, column: string): string {
  const arms = table.names
    .map((name, n) => (name === undefined ? '' : ` WHEN ${n} THEN ${sqlText(JSON.stringify(name))}`))
    .join('');
  return `(CASE ${column}${arms} ELSE ${column} END)`;
}

/** A string column as a JSON string, escaped by SQLite. */
const str = (column: string) => `json_quote(${column})`;

/**
 * A 64-bit integer column as a JSON string. Concatenation renders an integer
 * exactly in base 10, and an unsigned value too large for INTEGER is stored as
 * its decimal text already.
 */
const int64 = (column: string) => `'"' || ${column} || '"'`;

const bool = (column: string) => `(CASE ${column} WHEN 0 THEN 'false' ELSE 'true' END)`;

/** `{"key":value,...}` from [key, value expression] pairs; optional parts are spliced in as ready fragments. */
function object(parts: ([string, string] | { fragment: string })[]): string {
  const pieces: string[] = [];
  let first = true;
  for (const part of parts) {
    if ('fragment' in part) {
      pieces.push(part.fragment);
      continue;
    }
    const [key, value] = part;
    pieces.push(sqlText(`${first ? '{' : ','}"${key}":`), value);
    first = false;
  }
  pieces.push(`'}'`);
  return pieces.join(' || ');
}

/** `,"key":value` when `present` holds, else nothing. */
const optional = (present: string, key: string, value: string) => ({
  fragment: `(CASE WHEN ${present} THEN ${sqlText(`,"${key}":`)} || ${value} ELSE '' END)`,
});

/** The Order node of ListOrdersResponse, from a row of orders_current aliased `o`. */
export function orderJsonSql(o: string): string {
  const c = (name: string) => `${o}.${name}`;
  return object([
    ['id', str(c('id'))],
    ['marketId', str(c('market_id'))],
    ['partyId', str(c('party_id'))],
    ['side', enumJson(Side, c('side'))],
    ['price', str(c('price'))],
    ['size', int64(c('size'))],
    ['remaining', int64(c('remaining'))],
    ['timeInForce', enumJson(TimeInForce, c('time_in_force'))],
    ['type', enumJson(OrderType, c('type'))],
    ['createdAt', int64(c('created_at'))],
    ['status', enumJson(OrderStatus, c('status'))],
    ['expiresAt', int64(c('expires_at'))],
    ['reference', str(c('reference'))],
    optional(`${c('reason')} IS NOT NULL`, 'reason', enumJson(OrderError, c('reason'))),
    ['updatedAt', int64(c('updated_at'))],
    ['version', int64(c('version'))],
    ['batchId', int64(c('batch_id'))],
    optional(
      `${c('pegged_reference')} IS NOT NULL`,
      'peggedOrder',
      `'{"reference":' || ${enumJson(PeggedReference, c('pegged_reference'))} || ',"offset":' || ${str(c('pegged_offset'))} || '}'`,
    ),
    ['liquidityProvisionId', str(c('lp_id'))],
    ['postOnly', bool(c('post_only'))],
    ['reduceOnly', bool(c('reduce_only'))],
    optional(
      `${c('iceberg_peak_size')} IS NOT NULL`,
      'icebergOrder',
      `'{"peakSize":' || ${int64(c('iceberg_peak_size'))} || ',"minimumVisibleSize":' || ` +
        `${int64(c('iceberg_minimum_visible_size'))} || ',"reservedRemaining":' || ${int64(c('iceberg_reserved_remaining'))} || '}'`,
    ),
  ]);
}

/**
 * "0x" and the lowercase hex of every node signature of the bundle, in
 * ascending byte order (BLOB order is memcmp order); "" when none has arrived.
 */
function packedSignatures(signatureId: string): string {
  return (
    `COALESCE((SELECT '0x' || group_concat(lower(hex(s.sig)), '' ORDER BY s.sig) ` +
    `FROM node_signatures AS s WHERE s.resource_id = ${signatureId}), '')`
  );
}

/** The ERC20MultiSigSignerAddedBundle node, from a row of signer_added aliased `b`. */
export function bundleJsonSql(b: string): string {
  const c = (name: string) => `${b}.${name}`;
  return object([
    ['newSigner', str(c('new_signer'))],
    ['submitter', str(c('submitter'))],
    ['nonce', str(c('nonce'))],
    ['timestamp', int64(c('timestamp'))],
    ['signatures', `'"' || ${packedSignatures(c('signature_id'))} || '"'`],
    ['epochSeq', int64(c('epoch_seq'))],
  ]);
}
