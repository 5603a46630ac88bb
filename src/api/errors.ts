/**
 * The HTTP API's part of the error catalogue (../errors.ts): every refusal
 * it answers, each with the gRPC code of the original gateway's body (a
 * google.rpc.Status in JSON) and, where the data node has one, its
 * ErrorDetail code and message.
 */
import { LedgerError } from '../errors.js';

/** gRPC status codes we answer with. */
export const GrpcCode = {
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  Unimplemented: 12,
  Internal: 13,
  Unavailable: 14,
  Unauthenticated: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

const httpStatusByGrpcCode: Readonly<Record<GrpcCode, number>> = {
  3: 400,
  4: 504,
  5: 404,
  7: 403,
  8: 429,
  12: 501,
  13: 500,
  14: 503,
  16: 401,
};

export function httpStatusOf(code: GrpcCode): number {
  return httpStatusByGrpcCode[code];
}

/** The reverse mapping, for what Fastify and Node refuse with an HTTP status. */
export function grpcCodeOfHttpStatus(status: number): GrpcCode {
  switch (status) {
    case 401: return GrpcCode.Unauthenticated;
    case 403: return GrpcCode.PermissionDenied;
    case 404: return GrpcCode.NotFound;
    case 429: return GrpcCode.ResourceExhausted;
    case 501: return GrpcCode.Unimplemented;
    case 503: return GrpcCode.Unavailable;
    case 504: return GrpcCode.DeadlineExceeded;
    default: return status >= 400 && status < 500 ? GrpcCode.InvalidArgument : GrpcCode.Internal;
  }
}

export const ERROR_DETAIL_TYPE = 'type.googleapis.com/vega.ErrorDetail';

export interface ErrorDetail {
  '@type': typeof ERROR_DETAIL_TYPE;
  code: number;
  message: string;
  inner: string;
}

export interface ErrorBody {
  code: GrpcCode;
  message: string;
  details: ErrorDetail[];
}

/** A refusal whose message is safe to show to the client as it is. */
export abstract class ApiError extends LedgerError {
  /** The gRPC code of the body; the HTTP status follows from it. */
  static readonly grpc: GrpcCode = GrpcCode.Internal;
  /** The data node's ErrorDetail kind, when it has one for this refusal. */
  static readonly detail: { readonly code: number; readonly message: string } | undefined = undefined;

  readonly grpcCode: GrpcCode;
  readonly details: ErrorDetail[];
  /** The HTTP status, when it is not the one of the gRPC code (a 431 or a 408 of the HTTP layer). */
  readonly #status: number | undefined;

  /**
   * `reason` names what was refused. With a detail kind, it becomes the
   * detail's `inner`, and prefixed by the kind's message, the message.
   * `status` overrides the HTTP status the gRPC code gives.
   */
  constructor(reason: string, options?: ErrorOptions & { grpc?: GrpcCode; status?: number }) {
    const kind = new.target as unknown as typeof ApiError;
    const detail = kind.detail;
    super(detail ? `${detail.message}: ${reason}` : reason, options);
    this.grpcCode = options?.grpc ?? kind.grpc;
    this.#status = options?.status;
    this.details = detail ? [{ '@type': ERROR_DETAIL_TYPE, code: detail.code, message: detail.message, inner: reason }] : [];
  }

  get httpStatus(): number {
    return this.#status ?? httpStatusOf(this.grpcCode);
  }

  toBody(): ErrorBody {
    return { code: this.grpcCode, message: this.message, details: this.details };
  }
}

/** The base class of one kind of refusal: its code, gRPC code and detail, as statics. */
function refusal<C extends string>(code: C, grpc: GrpcCode, detail?: { readonly code: number; readonly message: string }) {
  return class extends ApiError {
    static override readonly code: C = code;
    static override readonly grpc: GrpcCode = grpc;
    static override readonly detail = detail;
  };
}

/** A pagination parameter the original refuses (detail 10028). */
export class InvalidPaginationError extends refusal('LQ_INVALID_PAGINATION', GrpcCode.InvalidArgument, { code: 10028, message: 'invalid pagination' }) {}

/** A filter parameter the original refuses (detail 10029). */
export class InvalidFilterError extends refusal('LQ_INVALID_FILTER', GrpcCode.InvalidArgument, { code: 10029, message: 'invalid filter' }) {}

/** An epochSeq that is not a base-10 integer (detail 10036). */
export class InvalidEpochError extends refusal('LQ_INVALID_EPOCH', GrpcCode.InvalidArgument, { code: 10036, message: 'failed to parse epoch id' }) {}

/** A query string that does not parse (a bad %-escape). */
export class MalformedQueryError extends refusal('LQ_MALFORMED_QUERY', GrpcCode.InvalidArgument) {}

/** What Fastify or Node's HTTP parser refuses, with the HTTP status they chose (a URL and headers too long: 431; a head too slow: 408). */
export class HttpRefusalError extends refusal('LQ_HTTP_REFUSED', GrpcCode.InvalidArgument) {}

/** A client past its share of requests (serve --rate-limit). */
export class RateLimitedError extends refusal('LQ_RATE_LIMITED', GrpcCode.ResourceExhausted) {}

/** A query that ran past serve --query-timeout, cut off. */
export class DeadlineExceededError extends refusal('LQ_DEADLINE_EXCEEDED', GrpcCode.DeadlineExceeded) {}

/** The store cannot answer now (its server unreachable), or the server is shutting down: try again. */
export class UnavailableError extends refusal('LQ_UNAVAILABLE', GrpcCode.Unavailable) {}

/** A path no route serves. */
export class RouteNotFoundError extends refusal('LQ_NOT_FOUND', GrpcCode.NotFound) {}

/** What the client sees of any failure we did not anticipate; the cause goes to the log only. */
export class InternalApiError extends refusal('LQ_API_INTERNAL', GrpcCode.Internal) {}

/** The API's refusals, for the catalogue's test and the README's table. */
export const API_ERROR_KINDS = [
  InvalidPaginationError, InvalidFilterError, InvalidEpochError, MalformedQueryError, HttpRefusalError,
  RouteNotFoundError, RateLimitedError, DeadlineExceededError, UnavailableError, InternalApiError,
] as const;

/** A kind of refusal that names a parameter: the detail kinds of the original. */
export type ParameterRefusal = typeof InvalidPaginationError | typeof InvalidFilterError | typeof InvalidEpochError;

const MAX_ECHOED_VALUE = 100;

/** A client value quoted for an error message, cut short so a huge value is not echoed whole. */
export function quote(value: string): string {
  const shown = value.length > MAX_ECHOED_VALUE ? `${value.slice(0, MAX_ECHOED_VALUE)}...` : value;
  return JSON.stringify(shown);
}
