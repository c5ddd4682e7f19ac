/**
 * Plain readers for environment variables: each says what it accepts and its default, and throws a
 * message on a bad value. `readVariables` names the first bad variable. Plain functions rather than a
 * schema library because configuration is read before a woken function can answer its readiness
 * probe, and a schema library would be most of what loads for it.
 * @module
 */

/** Reads one variable's raw value (undefined when unset); throws a message on a bad value. */
export type Reader<T> = (raw: string | undefined) => T;

/** Text that must not be empty when set; `fallback` when unset. */
export const text =
  (fallback: string): Reader<string> =>
  (raw) => {
    if (raw === undefined) return fallback;
    if (raw === '') throw new Error('must not be empty');
    return raw;
  };

/** Text; unset and empty both mean `fallback`. */
export const textOr =
  (fallback: string): Reader<string> =>
  (raw) =>
    raw || fallback;

/** Any text, empty included; `fallback` when unset. */
export const anyText =
  (fallback: string): Reader<string> =>
  (raw) =>
    raw ?? fallback;

/** Unset and empty both mean "not configured". */
export const optional: Reader<string | undefined> = (raw) => raw || undefined;

/** A whole number in [min, max] as Number() reads it (surrounding blanks allowed); `fallback` when unset or empty. */
export const wholeNumber =
  (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): Reader<number> =>
  (raw) => {
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new Error(`expected a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    }
    return n;
  };

/** A whole number ≥ 0; unlike `wholeNumber`, an empty value is refused rather than defaulted. */
export const count =
  (fallback: number): Reader<number> =>
  (raw) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`expected a whole number of at least 0, got ${JSON.stringify(raw)}`);
    return n;
  };

/** A number of seconds in [min, max], fractions allowed; `fallback` when unset or empty. */
export const seconds =
  (fallback: number, min: number, max: number): Reader<number> =>
  (raw) => {
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`expected seconds from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    return n;
  };

/** Text that `ok` accepts (described as `what` in the error); `fallback` when unset, refused when empty. */
export const accepted =
  (fallback: string, ok: (raw: string) => boolean, what: string): Reader<string> =>
  (raw) => {
    if (raw === undefined) return fallback;
    if (raw === '' || !ok(raw)) throw new Error(`expected ${what}, got ${JSON.stringify(raw)}`);
    return raw;
  };

/** One of a closed set of words; `fallback` when unset or empty. */
export const oneOf =
  <T extends string>(choices: readonly T[], fallback: T): Reader<T> =>
  (raw) => {
    if (raw === undefined || raw === '') return fallback;
    if (!(choices as readonly string[]).includes(raw)) throw new Error(`expected one of ${choices.join(', ')}, got ${JSON.stringify(raw)}`);
    return raw as T;
  };

export type Values<V extends Record<string, Reader<unknown>>> = { [K in keyof V]: ReturnType<V[K]> };

/** Reads every variable in order; the first bad one stops the start, named in the message. */
export function readVariables<V extends Record<string, Reader<unknown>>>(variables: V, env: NodeJS.ProcessEnv): Values<V> {
  const out: Record<string, unknown> = {};
  for (const [name, read] of Object.entries(variables)) {
    try {
      out[name] = read(env[name]);
    } catch (err) {
      throw new Error(`invalid configuration ${name}: ${(err as Error).message}`);
    }
  }
  return out as Values<V>;
}
