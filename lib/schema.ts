/**
 * The schema library of everything a function runs: zod/mini, with zod's English messages. zod's
 * method-chaining build is 443 KiB that a woken function's first request would load and run; mini
 * is the same core (same checks, same messages, same JSON Schema) in about a twentieth of that.
 * Only tests use `zod` itself. Import it as `import * as z from '…/schema.ts'`.
 * @module
 */
import * as z from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import en from 'zod/v4/locales/en.js';

// mini carries no locale: without this its messages are a bare "Invalid input".
z.config(en());

// Imported as `import * as z`: the bundler then keeps only the parts a schema uses (a namespace
// object passed on whole would keep all of zod/mini, every locale included).
export * from 'zod/mini';

/** `schema.describe(text)` of zod's full build: a copy carrying the description (the document's). */
export function described<T extends $ZodType>(schema: T, description: string): T {
  const copy = z.clone(schema as never) as unknown as T;
  z.globalRegistry.add(copy, { description });
  return copy;
}

/** The description `described` gave, for the generators. */
export function descriptionOf(schema: $ZodType): string | undefined {
  return z.globalRegistry.get(schema)?.description;
}
