import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import * as classic from 'zod';
import * as z from './schema.ts';
import { described, descriptionOf } from './schema.ts';

const first = (r: { success: boolean; error?: { issues: { message: string; path: PropertyKey[] }[] } }) => r.error?.issues[0];

test("zod/mini answers zod's own English messages, as the routes' callers have always read them", () => {
  const cases: [z.ZodMiniType, classic.ZodType, unknown][] = [
    [z.strictObject({ to: z.optional(z.string()) }), classic.strictObject({ to: classic.string().optional() }), { to: 5 }],
    [z.strictObject({ to: z.optional(z.string()) }), classic.strictObject({ to: classic.string().optional() }), { to: 'a', extra: 1 }],
    [z.object({ n: z.number() }), classic.object({ n: classic.number() }), {}],
    [z.array(z.string()).check(z.maxLength(1)), classic.array(classic.string()).max(1), ['a', 'b']],
    [z.enum(['a', 'b']), classic.enum(['a', 'b']), 'c'],
    [z.nullable(z.boolean()), classic.boolean().nullable(), 'yes'],
  ];
  for (const [mini, full, input] of cases) {
    const m = first(z.safeParse(mini, input));
    const f = first(full.safeParse(input));
    assert.ok(m && f, JSON.stringify(input));
    assert.equal(m.message, f.message, JSON.stringify(input));
    assert.deepEqual(m.path, f.path);
  }
});

test('zod/mini speaks English in a process that never loads zod itself (as a function bundle)', () => {
  // zod's full build sets the English locale when it loads, so this test's own process cannot tell.
  const script = `import * as z from ${JSON.stringify(new URL('./schema.ts', import.meta.url).href)};
    console.log(z.safeParse(z.strictObject({ a: z.string() }), { a: 5, b: 1 }).error.issues.map((i) => i.message).join('|'));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim();
  assert.equal(out, 'Invalid input: expected string, received number|Unrecognized key: "b"');
});

test('described gives a copy its description and leaves the original as it was', () => {
  const hex = z.string();
  const a = described(hex, 'a digest');
  assert.equal(descriptionOf(a), 'a digest');
  assert.equal(descriptionOf(described(a, 'of the copy')), 'of the copy');
  assert.equal(descriptionOf(a), 'a digest');
  assert.equal(descriptionOf(hex), undefined);
});
