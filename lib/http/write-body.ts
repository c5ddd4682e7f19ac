/**
 * The write route's body checks, in Felis's order (content present and base64, size, the preconditions, then the digest): each refusal happens
 * before the lock and before any Job.
 * @module
 */
import { createHash } from 'node:crypto';
import { STRICT_BASE64 } from '../protocol/content-env.ts';
import { MAX_ENV_WRITE_BYTES, MAX_WRITE_BYTES } from '../protocol/limits.ts';
import * as z from '../schema.ts';
import { ApiError, badRequest } from './envelope.ts';

export const writeBodySchema = z.strictObject({
  content: z.optional(z.nullable(z.string())),
  content_sha256: z.optional(z.string()),
  expect_sha256: z.optional(z.string()),
  create_only: z.optional(z.boolean()),
});

export interface WriteRequest {
  content: Buffer;
  sha256: string;
  expectSha256?: string;
  createOnly: boolean;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The largest JSON body the write route reads: a 1 MiB write's base64 is 1,398,104 characters, the other fields a few hundred bytes. */
export const MAX_WRITE_BODY_BYTES = 2 << 20;

/** How the content reaches the Job decides how much a write carries (docs/writes.md). */
export type WriteCarrier = 'streamed' | 'env';

/** The most content a write carries this way, and the 413 past it, in the caller's words. */
export function writeLimit(carrier: WriteCarrier): { max: number; tooLarge: (n: number) => string } {
  if (carrier === 'streamed') return { max: MAX_WRITE_BYTES, tooLarge: (n) => `content is ${n} bytes; a write carries at most ${MAX_WRITE_BYTES} bytes` };
  return {
    max: MAX_ENV_WRITE_BYTES,
    tooLarge: (n) =>
      `content is ${n} bytes; a write carries at most ${MAX_ENV_WRITE_BYTES} bytes through the Job's environment, which this deployment uses (no job key is configured; with one, ${MAX_WRITE_BYTES})`,
  };
}

export function checkWriteBody(body: z.output<typeof writeBodySchema>, carrier: WriteCarrier): WriteRequest {
  if (body.content === undefined || body.content === null) throw badRequest('the content field is required');
  if (!STRICT_BASE64.test(body.content)) throw badRequest('the content field is not standard base64');
  const content = Buffer.from(body.content, 'base64');
  const limit = writeLimit(carrier);
  if (content.length > limit.max) throw new ApiError(413, 'too_large', limit.tooLarge(content.length));
  const expect = body.expect_sha256;
  if (expect !== undefined && !HEX64.test(expect)) throw badRequest('expect_sha256 must be 64 lowercase hex characters');
  if (body.create_only && expect !== undefined) throw badRequest('create_only and expect_sha256 cannot be combined');
  const sum = body.content_sha256 ?? '';
  if (sum === '') throw new ApiError(400, 'digest_required', 'content_sha256 is required');
  if (!HEX64.test(sum)) throw new ApiError(400, 'bad_digest', 'content_sha256 must be 64 lowercase hex characters');
  if (createHash('sha256').update(content).digest('hex') !== sum) {
    throw new ApiError(400, 'digest_mismatch', 'content_sha256 is not the SHA-256 of the content');
  }
  return { content, sha256: sum, expectSha256: expect, createOnly: body.create_only ?? false };
}
