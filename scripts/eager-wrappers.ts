/**
 * esbuild wraps each CommonJS module it bundles in an arrow function run when the module is first
 * required (`var require_x = __commonJS((exports, module) => {...})`, `__esm(() => {...})` for an
 * ES module something requires). V8 compiles an arrow like that lazily, on that first call, and
 * Node's compile cache keeps only what V8 compiled as the file loaded: so every woken function
 * compiled undici, pino and client-node's other CommonJS dependencies again. Written as
 * `(function (exports, module) {...})`, a function V8 expects to be called at once, each is
 * compiled with its file, and the image's compile cache holds it.
 *
 * Only wrappers that cannot tell the difference are rewritten: a top-level `var` initialised by a
 * call with that one block-bodied, non-async arrow, which uses neither `this`, `arguments`,
 * `new.target` nor `super` outside a function of its own. The source map is shifted to match.
 * @module
 */
import ts from 'typescript';

/** Replace `remove` characters at `at` with `text`. */
export interface Edit {
  at: number;
  remove: number;
  text: string;
}

/** True when `body` reads what an arrow and a function bind differently. */
function bindsLikeAnArrow(body: ts.Node): boolean {
  let found = false;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (n.kind === ts.SyntaxKind.ThisKeyword || n.kind === ts.SyntaxKind.SuperKeyword || ts.isMetaProperty(n) || (ts.isIdentifier(n) && n.text === 'arguments')) {
      found = true;
      return;
    }
    // A function of its own (not an arrow) binds all of these itself; a class's members too.
    if (ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isMethodDeclaration(n) || ts.isAccessor(n) || ts.isConstructorDeclaration(n) || ts.isClassLike(n)) {
      if (ts.isClassLike(n)) n.heritageClauses?.forEach(visit);
      return;
    }
    ts.forEachChild(n, visit);
  };
  ts.forEachChild(body, visit);
  return found;
}

/** The edits that make each module wrapper of `code` (an esbuild ES module) compile eagerly. */
export function wrapperEdits(code: string): Edit[] {
  const sf = ts.createSourceFile('chunk.mjs', code, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const edits: Edit[] = [];
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const d of st.declarationList.declarations) {
      const call = d.initializer;
      if (!call || !ts.isCallExpression(call) || !ts.isIdentifier(call.expression) || call.arguments.length !== 1) continue;
      const fn = call.arguments[0]!;
      if (!ts.isArrowFunction(fn) || !ts.isBlock(fn.body) || fn.modifiers?.length || bindsLikeAnArrow(fn.body)) continue;
      const start = fn.getStart(sf);
      const arrow = fn.equalsGreaterThanToken.getStart(sf);
      // `(e,t)=>{` becomes `(function(e,t){`, and `e=>{` becomes `(function(e){`.
      const parenthesised = code[start] === '(';
      edits.push({ at: start, remove: 0, text: parenthesised ? '(function' : '(function(' });
      edits.push({ at: arrow, remove: 2, text: parenthesised ? '' : ')' });
      edits.push({ at: fn.end, remove: 0, text: ')' });
    }
  }
  return edits;
}

/** `code` with `edits` (in any order, none overlapping) applied. */
export function applyEdits(code: string, edits: readonly Edit[]): string {
  let out = code;
  for (const e of [...edits].sort((a, b) => b.at - a.at)) out = out.slice(0, e.at) + e.text + out.slice(e.at + e.remove);
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function vlq(n: number): string {
  let v = n < 0 ? (-n << 1) | 1 : n << 1;
  let s = '';
  do {
    let digit = v & 31;
    v >>>= 5;
    if (v > 0) digit |= 32;
    s += B64[digit];
  } while (v > 0);
  return s;
}

/** The first VLQ value of a segment and the length of its text. */
function firstValue(seg: string): [value: number, length: number] {
  let v = 0;
  let shift = 0;
  for (let i = 0; i < seg.length; i++) {
    const d = B64.indexOf(seg[i]!);
    v += (d & 31) << shift;
    if (!(d & 32)) return [v & 1 ? -(v >>> 1) : v >>> 1, i + 1];
    shift += 5;
  }
  throw new Error(`bad source map segment ${seg}`);
}

/**
 * A source map's `mappings` for the generated code after `edits`: each generated column moves by
 * what was inserted or removed before it on its line; the other fields are kept as they are.
 */
export function shiftMappings(mappings: string, code: string, edits: readonly Edit[]): string {
  const lineStarts = [0];
  for (let i = 0; i < code.length; i++) if (code[i] === '\n') lineStarts.push(i + 1);
  const byLine = new Map<number, Edit[]>();
  for (const e of edits) {
    const line = lineStarts.findLastIndex((s) => s <= e.at);
    const col = e.at - lineStarts[line]!;
    (byLine.get(line) ?? byLine.set(line, []).get(line)!).push({ ...e, at: col });
  }
  return mappings
    .split(';')
    .map((text, line) => {
      const lineEdits = byLine.get(line)?.sort((a, b) => a.at - b.at);
      if (!lineEdits || !text) return text;
      let col = 0;
      let prev = 0;
      return text
        .split(',')
        .map((seg) => {
          const [delta, len] = firstValue(seg);
          col += delta;
          let moved = col;
          for (const e of lineEdits) {
            // A segment at an insertion keeps to the code it named, now after the inserted text.
            if (col >= e.at + e.remove) moved += e.text.length - e.remove;
            else if (col >= e.at) moved -= col - e.at;
          }
          const out = vlq(moved - prev) + seg.slice(len);
          prev = moved;
          return out;
        })
        .join(',');
    })
    .join(';');
}
