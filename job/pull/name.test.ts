import assert from 'node:assert/strict';
import { test } from 'node:test';
import { suggestedName } from './name.ts';

const url = new URL('https://example.com/files/from-url.jar?x=1');
/** A header as Node's HTTP client hands it over: each byte one latin1 character. */
const wire = (bytes: Buffer) => bytes.toString('latin1');

test('filename* before filename, then the URL; the base name only', () => {
  assert.deepEqual(suggestedName(`attachment; filename="plain.zip"; filename*=UTF-8''%C3%A9t%C3%A9.zip`, url), { name: 'été.zip', from: 'Content-Disposition' });
  assert.deepEqual(suggestedName('attachment; filename="../../a\\\\b.txt"', url), { name: 'b.txt', from: 'Content-Disposition' });
  assert.deepEqual(suggestedName("attachment; filename*=ISO-8859-1''caf%E9.jar", url), { name: 'café.jar', from: 'Content-Disposition' });
  // An unknown charset, no filename, or an empty base name: the next source names it.
  assert.deepEqual(suggestedName("attachment; filename*=KOI8-R''x.jar; filename=y.jar", url), { name: 'y.jar', from: 'Content-Disposition' });
  assert.deepEqual(suggestedName('attachment', url), { name: 'from-url.jar', from: 'URL' });
  assert.deepEqual(suggestedName('attachment; filename="dir/"', url), { name: 'from-url.jar', from: 'URL' });
  assert.equal(suggestedName(undefined, new URL('https://example.com/dir/')), undefined);
});

test("a raw filename's bytes are UTF-8 or a fault, never latin1 guessed at", () => {
  assert.deepEqual(suggestedName(wire(Buffer.concat([Buffer.from('attachment; filename="'), Buffer.from('说明.txt'), Buffer.from('"')])), url), { name: '说明.txt', from: 'Content-Disposition' });
  assert.deepEqual(suggestedName(wire(Buffer.from('attachment; filename="caf\xe9.jar"', 'latin1')), url), {
    fault: 'the file name its Content-Disposition gives is not valid UTF-8',
    from: 'Content-Disposition',
  });
});

test('a utf-8 filename* that does not percent-decode to UTF-8 is a fault, not a reason to fall back', () => {
  assert.deepEqual(suggestedName("attachment; filename=ok.jar; filename*=UTF-8''caf%E9.jar", url), {
    fault: 'the file name its Content-Disposition gives is not valid UTF-8 once percent-decoded',
    from: 'Content-Disposition',
  });
  assert.deepEqual(suggestedName("attachment; filename*=utf-8''bad%G0.jar", url), {
    fault: 'the file name its Content-Disposition gives is not valid percent-encoding',
    from: 'Content-Disposition',
  });
});

test('a bidirectional control decodes as what it is, from either spelling, for the op to refuse', () => {
  const rlo = 'evil\u202egpj.jar';
  assert.deepEqual(suggestedName(wire(Buffer.from(`attachment; filename="${rlo}"`)), url), { name: rlo, from: 'Content-Disposition' });
  assert.deepEqual(suggestedName("attachment; filename*=UTF-8''evil%E2%80%AEgpj.jar", url), { name: rlo, from: 'Content-Disposition' });
});
