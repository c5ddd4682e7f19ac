/**
 * The one name rule of the world volume, for the functions and the Job program alike (pure).
 *
 * Two parts, because existing files and new ones are judged differently:
 * - the limits, which no file on the volume can break: no NUL byte, a name part (a path's
 *   component) at most 255 bytes of UTF-8 (Linux NAME_MAX), a path at most 4096 bytes (PATH_MAX).
 *   Every path a caller gives is held to them, whatever it does with it;
 * - the characters of a name a caller creates (an upload's, a copy's or a move's destination, a
 *   new folder, a new archive's or a pulled file's name): valid UTF-8 (no lone surrogate), no C0 or
 *   C1 control character (U+0000–U+001F, U+007F–U+009F), and no bidirectional control (U+202A–
 *   U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), which makes a name read otherwise than it is
 *   (`gpj.exe` shown as `exe.jpg`). A path that only addresses a file is not held to them: players
 *   and plugins make such names, and they must stay readable, movable and deletable.
 *
 * Each function answers what is wrong, in words that follow the name (`… holds a NUL byte`), or
 * undefined; the caller says whose name it is and with which code.
 * @module
 */

/** The longest name part, in bytes (Linux NAME_MAX). */
export const NAME_MAX = 255;
/** The longest path, in bytes (Linux PATH_MAX). */
export const PATH_MAX = 4096;

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const codePoint = (ch: string): string => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * `name` as a message may show it: every control and bidirectional control character, and any
 * lone surrogate, written as `<U+202E>`, so the message itself reads as what it names.
 */
export function shownName(name: string): string {
  return name.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\p{Surrogate}/gu, (ch) => `<${codePoint(ch)}>`);
}

/** What puts `path` past the limits (a NUL, a part over 255 bytes, over 4096 bytes in all); undefined when nothing. */
export function pathLimitFault(path: string): string | undefined {
  if (path.includes('\0')) return 'holds a NUL byte';
  if (Buffer.byteLength(path) > PATH_MAX) return `is longer than ${PATH_MAX} bytes`;
  for (const part of path.split('/')) {
    if (Buffer.byteLength(part) > NAME_MAX) return `has a name longer than ${NAME_MAX} bytes`;
  }
  return undefined;
}

/** What character of a new name is refused (not UTF-8, a control, a bidirectional control); undefined when none. */
export function nameCharFault(name: string): string | undefined {
  if (!name.isWellFormed()) return 'is not valid UTF-8';
  const control = CONTROL.exec(name);
  if (control) return `holds a control character (${codePoint(control[0])})`;
  const bidi = BIDI.exec(name);
  if (bidi) return `holds a bidirectional control character (${codePoint(bidi[0])}), which makes a name read otherwise than it is`;
  return undefined;
}

/** What keeps `name` from being one new file's name (no folder in it); undefined when it can be. */
export function newNameFault(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (name === '.' || name === '..') return 'cannot be . or ..';
  if (name.includes('/')) return 'must be one name, without a slash';
  return pathLimitFault(name) ?? nameCharFault(name);
}

/** What keeps `path` from being a path a caller creates: the limits, and the characters of every name in it. */
export function newPathFault(path: string): string | undefined {
  const limit = pathLimitFault(path);
  if (limit) return limit;
  for (const part of path.split('/')) {
    const fault = nameCharFault(part);
    if (fault) return `has a name that ${fault}`;
  }
  return undefined;
}

/** The refusal of a name field, `what` naming it (`the archive name "a/b.zip" must be one name, without a slash`); undefined when it can be the new file's name. */
export function newNameRefusal(what: string, name: string): string | undefined {
  const fault = newNameFault(name);
  return fault ? `${what} ${JSON.stringify(shownName(name))} ${fault}` : undefined;
}

/** The refusal of a path a caller creates (`the path a<U+0007>/b has a name that holds …`); undefined when it may be created. */
export function newPathRefusal(path: string): string | undefined {
  const fault = newPathFault(path);
  return fault ? `the path ${shownName(path)} ${fault}` : undefined;
}
