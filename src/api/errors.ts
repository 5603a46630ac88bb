/**
 * The error body of the original gateway: a google.rpc.Status in JSON, whose
 * details carry the data node's own ErrorDetail.
 */

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

/** The reverse mapping, for errors Fastify itself raises with an HTTP status. */
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

/** The data node's error kinds (vega.ErrorDetail code and message). */
export interface DetailKind {
  readonly code: number;
  readonly message: string;
}

export const InvalidPagination: DetailKind = { code: 10028, message: 'invalid pagination' };
export const InvalidFilter: DetailKind = { code: 10029, message: 'invalid filter' };
export const EpochIdParse: DetailKind = { code: 10036, message: 'failed to parse epoch id' };

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

/** An error whose message is safe to show to the client as it is. */
export class ApiError extends Error {
  readonly grpcCode: GrpcCode;
  readonly details: ErrorDetail[];

  constructor(grpcCode: GrpcCode, message: string, details: ErrorDetail[] = []) {
    super(message);
    this.name = 'ApiError';
    this.grpcCode = grpcCode;
    this.details = details;
  }

  get httpStatus(): number {
    return httpStatusOf(this.grpcCode);
  }

  toBody(): ErrorBody {
    return { code: this.grpcCode, message: this.message, details: this.details };
  }
}

/**
 * A 400 for a bad request value. `reason` names the parameter and the value;
 * it becomes the detail's `inner` and, prefixed by the kind, the message.
 */
export function invalidArgument(kind: DetailKind, reason: string): ApiError {
  return new ApiError(GrpcCode.InvalidArgument, `${kind.message}: ${reason}`, [
    { '@type': ERROR_DETAIL_TYPE, code: kind.code, message: kind.message, inner: reason },
  ]);
}

export function notFound(): ApiError {
  return new ApiError(GrpcCode.NotFound, 'Not Found');
}

/** What the client sees of any failure we did not anticipate; the cause goes to the log only. */
export function internalError(): ApiError {
  return new ApiError(GrpcCode.Internal, 'internal error');
}

const MAX_ECHOED_VALUE = 100;

/** A client value quoted for an error message, cut short so a huge value is not echoed whole. */
export function quote(value: string): string {
  const shown = value.length > MAX_ECHOED_VALUE ? `${value.slice(0, MAX_ECHOED_VALUE)}...` : value;
  return JSON.stringify(shown);
}
