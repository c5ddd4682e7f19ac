/**
 * Background ops as an e2e test follows them: the op view `files/ops` lists, and a wait for one op
 * to reach a state, polling the listing (the route a caller follows them by).
 * @module
 */
import assert from 'node:assert/strict';
import type { OpView } from '../../lib/ops/view.ts';
import { type Stack, tierMs } from './stack.ts';

/** An op view as `files/ops` lists it (the fields an op of its kind does not have are absent). */
export type Op = OpView;

/** The op ended (succeeded, failed, cancelled…): what a caller waits for. */
export const ended = (o: Op): boolean => o.state !== 'running';

/** `id`'s view once `ok` holds for it (default: it ended); throws with the last view seen after `ms`. */
export async function waitOp(s: Stack, id: string, ok: (o: Op) => boolean = ended, ms = tierMs(30_000), server = 'survival'): Promise<Op> {
  const end = Date.now() + ms;
  let last: Op | undefined;
  for (;;) {
    const r = await s.call('GET', `/api/v1/servers/${server}/files/ops`);
    assert.equal(r.status, 200, r.text);
    last = (r.body.ops as Op[]).find((o) => o.id === id);
    if (last && ok(last)) return last;
    if (Date.now() > end) throw new Error(`op ${id} never reached the state wanted; last seen ${JSON.stringify(last)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
