/**
 * A small admin client for a kube-apiserver: plain HTTPS with the admin bearer token and no
 * certificate verification (the test control plane's certificate is self-signed). The kubelet's
 * real-apiserver adapter and the cluster tier's helpers both use it; it is not the functions' path
 * (they talk through client-node).
 *
 * @module
 */

import { Agent, request } from 'undici';

type Any = any;

export interface AdminReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed JSON body, or undefined. */
  body: Any;
}

export class HttpError extends Error {
  readonly status: number;
  readonly body: Any;
  constructor(what: string, reply: AdminReply) {
    super(`${what}: HTTP ${reply.status} ${reply.body?.message ?? reply.text.slice(0, 300)}`);
    this.status = reply.status;
    this.body = reply.body;
  }
}

/** An HTTPS agent that skips verification of the apiserver's self-signed certificate. */
export function insecureAgent(): Agent {
  return new Agent({ connect: { rejectUnauthorized: false }, keepAliveTimeout: 10_000 });
}

export class AdminClient {
  readonly url: string;
  readonly token: string;
  readonly agent: Agent;

  constructor(url: string, token: string, agent: Agent = insecureAgent()) {
    this.url = url.replace(/\/$/, '');
    this.token = token;
    this.agent = agent;
  }

  async call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<AdminReply> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json', 'user-agent': 'felis-cluster-tier' };
    let payload: string | undefined;
    if (body !== undefined) {
      headers['content-type'] = contentType;
      payload = typeof body === 'string' ? body : JSON.stringify(body);
    }
    const res = await request(this.url + path, { method: method as 'GET', headers, body: payload, dispatcher: this.agent });
    const text = await res.body.text();
    let parsed: Any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, headers: res.headers, text, body: parsed };
  }

  /** `call`, throwing HttpError unless the status is 2xx (or one of `ok`). */
  async must(method: string, path: string, body?: unknown, contentType?: string, ok: number[] = []): Promise<AdminReply> {
    const r = await this.call(method, path, body, contentType);
    if ((r.status >= 200 && r.status < 300) || ok.includes(r.status)) return r;
    throw new HttpError(`${method} ${path}`, r);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
