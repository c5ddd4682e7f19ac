import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultFlags, FlagError, parseFlags } from './flags.ts';

test('defaults', () => {
  const { flags } = parseFlags([]);
  assert.deepEqual(flags, defaultFlags());
  assert.equal(flags.worldsRoot, '/data');
  assert.equal(flags.size, -1);
  assert.equal(flags.createOnly, false);
});

test('Go flag syntax: -x v, --x v, -x=v, --x=v', () => {
  const { flags } = parseFlags(['--op', 'read', '-path', 'a b', '--worlds-root=/w', '-to=x=y', '--sha256=', '-size', '42']);
  assert.equal(flags.op, 'read');
  assert.equal(flags.path, 'a b');
  assert.equal(flags.worldsRoot, '/w');
  assert.equal(flags.to, 'x=y');
  assert.equal(flags.sha256, '');
  assert.equal(flags.size, 42);
});

test('a value may start with a dash, the last repeated flag wins, and an empty value is a value', () => {
  const { flags } = parseFlags(['--path', '-weird', '--op', 'list', '--op', 'read', '--to', '']);
  assert.equal(flags.path, '-weird');
  assert.equal(flags.op, 'read');
  assert.equal(flags.to, '');
});

test('bool flags take no separate value but accept =true/=false spellings', () => {
  assert.equal(parseFlags(['--create-only']).flags.createOnly, true);
  assert.equal(parseFlags(['-overwrite']).flags.overwrite, true);
  for (const t of ['1', 't', 'T', 'true', 'TRUE', 'True']) assert.equal(parseFlags([`--create-only=${t}`]).flags.createOnly, true, t);
  for (const f of ['0', 'f', 'F', 'false', 'FALSE', 'False']) assert.equal(parseFlags([`--create-only=${f}`]).flags.createOnly, false, f);
  assert.throws(() => parseFlags(['--create-only=yes']), { message: 'invalid boolean value "yes" for -create-only: parse error' });
  // A separate "true" is not the flag's value: it ends the flags, so --op is never seen.
  const p = parseFlags(['--create-only', 'true', '--op', 'write']);
  assert.equal(p.flags.createOnly, true);
  assert.equal(p.flags.op, '');
  assert.deepEqual(p.rest, ['true', '--op', 'write']);
});

test('parsing stops at the first non-flag, at "--", and at a lone "-"', () => {
  assert.deepEqual(parseFlags(['--op', 'read', 'extra', '--path', 'x']).rest, ['extra', '--path', 'x']);
  const dd = parseFlags(['--op', 'read', '--', '--path', 'x']);
  assert.equal(dd.flags.path, '');
  assert.deepEqual(dd.rest, ['--path', 'x']);
  assert.deepEqual(parseFlags(['-', '--op', 'x']).rest, ['-', '--op', 'x']);
});

test('errors use Go flag messages', () => {
  const cases: [string[], string][] = [
    [['--chmod', 'x'], 'flag provided but not defined: -chmod'],
    [['-recursive'], 'flag provided but not defined: -recursive'],
    [['--op'], 'flag needs an argument: -op'],
    [['---op', 'x'], 'bad flag syntax: ---op'],
    [['-=x'], 'bad flag syntax: -=x'],
    [['--size', 'ten'], 'invalid value "ten" for flag -size: parse error'],
    [['--size', '9223372036854775808'], 'invalid value "9223372036854775808" for flag -size: value out of range'],
    [['--size', '08'], 'invalid value "08" for flag -size: parse error'],
    [['--size', '_1'], 'invalid value "_1" for flag -size: parse error'],
  ];
  for (const [args, message] of cases) {
    assert.throws(
      () => parseFlags(args),
      (e: unknown) => e instanceof FlagError && e.message === message,
      args.join(' '),
    );
  }
});

test('int flags follow strconv.ParseInt base 0', () => {
  const size = (s: string) => parseFlags(['--size', s]).flags.size;
  assert.equal(size('0'), 0);
  assert.equal(size('-1'), -1);
  assert.equal(size('+7'), 7);
  assert.equal(size('0x10'), 16);
  assert.equal(size('0o17'), 15);
  assert.equal(size('017'), 15);
  assert.equal(size('0b101'), 5);
  assert.equal(size('1_000'), 1000);
  assert.equal(size('9223372036854775807'), 2 ** 63); // the nearest double
});

test('-h and -help ask for help (not an unknown flag)', () => {
  assert.equal(parseFlags(['-h']).help, true);
  assert.equal(parseFlags(['--help']).help, true);
});

test("a listing's query flags are absent unless given; given, they are read as given (an empty one too)", () => {
  const none = parseFlags(['--op', 'list', '--path', 'world']).flags;
  assert.equal('limit' in none || 'after' in none || 'q' in none, false);
  const { flags } = parseFlags(['--op', 'list', '--limit', '500', '--after', '-dash', '--q=']);
  assert.equal(flags.limit, 500);
  assert.equal(flags.after, '-dash');
  assert.equal(flags.q, '');
  assert.throws(
    () => parseFlags(['--limit', 'ten']),
    (e: unknown) => e instanceof FlagError && e.message === 'invalid value "ten" for flag -limit: parse error',
  );
  assert.throws(
    () => parseFlags(['--after']),
    (e: unknown) => e instanceof FlagError && e.message === 'flag needs an argument: -after',
  );
});
