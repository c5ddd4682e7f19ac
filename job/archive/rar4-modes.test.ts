import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeRar4Unicode, rar4NulName } from './rar4-modes.ts';

const UNICODE = 0x200;

test("RAR 4's Unicode names decode as 7-Zip decodes them: one byte, one with the high byte, two bytes, a run from the OEM name", () => {
  // High byte 0x04; flags 0b00_01_10_11: 'a', 0x04<<8|0x30 (а), 0x4e2d (中), then a run of 0 + 2 from
  // the OEM name where decoding stands (index 3: 'W'), cut at the OEM name's end.
  const oem = Buffer.from('xyZW');
  const enc = Buffer.from([0x04, 0b00_01_10_11, 0x61, 0x30, 0x2d, 0x4e, 0x00]);
  assert.deepEqual(decodeRar4Unicode(oem, enc, 16), [0x61, 0x0430, 0x4e2d, 0x57]);
  assert.deepEqual(decodeRar4Unicode(oem, enc, 2), [0x61, 0x0430], 'never more than the bound');
});

test('a name a reader would cut at a NUL is given as stored; a Unicode name with no NUL in what it decodes to is not', () => {
  // No Unicode flag: the bytes are the name, and 7-Zip ends it at the NUL.
  assert.deepEqual(rar4NulName(Buffer.from('a\0b.txt'), 0), Buffer.from('a\0b.txt'));
  assert.equal(rar4NulName(Buffer.from('plain.txt'), 0), undefined);
  // Flagged Unicode without a NUL: UTF-8, nothing to cut.
  assert.equal(rar4NulName(Buffer.from('été.txt'), UNICODE), undefined);
  // Flagged Unicode with a NUL: the NUL separates the OEM name from the encoded one.
  const encoded = (oem: string, enc: number[]) => Buffer.concat([Buffer.from(oem, 'latin1'), Buffer.from([0]), Buffer.from(enc)]);
  assert.equal(rar4NulName(encoded('?', [0x00, 0x00, 0xe9]), UNICODE), undefined, 'é, one byte');
  assert.deepEqual(rar4NulName(encoded('ab', [0x00, 0x00, 0x61, 0x00, 0x62]), UNICODE), Buffer.from('a\0b'), 'a NUL among the decoded characters');
  // A run over the OEM name reaches its separator: a NUL as well.
  assert.deepEqual(rar4NulName(encoded('a', [0x00, 0b11_000000, 0x01]), UNICODE), Buffer.from('a\0\0'));
});
