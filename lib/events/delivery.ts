/**
 * Knative retries a delivery answered 404, 409, 429 or 5xx and never one answered 400 or another
 * 4xx. A route's answer means the same to a Broker as to an HTTP caller, except where the HTTP
 * status would make a Broker retry what no retry can fix:
 * - 404 (no such server, no such file) becomes 400; the envelope's code still says what was missing;
 * - a 409 for a file precondition (`file_exists` for create_only, `file_changed` for expect_sha256)
 *   becomes 412: the same event would meet the same file again.
 * Other 409s (the server is running, maintenance holds the world) pass: those do end.
 * @module
 */
const PRECONDITIONS = new Set(['file_exists', 'file_changed']);

export function deliveryStatus(httpStatus: number, code: string | undefined): number {
  if (httpStatus === 404) return 400;
  if (httpStatus === 409 && code !== undefined && PRECONDITIONS.has(code)) return 412;
  return httpStatus;
}

/** The envelope code of an error answer's body, if it has one. */
export function envelopeCode(body: string): string | undefined {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}
