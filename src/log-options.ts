/**
 * How a process logs, as settings decide it: apart from ./logging.ts, so
 * that a command which only reads the settings (copy, ingest) does not load
 * pino and pino-pretty.
 */
import type { LogFormat } from './config/settings.js';

export interface LogOptions {
  level: string;
  /** Log every request (two lines each); failures are logged either way. */
  requests: boolean;
  format: 'pretty' | 'json';
}

/** `auto` is pretty on a terminal and JSON otherwise. */
export function resolveLogFormat(format: LogFormat, isTTY = process.stdout.isTTY === true): LogOptions['format'] {
  return format === 'auto' ? (isTTY ? 'pretty' : 'json') : format;
}
