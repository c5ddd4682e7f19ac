/**
 * Knative retries a delivery answered 404, 409, 429 or 5xx and never one answered 400 or another
 * 4xx. Our routes answer 404 for what does not exist (a server, a file), which no retry fixes, so
 * an event's 404 becomes 400; the envelope's code still says what was missing. Everything else
 * already means the same to a Broker as to an HTTP caller: 409 (busy, running) and 5xx may pass.
 * @module
 */
export function deliveryStatus(httpStatus: number): number {
  return httpStatus === 404 ? 400 : httpStatus;
}
