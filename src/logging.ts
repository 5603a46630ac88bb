/**
 * How `serve` logs: JSON lines (for a log collector), or readable lines
 * (pino-pretty) for a person at a terminal. The primary decides once
 * (./processes/serve.ts) and its HTTP processes log the same way.
 */
import pino, { type DestinationStream, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import type { LogOptions } from './log-options.js';

/**
 * Where log lines go: stdout as they are, or through pino-pretty, written
 * synchronously (as pino writes JSON), so that nothing logged before an exit
 * is lost; coloured only on a terminal.
 */
function destination(format: LogOptions['format']): DestinationStream | undefined {
  if (format === 'json') return undefined;
  return pretty({ sync: true, colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname' });
}

/** Fastify's logger option (level and stream) for `options`. */
export function fastifyLogger(options: LogOptions): { level: string; stream?: DestinationStream } {
  const stream = destination(options.format);
  return stream === undefined ? { level: options.level } : { level: options.level, stream };
}

/** A logger of the primary process. */
export function createLogger(options: LogOptions): pino.Logger {
  const settings: LoggerOptions = { level: options.level };
  const stream = destination(options.format);
  return stream === undefined ? pino(settings) : pino(settings, stream);
}
