/**
 * What the OpenAPI document (./document.ts) says of one route, declared
 * beside the route itself: its parameters are the declarations its reader
 * reads (../parameters.ts), its refusals kinds of the catalogue
 * (../errors.ts), its answer a schema of ./schemas.ts.
 */
import type { ApiError } from '../errors.js';
import type { JsonSchema, ParameterDecl } from '../parameters.js';

/** A kind of refusal of the catalogue: its class, whose statics say its code, gRPC code and detail. */
export type RefusalKind = (abstract new (...args: never[]) => ApiError) & {
  readonly code: string;
  readonly grpc: number;
  readonly detail: { readonly code: number; readonly message: string } | undefined;
};

export interface AnswerDoc {
  description: string;
  /** `application/json` unless said. */
  contentType?: string;
  schema: JsonSchema;
  /** A real answer, generated (./examples.ts). */
  example?: unknown;
  /** The answer carries the X-Block-Height and X-Block-Timestamp headers (every answer of the network's queries). */
  blockHeaders: boolean;
  /** The answer carries an ETag, and a request whose If-None-Match names it is answered 304. */
  etag?: boolean;
}

export interface RouteDoc {
  /** The path as OpenAPI writes it: `/api/v2/order/{orderId}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** Path and query parameters, each as its reader reads it. */
  parameters: readonly ParameterDecl[];
  /** The 200 answer. */
  answer: AnswerDoc;
  /** Other answers that are no refusal of the catalogue (a 503 of /health, say), by status. */
  otherAnswers?: Readonly<Record<string, AnswerDoc>>;
  /** The refusals this route's own reading may answer; every route may also answer ./document.ts's COMMON_REFUSALS. */
  refusals: readonly RefusalKind[];
  /** Exempt from --rate-limit (the load balancer's checks): never a 429. */
  unlimited?: boolean;
  /**
   * Reads a request URL as the route does (and throws what it refuses): the
   * test spies on it to check it reads exactly `parameters`. Absent for a
   * route that reads no parameter.
   */
  read?: (url: string) => unknown;
}
