/**
 * The export Pod's refusal (422 with a Result) as the caller's error: `not_found` → 404,
 * `bad_path` → 400, `too_large` → 413, with the program's message; anything else the Pod
 * answers is not the caller's fault (500, detail in the log only).
 * @module
 */
import type http from 'node:http';
import { domainError, type SingleKindCode } from '../errors.ts';

const MAX_REFUSAL_BYTES = 64 << 10;
const CODES: Record<string, SingleKindCode> = {
  not_found: 'not_found',
  bad_path: 'bad_path',
  too_large: 'too_large',
};

export async function refusalError(res: http.IncomingMessage, job: string): Promise<Error> {
  let text = '';
  for await (const chunk of res) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length > MAX_REFUSAL_BYTES) break;
  }
  res.destroy();
  if (res.statusCode === 422) {
    try {
      const r = JSON.parse(text) as { code?: unknown; error?: unknown };
      const mapped = typeof r.code === 'string' ? CODES[r.code] : undefined;
      if (mapped) return domainError(mapped, typeof r.error === 'string' ? r.error : (r.code as string));
    } catch {
      // Not a Result: an infrastructure failure below.
    }
  }
  return new Error(`export job ${job} answered ${res.statusCode}: ${text.slice(0, 200)}`);
}
