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
  /**
   * The data node's own message, `"<gRPC code name> error"`, the cause only
   * in the detail's `inner` (its endpoints beside the list answer so); else
   * the message names the cause, as our list endpoints do.
   */
  static readonly codeMessage: boolean = false;
  /** Raised by the gateway itself (a value it cannot parse): the stream answers it as a bare status. */
  static readonly fromGateway: boolean = false;

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
    const grpc = options?.grpc ?? kind.grpc;
    super(kind.codeMessage ? `${GRPC_NAMES[grpc]} error` : detail ? `${detail.message}: ${reason}` : reason, options);
    this.grpcCode = grpc;
    this.#status = options?.status;
    this.details = detail ? [{ '@type': ERROR_DETAIL_TYPE, code: detail.code, message: detail.message, inner: reason }] : [];
  }

  get httpStatus(): number {
    return this.#status ?? httpStatusOf(this.grpcCode);
  }

  toBody(): ErrorBody {
    return { code: this.grpcCode, message: this.message, details: this.details };
  }

  get fromGateway(): boolean {
    return (this.constructor as typeof ApiError).fromGateway;
  }
}

/** The names gRPC gives its codes, as the data node's messages spell them. */
const GRPC_NAMES: Readonly<Record<GrpcCode, string>> = {
  3: 'InvalidArgument', 4: 'DeadlineExceeded', 5: 'NotFound', 7: 'PermissionDenied', 8: 'ResourceExhausted',
  12: 'Unimplemented', 13: 'Internal', 14: 'Unavailable', 16: 'Unauthenticated',
};

/** The base class of one kind of refusal: its code, gRPC code and detail, as statics. */
function refusal<C extends string>(
  code: C, grpc: GrpcCode, detail?: { readonly code: number; readonly message: string },
  style: { codeMessage?: boolean; fromGateway?: boolean } = {},
) {
  return class extends ApiError {
    static override readonly code: C = code;
    static override readonly grpc: GrpcCode = grpc;
    static override readonly detail = detail;
    static override readonly codeMessage: boolean = style.codeMessage ?? false;
    static override readonly fromGateway: boolean = style.fromGateway ?? false;
  };
}

const DATA_NODE = { codeMessage: true };

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

/** GET /order/{id} and /order/versions/{id} without an id (detail 10012). */
export class OrderIdMissingError extends refusal('LQ_ORDER_ID_MISSING', GrpcCode.InvalidArgument, { code: 10012, message: 'missing orderID parameter' }, DATA_NODE) {}

/** An order id that is not 64 hex characters (detail 10000). */
export class OrderIdInvalidError extends refusal('LQ_ORDER_ID_INVALID', GrpcCode.InvalidArgument, { code: 10000, message: 'invalid orderID parameter' }, DATA_NODE) {}

/** A version of 0 or less (detail 10000). */
export class OrderVersionInvalidError extends refusal('LQ_ORDER_VERSION_INVALID', GrpcCode.InvalidArgument, { code: 10000, message: 'negative order version' }, DATA_NODE) {}

/** No order of that id, or none with that version (detail 20006). */
export class OrderNotFoundError extends refusal('LQ_ORDER_NOT_FOUND', GrpcCode.NotFound, { code: 20006, message: 'order not found' }, DATA_NODE) {}

/** A stream's market or party id that is not 64 hex characters (detail 10000, "invalid party id" whatever the id's kind, as the original says it). */
export class StreamIdInvalidError extends refusal('LQ_STREAM_ID_INVALID', GrpcCode.InvalidArgument, { code: 10000, message: 'invalid party id' }, DATA_NODE) {}

/** A client that holds its limit of streams already. */
export class StreamLimitError extends refusal('LQ_STREAM_LIMIT', GrpcCode.ResourceExhausted) {}

/** A stream resume (`fromBlock`) from before the changes this store holds. */
export class StreamResumeError extends refusal('LQ_STREAM_RESUME', GrpcCode.InvalidArgument) {}

/** A value the gateway cannot parse into its field (`parsing field "version": ...`): no detail. */
export class UnparsableFieldError extends refusal('LQ_UNPARSABLE_FIELD', GrpcCode.InvalidArgument, undefined, { fromGateway: true }) {}

/** The API's refusals, for the catalogue's test and the README's table. */
export const API_ERROR_KINDS = [
  InvalidPaginationError, InvalidFilterError, InvalidEpochError, MalformedQueryError, HttpRefusalError,
  RouteNotFoundError, RateLimitedError, DeadlineExceededError, UnavailableError, InternalApiError,
  OrderIdMissingError, OrderIdInvalidError, OrderVersionInvalidError, OrderNotFoundError, StreamIdInvalidError,
  StreamLimitError, StreamResumeError, UnparsableFieldError,
] as const;

/** A kind of refusal that names a parameter: the detail kinds of the original. */
export type ParameterRefusal = typeof InvalidPaginationError | typeof InvalidFilterError | typeof InvalidEpochError;

const MAX_ECHOED_VALUE = 100;

/** A client value quoted for an error message, cut short so a huge value is not echoed whole. */
export function quote(value: string): string {
  const shown = value.length > MAX_ECHOED_VALUE ? `${value.slice(0, MAX_ECHOED_VALUE)}...` : value;
  return JSON.stringify(shown);
}
