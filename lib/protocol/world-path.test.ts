import assert from 'node:assert/strict';
import { test } from 'node:test';
import { climbsOut, isRootPath, pathRefusal, quotedPath, worldPath } from './world-path.ts';

test('a leading / is the world folder: dropped, however many', () => {
  const cases: [sent: string, path: string][] = [
    ['', ''],
    ['/', ''],
    ['//', ''],
    ['/world', 'world'],
    ['/world/level.dat', 'world/level.dat'],
    ['world/level.dat', 'world/level.dat'],
    ['///eula.txt', 'eula.txt'],
    ['/plugins/', 'plugins/'],
    ['/./x', './x'],
    ['a/../b', 'a/../b'],
    ['/a/..', 'a/..'],
    ['a//b', 'a//b'],
  ];
  for (const [sent, path] of cases) assert.deepEqual(worldPath(sent), { path }, JSON.stringify(sent));
});

test('everything else refused, in one wording that names what was sent', () => {
  const cases: [sent: string, message: string, created?: boolean][] = [
    ['..', '"..": the path leads out of the world'],
    ['/../x', '"/../x": the path leads out of the world'],
    ['../outside/secret.txt', '"../outside/secret.txt": the path leads out of the world'],
    ['a/../../x', '"a/../../x": the path leads out of the world'],
    ['/a/./../..', '"/a/./../..": the path leads out of the world'],
    ['a\0b', '"a<U+0000>b": the path holds a NUL byte'],
    [`/d/${'n'.repeat(256)}`, `"/d/${'n'.repeat(197)}…": the path has a name longer than 255 bytes`],
    ['/new\u202egpj.exe', '"/new<U+202E>gpj.exe": the path has a name that holds a bidirectional control character (U+202E), which makes a name read otherwise than it is', true],
    ['/x\ny', '"/x<U+000A>y": the path has a name that holds a control character (U+000A)', true],
  ];
  for (const [sent, message, created] of cases) assert.deepEqual(worldPath(sent, created), { refusal: message }, JSON.stringify(sent));
  // Only a path the call creates is held to the name rule's characters.
  assert.deepEqual(worldPath('/old\nname'), { path: 'old\nname' });
  assert.match(worldPath(`/${'p/'.repeat(2100)}`).refusal ?? '', /: the path is longer than 4096 bytes$/);
});

test('climbing out is counted name by name, as the Job walks', () => {
  assert.equal(climbsOut('a/b/../../c'), false);
  assert.equal(climbsOut('a/b/../../../c'), true);
  assert.equal(climbsOut('./..'), true);
  assert.equal(climbsOut('...'), false);
  assert.equal(climbsOut('..a/b'), false);
});

test('the root, spelled any way', () => {
  for (const p of ['', '.', './', './.', '//']) assert.equal(isRootPath(p), true, p);
  for (const p of ['a', 'a/..', '..']) assert.equal(isRootPath(p), false, p);
});

test('a message quotes the path with its controls shown, and cuts a long one', () => {
  assert.equal(quotedPath('a"b'), '"a\\"b"');
  assert.equal(pathRefusal('x', 'y'), '"x": the path y');
  assert.equal(quotedPath('q'.repeat(300)).length, 200 + 3);
});
