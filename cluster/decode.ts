/**
 * How kube-apiserver words a body it cannot decode (`transformDecodeError` in
 * `apiserver/pkg/endpoints/handlers/rest.go`): Go's `encoding/json` syntax errors, the summary of
 * the body it appends, the "no kind is registered" refusal of a wrong kind or version, and the
 * resource quantities a built-in object's decoder refuses. Compared against a real v1.20 server by
 * the cluster tier (`test/emulation-parity.cluster.test.ts`).
 *
 * @module
 */

/** Go's `quoteChar`: the offending byte in single quotes. */
function quoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return `'"'`;
  const s = JSON.stringify(c).slice(1, -1);
  // strconv.Quote writes control bytes as \x.. where JSON writes \u00..
  return `'${s.replace(/\\u00([0-9a-f]{2})/g, '\\x$1')}'`;
}

const WS = new Set([' ', '\t', '\r', '\n']);

/**
 * The error Go's `json.Unmarshal` gives for a syntactically invalid document (its scanner's
 * messages), or undefined when `text` is valid JSON.
 */
export function goJsonSyntaxError(text: string): string | undefined {
  let i = 0;
  const EOF = 'unexpected end of JSON input';
  const bad = (ctx: string) => `invalid character ${quoteChar(text[i]!)} ${ctx}`;
  class Fail extends Error {}
  const fail = (msg: string): never => {
    throw new Fail(msg);
  };
  const ws = () => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (i >= text.length) fail(EOF);
      if (text[i] !== word[k]) fail(bad(`in literal ${word} (expecting ${quoteChar(word[k]!)})`));
    }
    i++;
  };
  const digits = () => {
    while (i < text.length && text[i]! >= '0' && text[i]! <= '9') i++;
  };
  const number = () => {
    if (text[i] === '-') {
      i++;
      if (i >= text.length) fail(EOF);
      if (!(text[i]! >= '0' && text[i]! <= '9')) fail(bad('in numeric literal'));
    }
    if (text[i] === '0') i++;
    else digits();
    if (text[i] === '.') {
      i++;
      if (i >= text.length) fail(EOF);
      if (!(text[i]! >= '0' && text[i]! <= '9')) fail(bad('after decimal point in numeric literal'));
      digits();
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (i >= text.length) fail(EOF);
      if (!(text[i]! >= '0' && text[i]! <= '9')) fail(bad('in exponent of numeric literal'));
      digits();
    }
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail(EOF);
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        i++;
        if (i >= text.length) fail(EOF);
        const e = text[i]!;
        if (e === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            if (i >= text.length) fail(EOF);
            if (!/[0-9a-fA-F]/.test(text[i]!)) fail(bad('in \\u hexadecimal character escape'));
          }
        } else if (!'"\\/bfnrt'.includes(e)) fail(bad('in string escape code'));
        i++;
        continue;
      }
      if (c < ' ') fail(bad('in string literal'));
      i++;
    }
  };
  const value = (ctx: string) => {
    ws();
    if (i >= text.length) fail(EOF);
    const c = text[i]!;
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return string();
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    fail(bad(ctx));
  };
  const object = () => {
    i++;
    ws();
    if (i >= text.length) fail(EOF);
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (i >= text.length) fail(EOF);
      if (text[i] !== '"') fail(bad('looking for beginning of object key string'));
      string();
      ws();
      if (i >= text.length) fail(EOF);
      if (text[i] !== ':') fail(bad('after object key'));
      i++;
      value('looking for beginning of value');
      ws();
      if (i >= text.length) fail(EOF);
      if (text[i] === '}') {
        i++;
        return;
      }
      if (text[i] !== ',') fail(bad('after object key:value pair'));
      i++;
    }
  };
  const array = () => {
    i++;
    ws();
    if (i >= text.length) fail(EOF);
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      value('looking for beginning of value');
      ws();
      if (i >= text.length) fail(EOF);
      if (text[i] === ']') {
        i++;
        return;
      }
      if (text[i] !== ',') fail(bad('after array element'));
      i++;
    }
  };
  try {
    value('looking for beginning of value');
    ws();
    if (i < text.length) fail(bad('after top-level value'));
    return undefined;
  } catch (e) {
    if (e instanceof Fail) return e.message;
    throw e;
  }
}

/** `summarizeData(body, 30)`: an object's text, anything else in hex; `<empty>` for nothing. */
export function summarizeBody(body: Buffer): string {
  if (body.length === 0) return '<empty>';
  const max = 30;
  if (body[0] === 0x7b) return body.length > max ? `${body.subarray(0, max).toString('latin1')} ...` : body.toString('latin1');
  return body.length > max ? `${body.subarray(0, max).toString('hex')} ...` : body.toString('hex');
}

/** The Go name of a JSON value's type, as `json: cannot unmarshal <type> into …` says it. */
export function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}

const TYPE_META_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/**
 * The message of a create/update body that is not a JSON object (invalid JSON, or valid JSON of
 * another type), or undefined for an object.
 */
export function unrecognizedBody(body: Buffer, kind: string): { message: string; parsed?: undefined } | { parsed: Record<string, unknown>; message?: undefined } {
  const text = body.toString('utf8');
  const prefix = `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error:`;
  const syntax = goJsonSyntaxError(text);
  if (syntax !== undefined) return { message: `${prefix} ${syntax} (${summarizeBody(body)})` };
  const v = JSON.parse(text) as unknown;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    return { message: `${prefix} json: cannot unmarshal ${goJsonType(v)} into Go value of type ${TYPE_META_STRUCT} (${summarizeBody(body)})` };
  }
  return { parsed: v as Record<string, unknown> };
}

/** The scheme a built-in type is registered in (the location is part of the message). */
const LEGACY_SCHEME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30';

/** A built-in body naming another kind or version: nothing is registered under that pair. */
export function notRegistered(bodyKind: string, bodyApiVersion: string, kind: string): string {
  const version = bodyApiVersion.includes('/') ? bodyApiVersion.slice(bodyApiVersion.indexOf('/') + 1) : bodyApiVersion;
  return `${bodyKind} in version "${version}" cannot be handled as a ${kind}: no kind "${bodyKind}" is registered for version "${bodyApiVersion}" in scheme "${LEGACY_SCHEME}"`;
}

/** `resource.ParseQuantity` as far as the decoder enforces it. */
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
export const QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

function badQuantityIn(spec: unknown): boolean {
  const s = spec as { containers?: unknown; initContainers?: unknown } | undefined;
  if (!s || typeof s !== 'object') return false;
  for (const list of [s.containers, s.initContainers]) {
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      const r = (c as { resources?: Record<string, unknown> } | undefined)?.resources;
      if (!r || typeof r !== 'object') continue;
      for (const part of ['requests', 'limits']) {
        const m = r[part];
        if (!m || typeof m !== 'object') continue;
        for (const q of Object.values(m as Record<string, unknown>)) {
          if (typeof q === 'number') continue;
          if (typeof q !== 'string' || !QUANTITY.test(q)) return true;
        }
      }
    }
  }
  return false;
}

/**
 * A resource quantity the decoder cannot parse, in a Pod's spec or a Job's template: the decode
 * error's message (current wording), or undefined.
 */
export function quantityDecodeError(obj: Record<string, unknown>, kind: string, apiVersion: string): string | undefined {
  const spec = obj.spec as { template?: { spec?: unknown } } | undefined;
  const podSpec = kind === 'Pod' ? spec : spec?.template?.spec;
  if (!badQuantityIn(podSpec)) return undefined;
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  return `${kind} in version "${version}" cannot be handled as a ${kind}: ${QUANTITY_ERROR}`;
}
