/**
 * The page statements of the PostgreSQL store, each prepared once per
 * connection under a name, and the memory that costs kept bounded in bytes
 * whatever filters clients send: the statement texts built here (a text
 * with long IN lists and many arms runs to 250 KB), and what each pooled
 * connection has prepared (pg remembers every name it prepared on a
 * connection, and the server keeps each statement, for the connection's
 * life): a connection past its share is closed once its query is done and
 * the pool opens another.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { BoundedMap, stringBytes } from '../../bounded-map.js';
import { expandSql } from '../page-sql.js';
import { numberedPlaceholders, POSTGRES } from './dialect.js';

/** Bytes of statement texts kept built: ~500 of the usual 5-9 KB. */
export const DEFAULT_STATEMENT_TEXT_BYTES = 4 << 20;

/**
 * Bytes of statement text one connection may have prepared before it is
 * replaced: ~300 of the usual; the server keeps several times a statement's
 * text for it.
 */
export const DEFAULT_PREPARED_BYTES_PER_CONNECTION = 2 << 20;

/** A named statement per distinct text: each pooled connection parses and plans it once. */
function statementName(text: string): string {
  return `lq_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
}

export interface NamedStatement {
  text: string;
  name: string;
}

/** The statement text of a page, by the SQL it was built from: the expansion is not free. */
export class StatementTexts {
  private readonly texts: BoundedMap<string, NamedStatement>;

  constructor(maxBytes = DEFAULT_STATEMENT_TEXT_BYTES) {
    this.texts = new BoundedMap(maxBytes);
  }

  get(sql: string): NamedStatement {
    let t = this.texts.get(sql);
    if (t === undefined) {
      const text = numberedPlaceholders(expandSql(sql, POSTGRES));
      t = { text, name: statementName(text) };
      this.texts.set(sql, t, stringBytes(sql) + stringBytes(text));
    }
    return t;
  }

  get size(): { entries: number; bytes: number } {
    return this.texts.size;
  }
}

/** What one connection has prepared. */
interface Prepared {
  names: Set<string>;
  bytes: number;
}

/** The statements prepared on each pooled connection, so that none holds more than its share. */
export class PreparedBudget {
  private readonly byConnection = new WeakMap<pg.PoolClient, Prepared>();

  constructor(readonly maxBytesPerConnection = DEFAULT_PREPARED_BYTES_PER_CONNECTION) {}

  /** Counts `statement` as prepared on `client`; true when the client now holds more than its share. */
  prepared(client: pg.PoolClient, statement: NamedStatement): boolean {
    let p = this.byConnection.get(client);
    if (p === undefined) {
      p = { names: new Set(), bytes: 0 };
      this.byConnection.set(client, p);
    }
    if (!p.names.has(statement.name)) {
      p.names.add(statement.name);
      p.bytes += stringBytes(statement.text) + statement.name.length;
    }
    return p.bytes > this.maxBytesPerConnection;
  }

  /** Bytes of statement text `client` holds prepared. */
  bytesOn(client: pg.PoolClient): number {
    return this.byConnection.get(client)?.bytes ?? 0;
  }
}
