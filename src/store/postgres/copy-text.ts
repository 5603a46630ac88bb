/**
 * COPY ... FROM STDIN in PostgreSQL's text format: one line per row, fields
 * separated by a tab, `\N` for null. A backslash, tab, newline or carriage
 * return inside a value is escaped; bytea is its hex form (`\x...`), whose own
 * backslash is escaped too. Text format lets NUMERIC(20) columns take the
 * decimal digits of an unsigned 64-bit value as they are.
 */
import type { SqlValue } from '../rows.js';
import { InternalError } from '../../errors.js';

const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPED = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A text value as COPY's text format reads it back unchanged. */
export function copyString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(ESCAPED, (c) => ESCAPES[c]!) : s;
}

/** Bytes as a bytea field: the hex form, its backslash escaped for COPY. */
export function copyBytes(b: Uint8Array): string {
  return `\\\\x${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')}`;
}

export function copyField(v: SqlValue): string {
  switch (typeof v) {
    case 'string':
      return copyString(v);
    case 'bigint':
      return v.toString();
    case 'number':
      // Every number a row holds is an integer (enums, flags); anything else is a bug upstream.
      if (!Number.isSafeInteger(v)) throw new InternalError(`cannot store ${v}: rows hold integers only`);
      return String(v);
    default:
      return v === null ? '\\N' : copyBytes(v);
  }
}

/**
 * The rows of one table, as the text COPY reads. Built as a list of lines
 * joined once: concatenating tens of thousands of lines one by one costs more.
 */
export class CopyText {
  private readonly lines: string[] = [];

  get rows(): number {
    return this.lines.length;
  }

  /** Adds a row: its values, in the order of the COPY's column list. */
  row(values: readonly SqlValue[]): void {
    let line = copyField(values[0]!);
    for (let i = 1; i < values.length; i++) line += `\t${copyField(values[i]!)}`;
    this.lines.push(line);
  }

  /** Adds a row whose fields are already encoded. */
  encodedRow(line: string): void {
    this.lines.push(line);
  }

  toBuffer(): Buffer {
    return this.lines.length === 0 ? Buffer.alloc(0) : Buffer.from(`${this.lines.join('\n')}\n`, 'utf8');
  }
}
