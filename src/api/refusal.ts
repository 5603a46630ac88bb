/**
 * The one writer of refusals: the error envelope `{code, message, details}`
 * (or a body of the caller's, as the order stream's refusals are written in
 * the original's stream body), its type with charset, the common headers
 * (./answer-headers.ts) and the caller's (the block known, CORS, Retry-After).
 * Written on a response Fastify does not send (the front door's, the
 * stream's: ./front-door.ts, ./stream/transports.ts), through Fastify's reply
 * (./app.ts), or straight on a socket whose request Node's parser refused
 * (./http-server.ts).
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { COMMON_HEADERS, JSON_TYPE, type HeaderList } from './answer-headers.js';
import type { ApiError } from './errors.js';

/** The error envelope of `error`, as sent. */
export function envelopeOf(error: ApiError): Buffer {
  return Buffer.from(JSON.stringify(error.toBody()));
}

/** The whole head of a refusal: the common headers, the caller's, the type and length. */
function refusalHead(headers: HeaderList, body: Buffer): string[] {
  return [...COMMON_HEADERS, ...headers, 'content-type', JSON_TYPE, 'content-length', String(body.byteLength)];
}

/** Answers `res` with `error` (in the envelope, unless `body` is given); headers set on it already go too. */
export function writeRefusal(res: ServerResponse, error: ApiError, headers: HeaderList, body = envelopeOf(error)): void {
  res.writeHead(error.httpStatus, refusalHead(headers, body)).end(body);
}

/** Sends `error` through Fastify's reply (the front door set the common headers on it already). */
export function sendRefusal(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.httpStatus).type(JSON_TYPE).send(envelopeOf(error));
}

/**
 * Answers with `error` on a socket whose request Node's parser refused, and
 * closes it: the parser cannot go on reading that connection. It follows an
 * answer written whole already (a kept answer goes out as its request is
 * parsed, before the parser meets what comes after it); nothing is written
 * where a response has begun and not ended, or the socket cannot take it.
 */
export function refuseOnSocket(socket: Duplex, error: ApiError, headers: HeaderList): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean; writableEnded?: boolean } })._httpMessage;
  if (!socket.writable || (inFlight?.headersSent === true && inFlight.writableEnded !== true)) {
    socket.destroy();
    return;
  }
  const body = envelopeOf(error);
  const status = error.httpStatus;
  const head = [...refusalHead(headers, body), 'Connection', 'close'];
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`];
  for (let i = 0; i < head.length; i += 2) lines.push(`${head[i]}: ${head[i + 1]}`);
  socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
  // A peer that does not read what is written must not keep the socket open.
  setTimeout(() => socket.destroy(), 1000).unref();
}
