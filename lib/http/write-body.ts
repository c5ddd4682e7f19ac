/**
 * The write route's body checks, in Felis's order (content present and base64, size, the preconditions, then the digest): each refusal happens
 * before the lock and before any Job.
 * @module
 */
import { createHash } from 'node:crypto';
import { STRICT_BASE64 } from '../protocol/content-env.ts';
import { MAX_WRITE_BYTES } from '../protocol/limits.ts';
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

export function checkWriteBody(body: z.output<typeof writeBodySchema>): WriteRequest {
  if (body.content === undefined || body.content === null) throw badRequest('the content field is required');
  if (!STRICT_BASE64.test(body.content)) throw badRequest('the content field is not standard base64');
  const content = Buffer.from(body.content, 'base64');
  if (content.length > MAX_WRITE_BYTES) {
    throw new ApiError(413, 'too_large', `content is ${content.length} bytes, the limit is ${MAX_WRITE_BYTES}`);
  }
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
