/**
 * The zod schemas of every route in table.ts, under the same ids, collected from each function's
 * schemas.ts by scripts/collect.ts (shared pieces in common-schemas.ts): its query, its body, and each
 * success answer as the handler sends it. The query and body schemas are what lib/http parses
 * (register.ts); the answers are what the OpenAPI document promises, so they describe what the
 * handlers really send: nullable where it can be null, optional where it can be absent, and
 * strict only where the handler builds the whole object itself.
 * @module
 */

export { SCHEMAS } from './schemas.generated.ts';
