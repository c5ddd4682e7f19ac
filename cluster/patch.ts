/**
 * Patch application: JSON merge patch (RFC 7386), JSON patch (RFC 6902, as evanphx/json-patch
 * behaves inside kube-apiserver) and a strategic-merge patch that knows the merge keys of the
 * built-in fields this project touches.
 *
 * @module
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => Object.hasOwn(bo, k) && deepEqual(ao[k], bo[k]));
}

/** RFC 7386: objects merge recursively, `null` deletes, anything else replaces. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** A failed JSON-patch operation; the server answers 422 with a generic message. */
export class JsonPatchError extends Error {}

function decodePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new JsonPatchError(`invalid JSON pointer: ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(key: string, length: number, forAdd: boolean): number {
  if (forAdd && key === '-') return length;
  if (!/^(0|[1-9]\d*)$/.test(key)) throw new JsonPatchError(`invalid array index: ${key}`);
  const i = Number(key);
  if (i > length || (!forAdd && i >= length)) throw new JsonPatchError(`index out of bounds: ${key}`);
  return i;
}

function container(doc: Json, parts: string[]): Json {
  let cur: Json = doc;
  for (const p of parts) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(p, cur.length, false)]!;
    else if (isObject(cur) && Object.hasOwn(cur, p)) cur = cur[p]!;
    else throw new JsonPatchError(`doc is missing path: ${p}`);
  }
  return cur;
}

function getAt(doc: Json, path: string): Json {
  return container(doc, decodePointer(path));
}

function addAt(doc: Json, path: string, value: Json): Json {
  const parts = decodePointer(path);
  if (parts.length === 0) return clone(value);
  const key = parts.pop()!;
  const parent = container(doc, parts);
  if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, true), 0, clone(value));
  else if (isObject(parent)) parent[key] = clone(value);
  else throw new JsonPatchError(`add operation does not apply: doc is missing path: ${path}`);
  return doc;
}

function removeAt(doc: Json, path: string): Json {
  const parts = decodePointer(path);
  const key = parts.pop();
  if (key === undefined) throw new JsonPatchError('cannot remove the document root');
  const parent = container(doc, parts);
  if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, false), 1);
  else if (isObject(parent) && Object.hasOwn(parent, key)) delete parent[key];
  else throw new JsonPatchError(`Unable to remove nonexistent key: ${key}: missing value`);
  return doc;
}

function replaceAt(doc: Json, path: string, value: Json): Json {
  const parts = decodePointer(path);
  const key = parts.pop();
  if (key === undefined) return clone(value);
  const parent = container(doc, parts);
  if (Array.isArray(parent)) parent[arrayIndex(key, parent.length, false)] = clone(value);
  else if (isObject(parent) && Object.hasOwn(parent, key)) parent[key] = clone(value);
  else throw new JsonPatchError(`replace operation does not apply: doc is missing key: ${path}`);
  return doc;
}

/** Applies an RFC 6902 patch to a copy of `doc`. Throws `JsonPatchError` on a failed op or test. */
export function jsonPatch(doc: Json, ops: Json[]): Json {
  let out = clone(doc);
  for (const raw of ops) {
    if (!isObject(raw)) throw new JsonPatchError('invalid operation');
    const op = raw.op;
    const path = raw.path;
    if (typeof path !== 'string') throw new JsonPatchError(`operation missing path`);
    switch (op) {
      case 'add':
        if (!('value' in raw)) throw new JsonPatchError('add operation missing value');
        out = addAt(out, path, raw.value!);
        break;
      case 'remove':
        out = removeAt(out, path);
        break;
      case 'replace':
        if (!('value' in raw)) throw new JsonPatchError('replace operation missing value');
        out = replaceAt(out, path, raw.value!);
        break;
      case 'move': {
        if (typeof raw.from !== 'string') throw new JsonPatchError('move operation missing from');
        const v = getAt(out, raw.from);
        out = removeAt(out, raw.from);
        out = addAt(out, path, v);
        break;
      }
      case 'copy': {
        if (typeof raw.from !== 'string') throw new JsonPatchError('copy operation missing from');
        out = addAt(out, path, getAt(out, raw.from));
        break;
      }
      case 'test': {
        let cur: Json | undefined;
        try {
          cur = getAt(out, path);
        } catch {
          cur = undefined;
        }
        if (!deepEqual(cur, raw.value ?? null)) throw new JsonPatchError(`testing value ${path} failed: test failed`);
        break;
      }
      default:
        throw new JsonPatchError(`Unexpected kind: ${String(op)}`);
    }
  }
  return out;
}

// ---- strategic merge patch ----

/** Merge keys of the list fields we know (`patchMergeKey` in the Go types), by field name. */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  conditions: 'type',
  ownerReferences: 'uid',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  resourceClaims: 'name',
};
/** Primitive lists with `patchStrategy:"merge"` (union). */
const MERGE_PRIMITIVE = new Set(['finalizers']);

/** A strategic-merge-patch format error (400). */
export class StrategicPatchError extends Error {}

export function strategicMergePatch(original: Json | undefined, patch: Json): Json | undefined {
  if (!isObject(patch)) return clone(patch);
  const directive = patch.$patch;
  if (directive === 'replace') {
    const rest = clone(patch);
    delete rest.$patch;
    return rest;
  }
  if (directive === 'delete') return undefined;
  if (directive !== undefined && directive !== 'merge') {
    throw new StrategicPatchError(`Unable to find api field in struct for the patch directive ${String(directive)}`);
  }
  const out: JsonObject = isObject(original) ? clone(original) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const drop = Array.isArray(v) ? v : [];
      const cur = out[field];
      if (Array.isArray(cur)) out[field] = cur.filter((x) => !drop.some((d) => deepEqual(d, x)));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    if (Array.isArray(v)) {
      const cur = Array.isArray(out[k]) ? (out[k] as Json[]) : [];
      const key = MERGE_KEYS[k];
      if (key && v.every((x) => isObject(x))) {
        out[k] = mergeKeyedList(cur, v as JsonObject[], key);
      } else if (MERGE_PRIMITIVE.has(k)) {
        const merged = [...cur];
        for (const x of v) if (!merged.some((y) => deepEqual(x, y))) merged.push(x);
        out[k] = merged;
      } else {
        out[k] = clone(v);
      }
      continue;
    }
    if (isObject(v)) {
      const merged = strategicMergePatch(out[k], v);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
      continue;
    }
    out[k] = v;
  }
  return out;
}

function mergeKeyedList(cur: Json[], patch: JsonObject[], key: string): Json[] {
  if (patch.length === 1 && patch[0]!.$patch === 'replace') return [];
  const out = cur.map((x) => clone(x));
  for (const item of patch) {
    const id = item[key];
    const idx = out.findIndex((x) => isObject(x) && deepEqual(x[key], id));
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMergePatch(out[idx], item)!;
    else {
      const fresh = clone(item);
      delete fresh.$patch;
      out.push(fresh);
    }
  }
  return out;
}

/**
 * A simplified server-side apply: the applied configuration is merged into the live object (maps
 * recursively, keyed lists by merge key, other lists replaced). Field ownership is not tracked.
 */
export function applyMerge(live: Json | undefined, applied: Json): Json {
  if (!isObject(applied)) return clone(applied);
  const out: JsonObject = isObject(live) ? clone(live) : {};
  for (const [k, v] of Object.entries(applied)) {
    if (v === null) continue;
    if (Array.isArray(v)) {
      const key = MERGE_KEYS[k];
      const cur = Array.isArray(out[k]) ? (out[k] as Json[]) : [];
      out[k] = key && v.every((x) => isObject(x)) ? mergeKeyedList(cur, v as JsonObject[], key) : clone(v);
    } else if (isObject(v)) {
      out[k] = applyMerge(out[k], v);
    } else {
      out[k] = v;
    }
  }
  return out;
}
