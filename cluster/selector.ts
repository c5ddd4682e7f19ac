/**
 * Label and field selectors, ported from `apimachinery/pkg/labels/selector.go` (lexer, parser and
 * `Requirement.Matches`) and `apimachinery/pkg/fields/selector.go`. Error texts are the current ones.
 *
 * @module
 */

import { type FieldError, fieldErr, fieldErrorString } from './errors.ts';
import { isQualifiedName, isValidLabelValue } from './validation.ts';

type Tok = 'error' | 'eos' | 'closePar' | 'comma' | 'doesNotExist' | 'doubleEquals' | 'equals' | 'gt' | 'ident' | 'in' | 'lt' | 'notEquals' | 'notIn' | 'openPar';

const STRING_TO_TOKEN: Record<string, Tok> = {
  ')': 'closePar',
  ',': 'comma',
  '!': 'doesNotExist',
  '==': 'doubleEquals',
  '=': 'equals',
  '>': 'gt',
  in: 'in',
  '<': 'lt',
  '!=': 'notEquals',
  notin: 'notIn',
  '(': 'openPar',
};

const isWhitespace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string) => '=!(),><'.includes(c);

function lex(input: string): { tok: Tok; lit: string }[] {
  const out: { tok: Tok; lit: string }[] = [];
  let pos = 0;
  for (;;) {
    while (pos < input.length && isWhitespace(input[pos]!)) pos++;
    if (pos >= input.length) {
      out.push({ tok: 'eos', lit: '' });
      return out;
    }
    if (isSpecial(input[pos]!)) {
      let buffer = '';
      let last: { tok: Tok; lit: string } | undefined;
      while (pos < input.length && isSpecial(input[pos]!)) {
        buffer += input[pos];
        const t = STRING_TO_TOKEN[buffer];
        if (t) {
          last = { tok: t, lit: buffer };
          pos++;
        } else if (last) {
          break;
        } else {
          pos++;
        }
      }
      if (!last) {
        out.push({ tok: 'error', lit: `error expected: keyword found '${buffer}'` });
        return out;
      }
      out.push(last);
    } else {
      let buffer = '';
      while (pos < input.length && !isWhitespace(input[pos]!) && !isSpecial(input[pos]!)) buffer += input[pos++];
      const t = STRING_TO_TOKEN[buffer];
      out.push(t ? { tok: t, lit: buffer } : { tok: 'ident', lit: buffer });
    }
  }
}

export type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

class SelectorParseError extends Error {}

class Parser {
  private items: { tok: Tok; lit: string }[];
  private pos = 0;

  constructor(input: string) {
    this.items = lex(input);
  }

  private lookahead(values: boolean): { tok: Tok; lit: string } {
    const it = this.items[Math.min(this.pos, this.items.length - 1)]!;
    if (values && (it.tok === 'in' || it.tok === 'notIn')) return { tok: 'ident', lit: it.lit };
    return it;
  }

  private consume(values: boolean): { tok: Tok; lit: string } {
    const it = this.lookahead(values);
    if (this.pos < this.items.length - 1) this.pos++;
    return it;
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      if (tok === 'ident' || tok === 'doesNotExist') {
        let r: Requirement;
        try {
          r = this.parseRequirement();
        } catch (e) {
          throw new SelectorParseError(`unable to parse requirement: ${(e as Error).message}`);
        }
        reqs.push(r);
        const t = this.consume(true);
        if (t.tok === 'eos') return reqs;
        if (t.tok === 'comma') {
          const t2 = this.lookahead(true);
          if (t2.tok !== 'ident' && t2.tok !== 'doesNotExist') {
            throw new SelectorParseError(`found '${t2.lit}', expected: identifier after ','`);
          }
          continue;
        }
        throw new SelectorParseError(`found '${t.lit}', expected: ',' or 'end of string'`);
      }
      if (tok === 'eos') return reqs;
      throw new SelectorParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
    }
  }

  private parseRequirement(): Requirement {
    let { tok, lit } = this.consume(true);
    let op: Operator | undefined;
    if (tok === 'doesNotExist') {
      op = '!';
      ({ tok, lit } = this.consume(true));
    }
    if (tok !== 'ident') throw new Error(`found '${lit}', expected: identifier`);
    const key = lit;
    const keyErr = validateKey(key, '<nil>');
    if (keyErr) throw new Error(fieldErrorString(keyErr));
    const next = this.lookahead(true).tok;
    if (next === 'eos' || next === 'comma') {
      if (op !== '!') op = 'exists';
    }
    if (op === 'exists' || op === '!') return newRequirement(key, op, []);
    op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, values);
  }

  private parseOperator(): Operator {
    const { tok, lit } = this.consume(false);
    switch (tok) {
      case 'in':
        return 'in';
      case 'equals':
        return '=';
      case 'doubleEquals':
        return '==';
      case 'gt':
        return 'gt';
      case 'lt':
        return 'lt';
      case 'notIn':
        return 'notin';
      case 'notEquals':
        return '!=';
      default:
        throw new Error(`found '${lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  private parseValues(): string[] {
    let { tok, lit } = this.consume(true);
    if (tok !== 'openPar') throw new Error(`found '${lit}' expected: '('`);
    ({ tok, lit } = this.lookahead(true));
    if (tok === 'ident' || tok === 'comma') {
      const s = this.parseIdentifiersList();
      if (this.consume(true).tok !== 'closePar') throw new Error(`found '${lit}', expected: ')'`);
      return s;
    }
    if (tok === 'closePar') {
      this.consume(true);
      return [''];
    }
    throw new Error(`found '${lit}', expected: ',', ')' or identifier`);
  }

  private parseIdentifiersList(): string[] {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume(true);
      if (tok === 'ident') {
        s.add(lit);
        const t2 = this.lookahead(true);
        if (t2.tok === 'comma') continue;
        if (t2.tok === 'closePar') return [...s].sort();
        throw new Error(`found '${t2.lit}', expected: ',' or ')'`);
      }
      if (tok === 'comma') {
        if (s.size === 0) s.add('');
        const t2 = this.lookahead(true);
        if (t2.tok === 'closePar') {
          s.add('');
          return [...s].sort();
        }
        if (t2.tok === 'comma') {
          this.consume(true);
          s.add('');
        }
        continue;
      }
      throw new Error(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): string[] {
    const t = this.lookahead(true);
    if (t.tok === 'eos' || t.tok === 'comma') return [''];
    const { tok, lit } = this.consume(true);
    if (tok === 'ident') return [lit];
    throw new Error(`found '${lit}', expected: identifier`);
  }
}

function validateKey(k: string, path: string): FieldError | undefined {
  const errs = isQualifiedName(k);
  return errs.length ? fieldErr.invalid(path, k, errs.join('; ')) : undefined;
}

function newRequirement(key: string, operator: Operator, values: string[]): Requirement {
  const errs: FieldError[] = [];
  const k = validateKey(key, 'key');
  if (k) errs.push(k);
  if ((operator === 'in' || operator === 'notin') && values.length === 0) {
    errs.push(fieldErr.invalid('values', values, "for 'in', 'notin' operators, values set can't be empty"));
  }
  if ((operator === '=' || operator === '==' || operator === '!=') && values.length !== 1) {
    errs.push(fieldErr.invalid('values', values, 'exact-match compatibility requires one single value'));
  }
  if (operator === 'gt' || operator === 'lt') {
    if (values.length !== 1) {
      errs.push(fieldErr.invalid('values', values, "for 'Gt', 'Lt' operators, exactly one value is required"));
    }
    values.forEach((v, i) => {
      if (!/^[+-]?\d+$/.test(v)) {
        errs.push(fieldErr.invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      }
    });
  }
  values.forEach((v, i) => {
    const m = isValidLabelValue(v);
    if (m.length) errs.push(fieldErr.invalid(`values[${i}][${key}]`, v, m.join('; ')));
  });
  if (errs.length) {
    const seen = [...new Set(errs.map(fieldErrorString))];
    throw new Error(seen.length === 1 ? seen[0] : `[${seen.join(', ')}]`);
  }
  return { key, operator, values };
}

/** A parsed label selector; an empty one matches everything. */
export interface LabelSelector {
  requirements: Requirement[];
  matches(labels: Record<string, string> | undefined | null): boolean;
  empty: boolean;
}

function parseIntStrict(v: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(v)) return undefined;
  return BigInt(v);
}

function requirementMatches(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has && r.values.includes(v!);
    case 'notin':
    case '!=':
      return !has || !r.values.includes(v!);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const a = parseIntStrict(v!);
      const b = parseIntStrict(r.values[0]!);
      if (a === undefined || b === undefined) return false;
      return r.operator === 'gt' ? a > b : a < b;
    }
  }
}

/**
 * Parses a `labelSelector` query value. Throws an `Error` whose message is the apiserver's
 * BadRequest text on invalid input.
 */
export function parseLabelSelector(input: string): LabelSelector {
  const requirements = new Parser(input).parse();
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels ?? {})),
  };
}

/** Builds a selector from a `metav1.LabelSelector` (matchLabels and matchExpressions). */
export function selectorFromLabelSelector(sel: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] }): LabelSelector {
  const requirements: Requirement[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) requirements.push({ key: k, operator: '=', values: [v] });
  for (const e of sel.matchExpressions ?? []) {
    const op: Operator = e.operator === 'In' ? 'in' : e.operator === 'NotIn' ? 'notin' : e.operator === 'Exists' ? 'exists' : '!';
    requirements.push({ key: e.key, operator: op, values: e.values ?? [] });
  }
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels ?? {})),
  };
}

// ---- field selectors ----

export interface FieldTerm {
  field: string;
  value: string;
  not: boolean;
}

function splitTerms(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === ',') {
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out;
}

function unescapeValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '\\') {
      const n = v[i + 1];
      if (n === '\\' || n === ',' || n === '=') {
        out += n;
        i++;
        continue;
      }
      throw new Error(`invalid field selector: invalid escape sequence: \\${n ?? ''}`);
    }
    if (c === ',' || c === '=') throw new Error(`invalid field selector: unescaped ${c}`);
    out += c;
  }
  return out;
}

/** Parses a `fieldSelector` query value (`a=b`, `a==b`, `a!=b`, comma-joined). */
export function parseFieldSelector(input: string): FieldTerm[] {
  const terms: FieldTerm[] = [];
  for (const part of splitTerms(input).sort()) {
    if (part === '') continue;
    let idx = -1;
    let op = '';
    for (const o of ['!=', '==', '=']) {
      const i = part.indexOf(o);
      if (i >= 0 && (idx < 0 || i < idx)) {
        idx = i;
        op = o;
      }
    }
    if (idx < 0) throw new Error(`invalid selector: '${input}'; can't understand '${part}'`);
    terms.push({ field: part.slice(0, idx), value: unescapeValue(part.slice(idx + op.length)), not: op === '!=' });
  }
  return terms;
}
