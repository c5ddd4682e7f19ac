/**
 * `GET /openapi/v2`: the OpenAPI document kubectl reads for client-side validation (`kubectl apply`
 * and `create` refuse an unknown or mistyped field before sending it) and `kubectl explain`.
 *
 * The definitions are the v1.20 apiserver's own for the built-in kinds served here (Job, Pod,
 * PersistentVolumeClaim, Namespace, their lists) and everything they refer to, kept in
 * `testdata/openapi-v2-v1.20.json` (made by `test/cluster-tier/openapi-snapshot.ts` from the
 * cluster tier's apiserver with `trimDefinitions`). Paths are left out: kubectl reads only the
 * definitions. The custom resource is not published: its schema preserves unknown fields at the
 * root, so kubectl would not validate it anyway.
 *
 * kubectl asks for the protobuf form (gnostic's `openapi.v2.Document`) and accepts nothing else, so
 * that is encoded here with a small protobuf writer; JSON is served to anyone who asks for it.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Any = any;

export const OPENAPI_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/** The definitions reachable from `roots` through `$ref`s (the part of a document a set of kinds needs). */
export function trimDefinitions(definitions: Record<string, Any>, roots: string[]): Record<string, Any> {
  const seen = new Set<string>();
  const walk = (o: Any): void => {
    if (Array.isArray(o)) for (const v of o) walk(v);
    else if (o && typeof o === 'object') {
      const ref = o.$ref;
      if (typeof ref === 'string') {
        const name = ref.split('/').pop()!;
        if (!seen.has(name) && definitions[name]) {
          seen.add(name);
          walk(definitions[name]);
        }
      }
      for (const v of Object.values(o)) walk(v);
    }
  };
  for (const r of roots) {
    if (!definitions[r]) throw new Error(`no definition ${r}`);
    seen.add(r);
    walk(definitions[r]);
  }
  return Object.fromEntries([...seen].sort().map((k) => [k, definitions[k]]));
}

export const OPENAPI_ROOTS = [
  'io.k8s.api.batch.v1.Job',
  'io.k8s.api.batch.v1.JobList',
  'io.k8s.api.core.v1.Pod',
  'io.k8s.api.core.v1.PodList',
  'io.k8s.api.core.v1.PersistentVolumeClaim',
  'io.k8s.api.core.v1.PersistentVolumeClaimList',
  'io.k8s.api.core.v1.Namespace',
  'io.k8s.api.core.v1.NamespaceList',
];

let cached: { json: Buffer; protobuf: Buffer } | undefined;

/** The document, as JSON and as protobuf (built once per process). */
export function openapiDocument(): { json: Buffer; protobuf: Buffer } {
  if (cached) return cached;
  const definitions = JSON.parse(readFileSync(join(import.meta.dirname, 'testdata', 'openapi-v2-v1.20.json'), 'utf8'));
  const doc = { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.20.2' }, paths: {}, definitions };
  cached = { json: Buffer.from(JSON.stringify(doc)), protobuf: encodeDocument(doc) };
  return cached;
}

// ---- protobuf (proto3 wire format): varints and length-delimited fields are all that is needed.

class Writer {
  private readonly parts: Buffer[] = [];

  private varint(n: number): void {
    const b: number[] = [];
    let v = n;
    while (v > 0x7f) {
      b.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    b.push(v);
    this.parts.push(Buffer.from(b));
  }

  private key(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  string(field: number, s: string | undefined): void {
    if (s === undefined || s === '') return;
    const b = Buffer.from(s, 'utf8');
    this.key(field, 2);
    this.varint(b.length);
    this.parts.push(b);
  }

  bool(field: number, v: boolean | undefined): void {
    if (!v) return;
    this.key(field, 0);
    this.varint(1);
  }

  setBool(field: number, v: boolean): void {
    this.key(field, 0);
    this.varint(v ? 1 : 0);
  }

  int(field: number, v: number | undefined): void {
    if (v === undefined || v === 0) return;
    this.key(field, 0);
    this.varint(v);
  }

  double(field: number, v: number | undefined): void {
    if (v === undefined || v === 0) return;
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v);
    this.key(field, 1);
    this.parts.push(b);
  }

  message(field: number, build: (w: Writer) => void): void {
    const w = new Writer();
    build(w);
    const b = w.bytes();
    this.key(field, 2);
    this.varint(b.length);
    this.parts.push(b);
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** A JSON value as gnostic's `Any`: its YAML text (field 2). */
function anyYaml(w: Writer, field: number, v: unknown): void {
  w.message(field, (a) => a.string(2, yamlOf(v)));
}

/** YAML the Go side parses back to the same value: JSON is YAML, and a scalar or flow form is fine. */
function yamlOf(v: unknown): string {
  return `${JSON.stringify(v)}\n`;
}

function vendorExtensions(w: Writer, field: number, o: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(o)) {
    if (!k.startsWith('x-')) continue;
    w.message(field, (n) => {
      n.string(1, k);
      anyYaml(n, 2, v);
    });
  }
}

/** gnostic `Schema` (field numbers of openapi.v2.Schema). */
function schema(w: Writer, s: Any): void {
  w.string(1, s.$ref);
  w.string(2, s.format);
  w.string(3, s.title);
  w.string(4, s.description);
  if (s.default !== undefined) anyYaml(w, 5, s.default);
  w.double(6, s.multipleOf);
  w.double(7, s.maximum);
  w.bool(8, s.exclusiveMaximum);
  w.double(9, s.minimum);
  w.bool(10, s.exclusiveMinimum);
  w.int(11, s.maxLength);
  w.int(12, s.minLength);
  w.string(13, s.pattern);
  w.int(14, s.maxItems);
  w.int(15, s.minItems);
  w.bool(16, s.uniqueItems);
  w.int(17, s.maxProperties);
  w.int(18, s.minProperties);
  for (const r of (s.required ?? []) as string[]) w.string(19, r);
  for (const e of (s.enum ?? []) as unknown[]) anyYaml(w, 20, e);
  if (s.additionalProperties !== undefined) {
    w.message(21, (a) => {
      // oneof: schema = 1, or boolean = 2 (written even when false: a set oneof member).
      if (typeof s.additionalProperties === 'boolean') a.setBool(2, s.additionalProperties);
      else a.message(1, (x) => schema(x, s.additionalProperties));
    });
  }
  if (s.type !== undefined)
    w.message(22, (t) => {
      for (const v of Array.isArray(s.type) ? s.type : [s.type]) t.string(1, v);
    });
  if (s.items !== undefined)
    w.message(23, (it) => {
      for (const v of Array.isArray(s.items) ? s.items : [s.items]) it.message(1, (x) => schema(x, v));
    });
  for (const a of (s.allOf ?? []) as Any[]) w.message(24, (x) => schema(x, a));
  if (s.properties !== undefined)
    w.message(25, (p) => {
      for (const [name, v] of Object.entries(s.properties as Record<string, Any>)) {
        p.message(1, (n) => {
          n.string(1, name);
          n.message(2, (x) => schema(x, v));
        });
      }
    });
  w.string(26, s.discriminator);
  w.bool(27, s.readOnly);
  if (s.example !== undefined) anyYaml(w, 30, s.example);
  vendorExtensions(w, 31, s);
}

/** gnostic `Document`: swagger, info, (empty) paths, definitions. */
export function encodeDocument(doc: Any): Buffer {
  const w = new Writer();
  w.string(1, doc.swagger);
  w.message(2, (i) => {
    i.string(1, doc.info?.title);
    i.string(2, doc.info?.version);
  });
  w.message(8, () => {});
  w.message(9, (d) => {
    for (const [name, s] of Object.entries(doc.definitions as Record<string, Any>)) {
      d.message(1, (n) => {
        n.string(1, name);
        n.message(2, (x) => schema(x, s));
      });
    }
  });
  return w.bytes();
}
