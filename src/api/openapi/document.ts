/**
 * The OpenAPI 3.1 document of the API, built from the routes' own
 * declarations (./route-doc.ts): each parameter as its reader reads it
 * (../parameters.ts), under its JSON name with its proto name beside it
 * (the original's gateway accepts both), each refusal from the catalogue
 * (../errors.ts) with a real body (./examples.ts).
 */
import { readFileSync } from 'node:fs';
import { BLOCK_HEIGHT_HEADER, BLOCK_TIMESTAMP_HEADER } from '../block-headers.js';
import { DeadlineExceededError, HttpRefusalError, httpStatusOf, InternalApiError, RateLimitedError, UnavailableError, type GrpcCode } from '../errors.js';
import { protoName, type JsonSchema, type ParameterDecl } from '../parameters.js';
import { REFUSAL_EXAMPLES } from './examples.js';
import type { AnswerDoc, RefusalKind, RouteDoc } from './route-doc.js';
import { ref, SCHEMAS } from './schemas.js';

/** Refusals any route may answer, beside its own: what the HTTP layer refuses, the rate limit, a server going away, a bug. */
export const COMMON_REFUSALS: readonly RefusalKind[] = [HttpRefusalError, RateLimitedError, UnavailableError, DeadlineExceededError, InternalApiError];

/** What the tags group, in the page's order. */
const TAGS = [
  { name: 'orders', description: 'Orders: their current state, filtered and paged.' },
  { name: 'bundles', description: 'ERC20 multisig signer bundles.' },
  { name: 'operations', description: 'For operators and load balancers: health, readiness, ingestion, metrics.' },
];

type Json = Record<string, unknown>;

function packageVersion(): string {
  // dist/src/api/openapi/ (or src/api/openapi/ under a TypeScript runner) -> the package's root.
  const text = readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

const LIST_NOTE = {
  repeat: ' Repeat the key for more values.',
  'repeat-or-commas': ' Repeat the key, or separate values by commas.',
} as const;

/**
 * A declared parameter, under its JSON name, with its proto name (which the
 * original's gateway reads too) said in its description and in `x-aliases`.
 * Not as a second parameter: generated clients make one identifier of both
 * (`paginationNewestFirst`, `pagination_newest_first`) and would not compile.
 */
function parameter(decl: ParameterDecl): Json {
  const schema = decl.list === undefined ? decl.schema : { type: 'array', items: decl.schema };
  const alias = decl.in === 'path' ? decl.name : protoName(decl.name);
  const spelling = alias === decl.name ? '' : ` Also spelt \`${alias}\` (its proto name): give one spelling or the other.`;
  return {
    name: decl.name,
    in: decl.in,
    required: decl.in === 'path' || decl.required === true,
    description: decl.description + (decl.list === undefined ? '' : LIST_NOTE[decl.list]) + spelling,
    schema: decl.default === undefined ? schema : { ...schema, default: decl.default },
    ...(decl.list === undefined ? {} : { style: 'form', explode: true }),
    ...(alias === decl.name ? {} : { 'x-aliases': [alias] }),
  };
}

/** Each declared parameter, once. */
export function documentedParameters(decls: readonly ParameterDecl[]): Json[] {
  return decls.map(parameter);
}

const BLOCK_HEADERS = {
  [BLOCK_HEIGHT_HEADER]: { $ref: '#/components/headers/X-Block-Height' },
  [BLOCK_TIMESTAMP_HEADER]: { $ref: '#/components/headers/X-Block-Timestamp' },
};

const HEADERS = {
  'X-Block-Height': {
    description: 'The height of the last block stored when the answer was read (a page: of the very snapshot it was read from); 0 before any.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'X-Block-Timestamp': {
    description: 'That block\'s time, Unix ns on the microsecond; 0 before any.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  ETag: { description: 'A hash of the body: give it as If-None-Match to be answered 304 while it holds.', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds until a request will be let through.', schema: { type: 'integer' } },
};

function answer(doc: AnswerDoc): Json {
  const headers = {
    ...(doc.blockHeaders ? BLOCK_HEADERS : {}),
    ...(doc.etag === true ? { ETag: { $ref: '#/components/headers/ETag' } } : {}),
  };
  const media: Json = { schema: doc.schema };
  if (doc.example !== undefined) media.example = doc.example;
  return {
    description: doc.description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { [doc.contentType ?? 'application/json']: media },
  };
}

const statusOf = (kind: RefusalKind): string => String(httpStatusOf(kind.grpc as GrpcCode));

function describeKind(kind: RefusalKind): string {
  const detail = kind.detail === undefined ? '' : ` (detail ${kind.detail.code} \`${kind.detail.message}\`)`;
  return `\`${kind.code}\`${detail}`;
}

/** The refusals of a route, by HTTP status, each in the error body with the real bodies of its kinds. */
function refusals(route: RouteDoc): Record<string, Json> {
  const kinds = [...route.refusals, ...COMMON_REFUSALS.filter((k) => !(route.unlimited === true && k === RateLimitedError))];
  const byStatus = new Map<string, RefusalKind[]>();
  for (const kind of kinds) {
    // What the HTTP layer refuses comes with several statuses (400, 405, 408, 417, 431): any 4xx.
    const status = kind === HttpRefusalError ? '4XX' : statusOf(kind);
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }
  const out: Record<string, Json> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a.localeCompare(b))) {
    const examples: Record<string, Json> = {};
    for (const kind of group) {
      const example = REFUSAL_EXAMPLES[kind.code];
      if (example !== undefined) examples[kind.code] = { summary: `GET ${example.url}`, value: example.body };
    }
    const headers: Json = { ...BLOCK_HEADERS, ...(status === '429' ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : {}) };
    out[status] = {
      description: `Refused: ${group.map(describeKind).join(', ')}.`,
      headers,
      content: { 'application/json': { schema: ref('Error'), ...(Object.keys(examples).length > 0 ? { examples } : {}) } },
    };
  }
  return out;
}

function operation(route: RouteDoc): Json {
  const responses: Record<string, Json> = { 200: answer(route.answer) };
  if (route.answer.etag === true) {
    responses[304] = {
      description: 'Not Modified: If-None-Match names the answer\'s current ETag. No body.',
      headers: { ...BLOCK_HEADERS, ETag: { $ref: '#/components/headers/ETag' } },
    };
  }
  for (const [status, doc] of Object.entries(route.otherAnswers ?? {})) responses[status] = answer(doc);
  Object.assign(responses, refusals(route));
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
    parameters: documentedParameters(route.parameters),
    responses,
  };
}

export type OpenApiDocument = Json & { openapi: '3.1.0'; paths: Record<string, { get: Json }> };

/** The document of `routes`. */
export function openApiDocument(routes: readonly RouteDoc[]): OpenApiDocument {
  const paths: Record<string, { get: Json }> = {};
  for (const route of routes) {
    paths[route.path] = { get: operation(route) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'ledger-query',
      version: packageVersion(),
      description:
        'Read-only queries over a trading network\'s orders and ERC20 multisig signer bundles, wire-compatible with ' +
        'the data node REST API v0.73: the same paths, parameters (in lowerCamel or snake_case), JSON and error body. ' +
        'Every answer of the network\'s queries, pages and refusals alike, names the last block stored in X-Block-Height ' +
        'and X-Block-Timestamp. The examples are real answers, for the network\'s own recording (system_tests.evt.gz).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Relative: a client (and the docs page's "try it") calls the server that served the document.
    servers: [{ url: '/' }],
    // Said, not left out: no operation needs credentials (linters such as Redocly's refuse a document that is silent).
    security: [],
    tags: TAGS,
    paths,
    components: { schemas: SCHEMAS, headers: HEADERS },
  };
}

/** The JSON Schema of a component, for tests. */
export function componentSchema(name: string): JsonSchema | undefined {
  return SCHEMAS[name];
}
