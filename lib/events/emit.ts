/**
 * CloudEvents out. With `K_SINK` set (a SinkBinding injects it), what the functions report — an
 * audited mutation, a settled restore chain — is also sent there as a binary-mode CloudEvent,
 * with `K_CE_OVERRIDES` extensions applied. Without it nothing is sent: the same facts are already
 * structured log lines. Sending never delays or fails the request that caused it: it runs after,
 * bounded in time and in number; a failed or dropped send is logged with the event's id.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.ts';

export interface OutEvent {
  type: string;
  subject?: string;
  data: Record<string, unknown>;
}

/** Sends that may be open at once; past it, events are dropped (and logged) rather than queued. */
export const MAX_IN_FLIGHT = 64;
export const SEND_TIMEOUT_MS = 5000;

/** The cloudevents SDK, loaded with the first send: a function without K_SINK never needs it. */
let sdk: Promise<typeof import('cloudevents')> | undefined;
const loadSdk = () => (sdk ??= import('cloudevents'));

class SinkSender {
  readonly url: string;
  readonly #source: string;
  readonly #extensions: Record<string, string>;
  #inFlight = 0;

  constructor(url: string, env: NodeJS.ProcessEnv) {
    this.url = url;
    this.#source = `/felis-world/${env.K_SERVICE ?? 'functions'}`;
    this.#extensions = overrides(env.K_CE_OVERRIDES);
  }

  send(ev: OutEvent, logger: Logger): void {
    const id = randomUUID();
    if (this.#inFlight >= MAX_IN_FLIGHT) {
      logger.warn({ event_id: id, event_type: ev.type }, 'event dropped: too many sends in flight');
      return;
    }
    this.#inFlight++;
    loadSdk()
      .then(({ CloudEvent, HTTP }) => {
        const ce = new CloudEvent({ ...this.#extensions, id, type: ev.type, source: this.#source, ...(ev.subject ? { subject: ev.subject } : {}), datacontenttype: 'application/json', data: ev.data });
        const msg = HTTP.binary(ce);
        return fetch(this.url, { method: 'POST', headers: msg.headers as Record<string, string>, body: msg.body as string, signal: AbortSignal.timeout(SEND_TIMEOUT_MS) });
      })
      .then(async (res) => {
        await res.body?.cancel();
        if (!res.ok) logger.warn({ event_id: id, event_type: ev.type, status: res.status }, 'event send refused by the sink');
      })
      .catch((err: unknown) => logger.warn({ event_id: id, event_type: ev.type, err: String(err) }, 'event send failed'))
      .finally(() => {
        this.#inFlight--;
      });
  }
}

/** `K_CE_OVERRIDES` is `{"extensions":{…}}`; anything unreadable adds nothing. */
function overrides(raw: string | undefined): Record<string, string> {
  if (!raw) return {};
  try {
    const ext = (JSON.parse(raw) as { extensions?: unknown }).extensions;
    if (!ext || typeof ext !== 'object') return {};
    return Object.fromEntries(Object.entries(ext).filter(([k, v]) => /^[a-z0-9]{1,20}$/.test(k) && typeof v === 'string')) as Record<string, string>;
  } catch {
    return {};
  }
}

let sender: SinkSender | undefined;

/** Sends `ev` to K_SINK when one is set (read from the environment, so a rebinding is followed). */
export function emit(ev: OutEvent, logger: Logger, env: NodeJS.ProcessEnv = process.env): void {
  const url = env.K_SINK;
  if (!url) return;
  if (sender?.url !== url) sender = new SinkSender(url, env);
  sender.send(ev, logger);
}
