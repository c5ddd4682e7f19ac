/**
 * The HTTP front of the emulated kube-apiserver: request info from the path (as
 * `RequestInfoFactory`), bearer authentication, request counting, RBAC, injected faults, then the
 * handlers for get/list/create/update/patch/delete/deletecollection, the `status` and `binding`
 * subresources and `pods/log` (proxied in-process to the local kubelet). Replies and errors are
 * what client-node sees from a real server: `application/json` objects and `Status` bodies,
 * `text/plain` logs, and a 204 with no Content-Type for an unscheduled Pod's log.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { load as loadYaml } from 'js-yaml';
import { notRegistered, quantityDecodeError, unrecognizedBody } from './decode.ts';
import {
  ApiError,
  badRequest,
  failure,
  fieldErr,
  forbidden,
  genericServerResponse,
  grString,
  internalError,
  invalid,
  methodNotAllowed,
  notFound,
  pathNotFound,
  requestEntityTooLarge,
  unauthorized,
  unsupportedMediaType,
} from './errors.ts';
import type { Faults } from './faults.ts';
import { apiVersionOf, PATCH_APPLY_YAML, PATCH_JSON, PATCH_MERGE, PATCH_STRATEGIC, type ResourceDef } from './kinds/types.ts';
import type { Kubelet } from './kubelet/index.ts';
import type { LogQuery } from './kubelet/logs.ts';
import { OPENAPI_PROTOBUF, openapiDocument } from './openapi.ts';
import { applyMerge, isObject, type Json, JsonPatchError, jsonPatch, mergePatch, StrategicPatchError, strategicMergePatch } from './patch.ts';
import { type Attributes, type Authenticator, forbiddenMessage, type RbacAuthorizer, type UserInfo } from './rbac.ts';
import type { Recorder } from './records.ts';
import { groupResource, type Registry, rfc3339 } from './registry.ts';
import { bearerToken, parseBoolParam, parseIntParam, type RequestInfo, requestInfo } from './request-info.ts';
import { REVIEW_GROUPS, REVIEW_RESOURCES, review } from './reviews.ts';
import type { KObject } from './store.ts';
import { asTable, tableRequest } from './tables.ts';
import { WatchHub } from './watch.ts';

type Any = any;

const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

/** The request body limit of kube-apiserver (3 MiB). */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Request counts by user and `<verb> <resource>[/<subresource>]`. */
export class RequestCounter {
  private readonly byUser = new Map<string, Map<string, number>>();

  add(user: string, key: string): void {
    let m = this.byUser.get(user);
    if (!m) this.byUser.set(user, (m = new Map()));
    m.set(key, (m.get(key) ?? 0) + 1);
  }

  counts(user?: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [u, m] of this.byUser) {
      if (user !== undefined && u !== user) continue;
      for (const [k, n] of m) out[k] = (out[k] ?? 0) + n;
    }
    return out;
  }

  reset(): void {
    this.byUser.clear();
  }
}

export interface ApiServerDeps {
  registry: Registry;
  authn: Authenticator;
  rbac: () => RbacAuthorizer;
  faults: Faults;
  counter: RequestCounter;
  kubelet: Kubelet;
  recorder: Recorder;
  logger: { info(...a: unknown[]): void; warn(...a: unknown[]): void };
}

interface Reply {
  code: number;
  body?: unknown;
  warnings?: string[];
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > MAX_REQUEST_BODY_BYTES) {
    req.resume();
    throw requestEntityTooLarge(MAX_REQUEST_BODY_BYTES);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BODY_BYTES) {
      req.resume();
      throw requestEntityTooLarge(MAX_REQUEST_BODY_BYTES);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseJson(buf: Buffer): Json {
  try {
    return JSON.parse(buf.toString('utf8')) as Json;
  } catch (e) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}

function goJsonType(v: Json): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Served over HTTPS only (`tls`: the certificate and key from `clusterTls`), as kubectl sends a bearer token only over TLS. */
export function createApiServer(deps: ApiServerDeps, tls: { certPem: string; keyPem: string }): Server {
  const { registry, authn, faults, counter, kubelet, recorder, logger } = deps;

  function writeJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
    const text = `${JSON.stringify(body)}\n`;
    res.writeHead(code, {
      'Audit-Id': randomUUID(),
      'Cache-Control': 'no-cache, private',
      'Content-Type': 'application/json',
      'X-Kubernetes-Pf-Flowschema-Uid': 'embedded',
      'X-Kubernetes-Pf-Prioritylevel-Uid': 'embedded',
      'Content-Length': String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }

  function writeError(res: ServerResponse, err: unknown): void {
    const e = err instanceof ApiError ? err : internalError(String((err as Error)?.message ?? err));
    if (!(err instanceof ApiError)) logger.warn({ err: String((err as Error)?.stack ?? err) }, 'apiserver: internal error');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    writeJson(res, e.status.code, e.status, e.headers);
  }

  function warningHeader(w: string[] | undefined): Record<string, string[]> {
    return w?.length ? { Warning: w.map((m) => `299 - ${JSON.stringify(m)}`) } : {};
  }

  function authorize(user: UserInfo, info: RequestInfo): void {
    const attrs: Attributes = { user, ...info };
    const d = deps.rbac().authorize(attrs);
    if (d.allowed) return;
    const msg = d.reason ? `${forbiddenMessage(attrs)}: ${d.reason}` : forbiddenMessage(attrs);
    if (!info.resourceRequest || !info.resource) {
      throw new ApiError(failure(403, 'Forbidden', `forbidden: ${msg}`, {}));
    }
    throw forbidden({ group: info.apiGroup, resource: info.resource }, info.name, msg);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const received = performance.now();
    const url = new URL(req.url ?? '/', 'http://embedded');
    const method = req.method ?? 'GET';
    const info = requestInfo(method, url);
    // No credentials: the anonymous user (kube-apiserver's --anonymous-auth defaults to true), whom
    // RBAC then refuses. A token that is sent but unknown is a 401.
    const token = bearerToken(req.headers.authorization);
    const user = token === undefined ? ANONYMOUS : authn.authenticate(`Bearer ${token}`);
    const countKey = info.resourceRequest ? `${info.verb} ${info.subresource ? `${info.resource}/${info.subresource}` : info.resource}` : `${info.verb} ${info.path}`;
    counter.add(user?.name ?? 'system:anonymous', countKey);
    if (!user) throw unauthorized();
    authorize(user, info);
    const fault = faults.takeRequestFault(user.name, info.verb, info.subresource ? `${info.resource}/${info.subresource}` : info.resource);
    if (fault) throw fault;
    if (!info.resourceRequest) return nonResource(req, res, url);
    if (REVIEW_GROUPS.has(info.apiGroup)) {
      const reply = review(info, info.verb === 'create' ? parseJson(await readBody(req)) : {}, authn, deps.rbac(), user);
      writeJson(res, reply.code, reply.body);
      return;
    }
    if (info.resource === 'namespaces' && info.apiGroup === '' && !info.subresource) return namespaces(res, info);
    const def = registry.find(info.apiGroup, info.apiVersion, info.resource);
    if (info.apiGroup && !registry.all().some((d) => d.group === info.apiGroup)) {
      // A group nobody serves falls through to the mux's NotFound handler: plain text, no Status.
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
      res.end('404 page not found\n');
      return;
    }
    if (!def || !info.namespace) throw pathNotFound();
    if (info.subresource && !def.subresources.includes(info.subresource)) throw pathNotFound();
    if (info.verb === 'watch') {
      const q = url.searchParams;
      hub.serve(req, res, def, info.namespace, {
        labelSelector: q.get('labelSelector') ?? undefined,
        fieldSelector: q.get('fieldSelector') ?? undefined,
        resourceVersion: q.get('resourceVersion') ?? undefined,
        timeoutSeconds: parseIntParam(q.get('timeoutSeconds')),
        table: tableRequest(req.headers.accept, q.get('includeObject')),
      });
      return;
    }
    const reply = await dispatch(req, res, url, info, def, received);
    if (reply) writeJson(res, reply.code, reply.body, warningHeader(reply.warnings));
  }

  function nonResource(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const p = url.pathname.replace(/\/+$/, '') || '/';
    if (req.method !== 'GET') throw methodNotAllowed('the server does not allow this method on the requested resource');
    if (p === '/healthz' || p === '/livez' || p === '/readyz') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
      res.end('ok');
      return;
    }
    if (p === '/version') {
      writeJson(res, 200, {
        major: '1',
        minor: '31',
        gitVersion: 'v1.31.0+felis-embedded',
        gitCommit: '0000000000000000000000000000000000000000',
        gitTreeState: 'clean',
        buildDate: '2024-08-13T00:00:00Z',
        goVersion: 'go1.22.5',
        compiler: 'gc',
        platform: 'linux/amd64',
      });
      return;
    }
    if (p === '/openapi/v2') {
      const doc = openapiDocument();
      // kubectl asks for protobuf only; the apiserver answers it as an octet stream.
      const pb = String(req.headers.accept ?? '').includes(OPENAPI_PROTOBUF);
      const body = pb ? doc.protobuf : doc.json;
      res.writeHead(200, { 'Content-Type': pb ? 'application/octet-stream' : 'application/json', 'Cache-Control': 'no-cache, private', 'Content-Length': String(body.length) });
      res.end(body);
      return;
    }
    if (p === '/api') {
      writeJson(res, 200, {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: req.headers.host ?? '' }],
      });
      return;
    }
    const groups = new Map<string, string[]>();
    for (const d of registry.all()) if (d.group) groups.set(d.group, [...new Set([...(groups.get(d.group) ?? []), d.version])]);
    for (const gv of Object.keys(REVIEW_RESOURCES)) groups.set(gv.split('/')[0]!, ['v1']);
    if (p === '/apis') {
      writeJson(res, 200, {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [...groups].map(([name, versions]) => ({
          name,
          versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
          preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
        })),
      });
      return;
    }
    const gv = /^\/api\/(v1)$/.exec(p) ?? /^\/apis\/([^/]+\/[^/]+)$/.exec(p);
    if (gv) {
      const groupVersion = gv[1]!;
      const defs = registry.all().filter((d) => apiVersionOf(d) === groupVersion);
      const reviews = REVIEW_RESOURCES[groupVersion] ?? [];
      if (defs.length === 0 && reviews.length === 0 && groupVersion !== 'v1') throw pathNotFound();
      const resources: Any[] = [];
      for (const r of reviews) resources.push({ name: r.name, singularName: '', namespaced: false, kind: r.kind, verbs: ['create'] });
      if (groupVersion === 'v1') resources.push({ name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace', verbs: ['get', 'list'] });
      for (const d of defs) {
        resources.push({
          name: d.resource,
          singularName: d.kind.toLowerCase(),
          namespaced: true,
          kind: d.kind,
          verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
          ...(d.shortNames?.length ? { shortNames: d.shortNames } : {}),
          ...(d.categories?.length ? { categories: d.categories } : {}),
        });
        for (const s of d.subresources) {
          resources.push({
            name: `${d.resource}/${s}`,
            singularName: '',
            namespaced: true,
            kind: s === 'log' ? 'Pod' : s === 'binding' ? 'Binding' : d.kind,
            verbs: s === 'log' ? ['get'] : s === 'binding' ? ['create'] : ['get', 'patch', 'update'],
          });
        }
      }
      writeJson(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources });
      return;
    }
    throw pathNotFound();
  }

  function namespaceObject(name: string): Any {
    return {
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    };
  }

  function namespaces(res: ServerResponse, info: RequestInfo): void {
    const store = registry.store;
    if (info.verb === 'get') {
      if (!store.namespaces.has(info.name)) throw notFound({ group: '', resource: 'namespaces' }, info.name);
      writeJson(res, 200, namespaceObject(info.name));
      return;
    }
    if (info.verb === 'list') {
      const items = [...store.namespaces].sort().map((n) => {
        const o = namespaceObject(n);
        delete o.kind;
        delete o.apiVersion;
        return o;
      });
      writeJson(res, 200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: store.resourceVersion() }, items });
      return;
    }
    throw methodNotAllowed('the server does not allow this method on the requested resource');
  }

  function writeOptions(url: URL, req: IncomingMessage): { dryRun: boolean; manager: string } {
    const dryRun = url.searchParams.getAll('dryRun');
    for (const d of dryRun) {
      if (d !== 'All') {
        throw invalid({ group: 'meta.k8s.io', kind: 'CreateOptions' }, '', [fieldErr.notSupported('dryRun', d, ['All'])]);
      }
    }
    const ua = String(req.headers['user-agent'] ?? '');
    const manager = url.searchParams.get('fieldManager') || ua.split('/')[0] || 'unknown';
    return { dryRun: dryRun.includes('All'), manager };
  }

  /** A create/update body, refused the way `transformDecodeError` words it (cluster/decode.ts). */
  async function decodeObject(req: IncomingMessage, def: ResourceDef): Promise<KObject> {
    const decoded = unrecognizedBody(await readBody(req), def.kind);
    if (decoded.message !== undefined) throw badRequest(decoded.message);
    const body = decoded.parsed as Any;
    const expected = apiVersionOf(def);
    const version = def.version;
    if (def.custom) {
      if (typeof body.kind !== 'string' || !body.kind) throw badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`);
      if (body.apiVersion !== undefined && body.apiVersion !== expected && body.apiVersion !== '') {
        throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`);
      }
      if (body.kind !== def.kind) {
        // The custom resource handler decodes anything, then validates the type meta.
        const name = isObject(body.metadata) && typeof body.metadata.name === 'string' ? body.metadata.name : '';
        throw invalid({ group: def.group, kind: body.kind }, name, [fieldErr.invalid('kind', body.kind, `must be ${def.kind}`)]);
      }
    } else {
      // Built-ins: a missing kind or apiVersion defaults to the endpoint's; another pair is not registered.
      const kind = typeof body.kind === 'string' && body.kind ? body.kind : def.kind;
      const apiVersion = typeof body.apiVersion === 'string' && body.apiVersion ? body.apiVersion : expected;
      if (kind !== def.kind || apiVersion !== expected) throw badRequest(notRegistered(kind, apiVersion, def.kind));
      const q = quantityDecodeError(body, def.kind, expected);
      if (q) throw badRequest(q);
    }
    if (body.metadata !== undefined && body.metadata !== null && !isObject(body.metadata)) {
      throw badRequest(
        `${def.kind} in version "${version}" cannot be handled as a ${def.kind}: json: cannot unmarshal ${goJsonType(body.metadata as Json)} into Go struct field ${def.kind}.metadata of type v1.ObjectMeta`,
      );
    }
    return body as KObject;
  }

  function checkNameOnUpdate(obj: KObject, info: RequestInfo): void {
    const n = obj.metadata?.name;
    if (n !== info.name) throw badRequest(`the name of the object (${n ?? ''}) does not match the name on the URL (${info.name})`);
    const ns = obj.metadata?.namespace;
    if (ns && ns !== info.namespace) {
      throw badRequest(`the namespace of the object (${ns}) does not match the namespace on the URL (${info.namespace})`);
    }
    obj.metadata.namespace = info.namespace;
  }

  async function dispatch(req: IncomingMessage, res: ServerResponse, url: URL, info: RequestInfo, def: ResourceDef, received: number): Promise<Reply | undefined> {
    const ns = info.namespace;
    const q = url.searchParams;
    const sub = info.subresource;

    if (sub === 'log') {
      if (info.verb !== 'get') throw methodNotAllowed('the server does not allow this method on the requested resource');
      await podLog(res, url, info);
      return undefined;
    }
    if (sub === 'binding') {
      if (info.verb !== 'create') throw methodNotAllowed('the server does not allow this method on the requested resource');
      return binding(req, info);
    }

    switch (info.verb) {
      case 'get': {
        const obj = registry.get(def, ns, info.name);
        const table = sub ? undefined : tableRequest(req.headers.accept, q.get('includeObject'));
        return { code: 200, body: table ? asTable(def, obj, table) : obj };
      }
      case 'list': {
        const list = registry.list(def, ns, {
          labelSelector: q.get('labelSelector') ?? undefined,
          fieldSelector: q.get('fieldSelector') ?? undefined,
          limit: parseIntParam(q.get('limit')),
          continue: q.get('continue') ?? undefined,
        });
        const table = tableRequest(req.headers.accept, q.get('includeObject'));
        return { code: 200, body: table ? asTable(def, list, table) : list };
      }
      case 'create': {
        if (sub) throw methodNotAllowed('the server does not allow this method on the requested resource');
        const opts = writeOptions(url, req);
        const body = await decodeObject(req, def);
        const { obj, warnings } = registry.create(def, ns, body, opts);
        if (def.resource === 'jobs' && !opts.dryRun) recorder.jobCreated(obj.metadata.uid!, received);
        return { code: 201, body: obj, warnings };
      }
      case 'update': {
        const opts = writeOptions(url, req);
        const body = await decodeObject(req, def);
        body.metadata ??= {};
        checkNameOnUpdate(body, info);
        const obj = registry.update(def, ns, info.name, () => body, { ...opts, subresource: sub === 'status' ? 'status' : undefined });
        return { code: 200, body: obj };
      }
      case 'patch':
        return patch(req, url, info, def);
      case 'delete':
        return del(req, url, info, def);
      case 'deletecollection': {
        if (sub) throw methodNotAllowed('the server does not allow this method on the requested resource');
        const opts = await deleteOptions(req, url);
        const list = registry.list(def, ns, {
          labelSelector: q.get('labelSelector') ?? undefined,
          fieldSelector: q.get('fieldSelector') ?? undefined,
        }) as Any;
        const items: KObject[] = [];
        for (const o of list.items as KObject[]) {
          try {
            const r = registry.delete(def, ns, o.metadata.name!, opts);
            if (isObject(r.body as Json) && (r.body as Any).metadata?.name) items.push(r.body as KObject);
            else items.push(o);
          } catch (err) {
            if ((err as ApiError).code !== 404) throw err;
          }
        }
        const warnings = def.resource === 'jobs' && !opts.propagationPolicy && opts.orphanDependents === undefined ? [JOB_DELETE_WARNING] : [];
        return { code: 200, body: { ...list, items }, warnings };
      }
      default:
        throw methodNotAllowed('the server does not allow this method on the requested resource');
    }
  }

  async function patch(req: IncomingMessage, url: URL, info: RequestInfo, def: ResourceDef): Promise<Reply> {
    const ct = mediaType(req);
    if (!def.patchTypes.includes(ct)) {
      // Built-in types: go-restful's route refuses a media type it does not consume, before the
      // patch handler (which would list the accepted ones, as it does for custom resources).
      if (!def.custom) throw new ApiError(failure(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {}));
      throw unsupportedMediaType(def.patchTypes);
    }
    const opts = writeOptions(url, req);
    const raw = await readBody(req);
    const subresource = info.subresource === 'status' ? ('status' as const) : undefined;
    const gr = groupResource(def);

    if (ct === PATCH_APPLY_YAML) {
      if (!url.searchParams.get('fieldManager')) {
        throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [fieldErr.required('fieldManager', 'is required for apply patch')]);
      }
      let applied: unknown;
      try {
        applied = loadYaml(raw.toString('utf8'));
      } catch (e) {
        throw badRequest(`error decoding YAML: ${(e as Error).message}`);
      }
      if (!isObject(applied as Json)) throw badRequest('error decoding YAML: the applied configuration must be an object');
      const obj = applied as Any;
      if (!obj.apiVersion || !obj.kind) throw badRequest('apiVersion and kind must be set in the applied configuration');
      obj.metadata ??= {};
      checkNameOnUpdate(obj as KObject, info);
      if (!registry.store.has(def.resource, info.namespace, info.name) && !subresource) {
        const { obj: created } = registry.create(def, info.namespace, obj as KObject, opts);
        return { code: 201, body: created };
      }
      const updated = registry.update(def, info.namespace, info.name, (cur) => applyMerge(cur as unknown as Json, obj) as unknown as KObject, {
        ...opts,
        subresource,
        operation: 'Apply',
      });
      return { code: 200, body: updated };
    }

    const body = parseJson(raw);
    if (ct === PATCH_JSON && !Array.isArray(body)) {
      throw badRequest(`json: cannot unmarshal ${goJsonType(body)} into Go value of type jsonpatch.Patch`);
    }
    if ((ct === PATCH_MERGE || ct === PATCH_STRATEGIC) && !isObject(body)) {
      const text = raw.toString('utf8');
      throw new ApiError(
        failure(
          422,
          'Invalid',
          ` "" is invalid: patch: Invalid value: ${JSON.stringify(text)}: couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonType(
            body,
          )} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
          {
            causes: [
              {
                reason: 'FieldValueInvalid',
                message: `Invalid value: ${JSON.stringify(text)}: couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonType(body)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
                field: 'patch',
              },
            ],
          },
        ),
      );
    }
    const updated = registry.update(
      def,
      info.namespace,
      info.name,
      (cur) => {
        let next: Json | undefined;
        try {
          if (ct === PATCH_JSON) next = jsonPatch(cur as unknown as Json, body as Json[]);
          else if (ct === PATCH_MERGE) next = mergePatch(cur as unknown as Json, body);
          else next = strategicMergePatch(cur as unknown as Json, body);
        } catch (e) {
          if (e instanceof JsonPatchError) throw genericServerResponse(422);
          if (e instanceof StrategicPatchError) throw badRequest(e.message);
          throw e;
        }
        if (!isObject(next ?? null)) throw badRequest(`the patched object is not an object (${grString(gr)} "${info.name}")`);
        const obj = next as unknown as KObject;
        if (!isObject(obj.metadata as unknown as Json)) obj.metadata = {};
        checkNameOnUpdate(obj, info);
        return obj;
      },
      { ...opts, subresource },
    );
    return { code: 200, body: updated };
  }

  const JOB_DELETE_WARNING = 'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning';

  async function deleteOptions(req: IncomingMessage, url: URL) {
    const q = url.searchParams;
    const opts: {
      propagationPolicy?: string;
      orphanDependents?: boolean;
      gracePeriodSeconds?: number;
      preconditions?: { uid?: string; resourceVersion?: string };
      dryRun?: boolean;
      manager?: string;
    } = {};
    const pp = q.get('propagationPolicy');
    if (pp) opts.propagationPolicy = pp;
    const od = parseBoolParam(q.get('orphanDependents'));
    if (od !== undefined) opts.orphanDependents = od;
    const gp = parseIntParam(q.get('gracePeriodSeconds'));
    if (gp !== undefined) opts.gracePeriodSeconds = gp;
    const w = writeOptions(url, req);
    opts.dryRun = w.dryRun;
    opts.manager = w.manager;
    const raw = await readBody(req);
    if (raw.length > 0) {
      const body = parseJson(raw) as Any;
      if (isObject(body)) {
        if (typeof body.propagationPolicy === 'string') opts.propagationPolicy = body.propagationPolicy;
        if (typeof body.orphanDependents === 'boolean') opts.orphanDependents = body.orphanDependents;
        if (typeof body.gracePeriodSeconds === 'number') opts.gracePeriodSeconds = body.gracePeriodSeconds;
        if (isObject(body.preconditions)) opts.preconditions = body.preconditions;
        if (Array.isArray(body.dryRun) && body.dryRun.includes('All')) opts.dryRun = true;
      }
    }
    if (opts.propagationPolicy && !['Foreground', 'Background', 'Orphan'].includes(opts.propagationPolicy)) {
      throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [fieldErr.notSupported('propagationPolicy', opts.propagationPolicy, ['Foreground', 'Background', 'Orphan', 'nil'])]);
    }
    if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0) opts.gracePeriodSeconds = 1;
    return opts;
  }

  async function del(req: IncomingMessage, url: URL, info: RequestInfo, def: ResourceDef): Promise<Reply> {
    if (info.subresource) throw methodNotAllowed('the server does not allow this method on the requested resource');
    const opts = await deleteOptions(req, url);
    const result = registry.delete(def, info.namespace, info.name, opts);
    const warnings = def.resource === 'jobs' && !opts.propagationPolicy && opts.orphanDependents === undefined ? [JOB_DELETE_WARNING] : [];
    const code = !result.deleted && opts.orphanDependents === false ? 202 : 200;
    return { code, body: result.body, warnings };
  }

  async function binding(req: IncomingMessage, info: RequestInfo): Promise<Reply> {
    const body = parseJson(await readBody(req)) as Any;
    const node = body?.target?.name;
    if (!node) {
      throw invalid({ group: '', kind: 'Binding' }, info.name, [fieldErr.required('target.name')]);
    }
    const store = registry.store;
    const pod = store.get('pods', info.namespace, info.name);
    if (!pod) throw notFound({ group: '', resource: 'pods' }, info.name);
    if (pod.metadata.deletionTimestamp) {
      throw new ApiError(
        failure(409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${info.name}": pod ${info.name} is being deleted, cannot be assigned to a host`, {
          name: info.name,
          kind: 'pods/binding',
        }),
      );
    }
    if (pod.spec?.nodeName) {
      throw new ApiError(
        failure(409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${info.name}": pod ${info.name} is already assigned to node "${pod.spec.nodeName}"`, {
          name: info.name,
          kind: 'pods/binding',
        }),
      );
    }
    pod.spec.nodeName = node;
    const conditions = (pod.status.conditions ??= []).filter((c: Any) => c.type !== 'PodScheduled');
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339() });
    pod.status.conditions = conditions;
    store.update('pods', pod);
    return { code: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
  }

  /** `pods/log`: apiserver checks (LogLocation), then the kubelet's `containerLogs`. */
  async function podLog(res: ServerResponse, url: URL, info: RequestInfo): Promise<void> {
    const q = url.searchParams;
    const tailLines = parseIntParam(q.get('tailLines'));
    const limitBytes = parseIntParam(q.get('limitBytes'));
    const sinceSeconds = parseIntParam(q.get('sinceSeconds'));
    const follow = parseBoolParam(q.get('follow'));
    const previous = parseBoolParam(q.get('previous'));
    const timestamps = parseBoolParam(q.get('timestamps'));
    parseBoolParam(q.get('insecureSkipTLSVerifyBackend'));
    const sinceTime = q.get('sinceTime') || undefined;
    if (sinceTime !== undefined && Number.isNaN(Date.parse(sinceTime))) {
      throw badRequest(`parsing time ${JSON.stringify(sinceTime)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(sinceTime)} as "2006"`);
    }
    // ValidatePodLogOptions.
    const errs = [];
    if (tailLines !== undefined && tailLines < 0) errs.push(fieldErr.invalid('tailLines', tailLines, 'must be greater than or equal to 0'));
    if (limitBytes !== undefined && limitBytes < 1) errs.push(fieldErr.invalid('limitBytes', limitBytes, 'must be greater than 0'));
    if (sinceSeconds !== undefined && sinceTime !== undefined) {
      // field.NewPath("") prints as "[]" (a root path with an empty name).
      errs.push(fieldErr.forbidden('[]', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
    } else if (sinceSeconds !== undefined && sinceSeconds < 1) {
      errs.push(fieldErr.invalid('sinceSeconds', sinceSeconds, 'must be greater than 0'));
    }
    if (errs.length) throw invalid({ group: '', kind: 'PodLogOptions' }, info.name, errs);

    const pod = registry.get(registry.byResource('pods'), info.namespace, info.name);
    const containers: string[] = (pod.spec?.containers ?? []).map((c: Any) => c.name);
    const inits: string[] = (pod.spec?.initContainers ?? []).map((c: Any) => c.name);
    const ephemeral: string[] = (pod.spec?.ephemeralContainers ?? []).map((c: Any) => c.name);
    let container = q.get('container') ?? '';
    if (!container) {
      if (containers.length === 1) container = containers[0]!;
      else {
        let msg = `a container name must be specified for pod ${info.name}, choose one of: [${containers.join(' ')}]`;
        if (inits.length) msg += ` or one of the init containers: [${inits.join(' ')}]`;
        throw badRequest(msg);
      }
    } else if (!containers.includes(container) && !inits.includes(container) && !ephemeral.includes(container)) {
      throw badRequest(`container ${container} is not valid for pod ${info.name}`);
    }
    if (!pod.spec?.nodeName) {
      // LogLocation returns no location: StreamObject writes a bare 204.
      res.writeHead(204, { 'Audit-Id': randomUUID(), 'Cache-Control': 'no-cache, private' });
      res.end();
      return;
    }
    const query: LogQuery = { tailLines, limitBytes, sinceSeconds, sinceTime, follow, previous, timestamps };
    const r = kubelet.containerLogs(info.namespace, info.name, container, query);
    if (!r.ok) {
      if (r.code === 400) throw badRequest(r.message);
      if (r.code === 404) {
        throw new ApiError(failure(404, 'NotFound', 'the server could not find the requested resource', {}));
      }
      throw internalError(r.message);
    }
    res.writeHead(200, {
      'Audit-Id': randomUUID(),
      'Cache-Control': 'no-cache, private',
      'Content-Type': 'text/plain',
      'Transfer-Encoding': 'chunked',
    });
    res.flushHeaders();
    const stream = r.stream;
    const onClose = () => stream.destroy();
    res.on('close', onClose);
    await new Promise<void>((resolve) => {
      stream.on('data', (chunk: Buffer) => {
        // One write per chunk: node flushes each on a chunked response, as the apiserver flushes per write.
        res.write(chunk);
      });
      stream.on('end', () => {
        res.end();
        resolve();
      });
      stream.on('error', () => {
        res.destroy();
        resolve();
      });
      stream.on('close', () => resolve());
    });
    res.off('close', onClose);
  }

  const hub = new WatchHub(registry);
  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    handle(req, res).catch((err) => writeError(res, err));
  });
  server.keepAliveTimeout = 5000;
  server.on('close', () => hub.close());
  return server;
}
