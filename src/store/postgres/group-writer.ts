/**
 * Writes one group of blocks into PostgreSQL in one transaction, with the
 * same semantics as the embedded writer (../sqlite/group-writer.ts): history
 * rows, the current state of each order, the planner's counts, bundles, the
 * blocks and the checkpoint. Rows go by COPY to session-local staging tables
 * (history straight to its table when it can) and from there into place by a
 * few set-based statements (./group-sql.ts), so the cost of a row is
 * PostgreSQL's own work, not a statement's or a round trip's.
 */
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { SIGNER_ADDED_FIELDS, SIGNER_REMOVED_FIELDS, at, type PackedHistory, type PackedGroup, type SqlValue } from '../rows.js';
import { BinaryCopyWriter, historyBinaryCopy } from './copy-binary.js';
import { CopyText, copyString } from './copy-text.js';
import {
  ADDED_SQL, CLEAR_STAGING_SQL, CURRENT_SQL, CURRENT_UPDATED_RESULT, HISTORY_COLUMNS, NUMBERING_SQL, REMOVED_SQL, SIGNATURES_SQL,
  STAGED_COPY_FIELDS, STAGED_CURRENT_KINDS, VACUUM_STAGING_SQL, copySql,
} from './group-sql.js';
import { BlockOrderError } from '../../errors.js';
import { BLOCKS_CHANNEL } from './block-watch.js';
import type { WriterPartitions } from './partitions.js';

export { prepareWriteSession } from './group-sql.js';

/**
 * A group turned into what the transaction sends, on the thread that packed
 * it (while an earlier group commits); its buffers then move to the writer's
 * thread.
 */
export interface BinaryGroup {
  blocks: PackedGroup['blocks'];
  /**
   * The group's history; undefined if it changed no order. Its rows name
   * markets and parties by number, which only the transaction can give: the
   * writer numbers them (NUMBERING_SQL) and then sends the rows in binary
   * COPY format, straight into orders_history (see HISTORY_COLUMNS).
   */
  history: PackedHistory | undefined;
  /** COPY statements and their data, in order; tables without rows are left out. */
  copies: { sql: string; data: Uint8Array }[];
  /** The set-based statements that move staged rows into place. */
  statements: string[];
  /** The checkpoint: last_block, then COMMIT. */
  checkpoint: string;
}

/**
 * The buffers of a binary group, to move to another thread rather than copy.
 * A small Buffer may be a slice of Node's shared pool, which must stay here.
 */
export function binaryTransferables(group: BinaryGroup): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const h = group.history;
  const history = h === undefined ? [] : [h.heights, h.seqs, h.ids, h.versions, h.markets, h.parties, h.messages, h.ends];
  for (const b of [...history, ...group.copies.map((c) => c.data)]) {
    if (b.buffer.byteLength !== Buffer.poolSize) buffers.add(b.buffer as ArrayBuffer);
  }
  return [...buffers];
}

const MARKET_AT = at('market_no');
const PARTY_AT = at('party_no');

/** The latest state of each order, with its market and party by id, then its last change, in binary. */
function currentCopy(group: PackedGroup): Buffer {
  const out = new BinaryCopyWriter();
  const fields = STAGED_CURRENT_KINDS.length;
  // History rows come block by block: an order's last one is its latest row. An order
  // without one (none is expected) gets no last change, and pruning probes for it.
  const { heights, orders } = group.history;
  const lastHeights: (bigint | undefined)[] = new Array(group.latest.length);
  for (let i = 0; i < orders.length; i++) lastHeights[orders[i]!] = heights[i]!;
  for (const [at, row] of group.latest.entries()) {
    out.row(fields + 1);
    for (let i = 0; i < fields; i++) {
      const v = row[i]!;
      // A value of another type than its column's throws (a bug upstream), it is never cast here.
      if (v === null) out.null();
      else if (i === MARKET_AT) out.text(group.markets[v as number]!);
      else if (i === PARTY_AT) out.text(group.parties[v as number]!);
      else {
        switch (STAGED_CURRENT_KINDS[i]) {
          case 'bytea': out.bytea(v as Uint8Array); break;
          case 'text': out.text(v as string); break;
          case 'int2': out.int2(v as number); break;
          case 'int4': out.int4(v as number); break;
          case 'int8': out.int8(v as bigint); break;
          default: out.text(String(v as bigint | string));
        }
      }
    }
    const last = lastHeights[at];
    if (last === undefined) out.null();
    else out.text(String(last));
  }
  return out.finish();
}

function rowsCopy(rows: readonly (readonly SqlValue[])[]): Buffer {
  const text = new CopyText();
  for (const row of rows) text.row(row);
  return text.toBuffer();
}

function idsCopy(ids: readonly string[]): Buffer {
  const text = new CopyText();
  ids.forEach((id, pos) => text.encodedRow(`${pos}\t${copyString(id)}`));
  return text.toBuffer();
}

/** Turns a packed group into COPY data and statements. */
export function toBinaryGroup(group: PackedGroup): BinaryGroup {
  const copies: BinaryGroup['copies'] = [];
  const add = (table: string, columns: readonly string[], data: Buffer) => {
    if (data.byteLength > 0) copies.push({ sql: copySql(table, columns), data });
  };
  const statements: string[] = [];
  // Blocks go straight to their table: a stored height is refused before, under the lock.
  add('blocks', ['height', 'hash', 'time', 'digest'], rowsCopy(group.blocks.map((b) => [b.height, b.hash, b.time, b.digest])));
  if (group.latest.length > 0) {
    // Numbered (NUMBERING_SQL) before any order or history row that names them is written.
    add('lq_markets', ['pos', 'id'], idsCopy(group.markets));
    add('lq_parties', ['pos', 'id'], idsCopy(group.parties));
    copies.push({ sql: copySql('lq_current', STAGED_COPY_FIELDS, 'binary'), data: currentCopy(group) });
    statements.push(CURRENT_SQL);
  }
  if (group.signatures.length > 0) {
    add('lq_signatures', ['resource_id', 'sig', 'kind', 'vega_time'], rowsCopy(group.signatures));
    statements.push(SIGNATURES_SQL);
  }
  if (group.added.length > 0) {
    add('lq_added', SIGNER_ADDED_FIELDS, rowsCopy(group.added));
    statements.push(ADDED_SQL);
  }
  if (group.removed.length > 0) {
    add('lq_removed', SIGNER_REMOVED_FIELDS, rowsCopy(group.removed));
    statements.push(REMOVED_SQL);
  }
  const { height, time, chainId, hash } = group.last;
  const checkpoint =
    'INSERT INTO last_block (only_row, height, time, chain_id, hash) ' +
    `VALUES (1, ${height}, ${time}, ${pg.escapeLiteral(chainId)}, ${pg.escapeLiteral(hash)}) ` +
    'ON CONFLICT (only_row) DO UPDATE SET ' +
    'height = excluded.height, time = excluded.time, chain_id = excluded.chain_id, hash = excluded.hash;\n' +
    // Delivered to every listening instance once the commit is done (./block-watch.ts).
    `NOTIFY ${BLOCKS_CHANNEL}, '${height}';\nCOMMIT`;
  // Every changed order has a history row: a group with latest states has history, and the other way round.
  const history = group.latest.length > 0 ? group.history : undefined;
  return { blocks: group.blocks, history, copies, statements, checkpoint };
}

async function copyIn(client: pg.ClientBase, sql: string, data: Uint8Array): Promise<void> {
  const stream = client.query(copyFrom(sql));
  stream.end(data);
  // 'finish' comes once the server has acknowledged the COPY.
  await finished(stream);
}

/**
 * Writes binary groups on `client`, a session prepared by
 * prepareWriteSession that nothing else uses meanwhile.
 */
export class GroupWriter {
  /** The last group left rows, live or dead, in the staging tables. */
  private staged = false;

  constructor(private readonly client: pg.ClientBase, private readonly partitions: WriterPartitions) {}

  /**
   * Writes a group in one transaction. Fails, writing nothing, if a block is
   * not newer than the stored last block; that is checked under a lock every
   * writer takes, so no other writer's block can slip in between. Returns
   * how many stored orders it updated (./vacuum.ts counts the dead rows).
   */
  async write(group: BinaryGroup): Promise<number> {
    const client = this.client;
    if (this.staged) {
      await client.query(VACUUM_STAGING_SQL);
      this.staged = false;
    }
    // Set before the first statement: a failure anywhere after BEGIN needs a rollback.
    let open = true;
    try {
      // One round trip. EXCLUSIVE: other writers wait here; readers (ACCESS SHARE) never do.
      const results = (await client.query(
        'BEGIN; LOCK TABLE last_block IN EXCLUSIVE MODE; SELECT height::text AS height FROM last_block',
      )) as unknown as pg.QueryResult[];
      const stored = results[2]?.rows[0] as { height: string } | undefined;
      let last = stored === undefined ? undefined : BigInt(stored.height);
      for (const { height } of group.blocks) {
        if (last !== undefined && height <= last) {
          throw new BlockOrderError(`block ${height} is not newer than the last stored block ${last}`);
        }
        last = height;
      }
      this.staged = true;
      for (const { sql, data } of group.copies) await copyIn(client, sql, data);
      if (group.history !== undefined) {
        // Within the transaction: a partition added for a group that fails goes with it.
        await this.partitions.cover(client, group.blocks[0]!.height, last!);
        const numbering = (await client.query(NUMBERING_SQL)) as unknown as pg.QueryResult[];
        const numbers = numbering.at(-1)?.rows[0] as { markets: number[]; parties: number[] };
        const rows = historyBinaryCopy(group.history, numbers.markets, numbers.parties);
        // Straight into the table: the group's heights were checked to be new just above.
        await copyIn(client, copySql('orders_history', HISTORY_COLUMNS, 'binary'), rows);
      }
      // One round trip for the rest; a failing statement skips the ones after it, COMMIT included.
      const done = (await client.query([...group.statements, CLEAR_STAGING_SQL, group.checkpoint].join(';\n'))) as unknown as pg.QueryResult[];
      open = false;
      // Several statements always: CURRENT_SQL leads them when the group has order states (toBinaryGroup).
      return group.statements[0] === CURRENT_SQL ? done[CURRENT_UPDATED_RESULT]!.rowCount ?? 0 : 0;
    } catch (e) {
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      this.partitions.forget();
      throw e;
    }
  }
}
