/**
 * `?watch=true` on a collection, as the apiserver's watch cache serves it: a chunked
 * `application/json` stream of `{"type":…,"object":…}` lines (`kubectl get -w`, `kubectl wait`,
 * informers). The store's change events are kept in a window of recent history, so a watch from a
 * `resourceVersion` a list returned replays what changed since (`0` or none: the current objects
 * as ADDED first). A version older than the window is answered with the apiserver's
 * `410 Expired` ERROR event. Selectors apply to the old and the new object, so an object that
 * leaves the selection is DELETED and one that enters it is ADDED. With a Table `Accept`, each
 * event's object is a one-row Table (the column definitions only in the first).
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceDef } from './kinds/types.ts';
import type { Registry } from './registry.ts';
import type { EventType, KObject, StoreEvent } from './store.ts';
import { asTable, type TableRequest } from './tables.ts';

type Any = any;

/** How many recent changes a watch can resume from (the watch cache keeps a window too). */
const HISTORY = 4096;

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  timeoutSeconds?: number;
  table?: TableRequest;
}

interface Recorded extends StoreEvent {
  rv: number;
}

export class WatchHub {
  private readonly history: Recorded[] = [];
  /** The resourceVersion before which no change is in `history` any more. */
  private horizon: number;
  private readonly unsubscribe: () => void;
  private readonly open = new Set<ServerResponse>();

  private readonly registry: Registry;

  constructor(registry: Registry) {
    this.registry = registry;
    this.horizon = Number(registry.store.resourceVersion());
    this.unsubscribe = registry.store.subscribe((e) => {
      this.history.push({ ...e, rv: Number(e.object.metadata.resourceVersion) });
      if (this.history.length > HISTORY) this.horizon = this.history.shift()!.rv;
    });
  }

  close(): void {
    this.unsubscribe();
    for (const res of this.open) res.destroy();
    this.open.clear();
  }

  /** Serves one watch; selectors are checked (a 400) before the stream starts. */
  serve(_req: IncomingMessage, res: ServerResponse, def: ResourceDef, namespace: string, o: WatchOptions): void {
    const matches = this.registry.matcher(def, o);
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    let first = true;
    const encode = (type: EventType | 'ERROR', obj: KObject | Any): string => {
      if (type === 'ERROR' || !o.table) return `${JSON.stringify({ type, object: type === 'ERROR' ? obj : { kind: def.kind, apiVersion, ...obj } })}\n`;
      const t = asTable(def, obj, o.table, { headers: first });
      first = false;
      return `${JSON.stringify({ type, object: t })}\n`;
    };
    const relevant = (e: StoreEvent): { type: EventType; object: KObject } | undefined => {
      if (e.resource !== def.resource || e.object.metadata.namespace !== namespace) return undefined;
      const now = matches(e.object);
      if (e.type !== 'MODIFIED') return now ? { type: e.type, object: e.object } : undefined;
      const before = e.old ? matches(e.old) : now;
      if (now && before) return { type: 'MODIFIED', object: e.object };
      if (now) return { type: 'ADDED', object: e.object };
      if (before) return { type: 'DELETED', object: e.object };
      return undefined;
    };

    res.writeHead(200, {
      'Audit-Id': randomUUID(),
      'Cache-Control': 'no-cache, private',
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
    });
    res.flushHeaders();
    this.open.add(res);
    const send = (line: string) => {
      if (!res.writableEnded && !res.destroyed) res.write(line);
    };

    const rv = o.resourceVersion;
    if (rv === undefined || rv === '' || rv === '0') {
      // Start from now: the current objects, as ADDED.
      for (const obj of this.registry.store.select(def.resource, namespace, matches)) send(encode('ADDED', obj));
    } else {
      const from = Number(rv);
      if (!Number.isFinite(from) || !/^\d+$/.test(rv)) {
        send(encode('ERROR', expired(`invalid resource version: ${rv}`, 500, 'InternalError')));
      } else if (from < this.horizon) {
        send(encode('ERROR', expired(`too old resource version: ${rv} (${this.horizon})`, 410, 'Expired')));
        res.end();
        this.open.delete(res);
        return;
      } else {
        for (const e of this.history) {
          if (e.rv <= from) continue;
          const ev = relevant(e);
          if (ev) send(encode(ev.type, ev.object));
        }
      }
    }
    const unsubscribe = this.registry.store.subscribe((e) => {
      const ev = relevant(e);
      if (ev) send(encode(ev.type, ev.object));
    });
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      unsubscribe();
      if (timer) clearTimeout(timer);
      this.open.delete(res);
    };
    if (o.timeoutSeconds !== undefined && o.timeoutSeconds > 0) {
      timer = setTimeout(() => {
        done();
        res.end();
      }, o.timeoutSeconds * 1000);
      timer.unref();
    }
    // The client going away closes the response.
    res.on('close', done);
  }
}

function expired(message: string, code: number, reason: string): Any {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}
