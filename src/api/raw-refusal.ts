/**
 * A refusal written without Fastify, in the same envelope and with the same
 * headers as Fastify's (./server.ts): on a response, before either path
 * has seen the request (./front-door.ts), or straight on the socket, where
 * Node's HTTP parser gave up on the request (./http-server.ts).
 */
import { STATUS_CODES, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiError } from './errors.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Headers every answer carries, whichever path wrote it: no guessing a type the body does not have. */
export const EVERY_ANSWER: OutgoingHttpHeaders = { 'X-Content-Type-Options': 'nosniff' };

function bodyOf(error: ApiError): Buffer {
  return Buffer.from(JSON.stringify(error.toBody()));
}

/** Answers `res` with `error`; the headers set on it already (the front door's) go too. */
export function writeRefusal(res: ServerResponse, error: ApiError, headers: OutgoingHttpHeaders): void {
  const body = bodyOf(error);
  res.writeHead(error.httpStatus, { ...headers, 'content-type': JSON_TYPE, 'content-length': String(body.byteLength) }).end(body);
}

/**
 * Answers with `error` on a socket whose request Node's parser refused, and
 * closes it: the parser cannot go on reading that connection. Nothing is
 * written where a response has begun already, or the socket cannot take it.
 */
export function refuseOnSocket(socket: Duplex, error: ApiError, headers: OutgoingHttpHeaders): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const body = bodyOf(error);
  const status = error.httpStatus;
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    ...Object.entries({ ...EVERY_ANSWER, ...headers }).map(([name, value]) => `${name}: ${String(value)}`),
    `Content-Type: ${JSON_TYPE}`,
    `Content-Length: ${body.byteLength}`,
    'Connection: close',
  ];
  socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
  // A peer that does not read what is written must not keep the socket open.
  setTimeout(() => socket.destroy(), 1000).unref();
}
