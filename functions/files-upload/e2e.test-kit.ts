/** files-upload's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ContainerCall, q, type RawBody, type RbacScenario, upload, uploadHeaders } from '../../test/support/function-e2e.ts';

/** A signed URL's path, as a browser resolves it against the API it called. */
const signedPath = (previous: unknown) => new URL((previous as { url: string }).url, 'http://origin.invalid').pathname;

/** A multipart form of one `files` part, as a browser's FormData sends it. */
function form(name: string, text: string): RawBody {
  const b = 'felisE2eBoundary';
  const raw = Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${text}\r\n--${b}--\r\n`);
  return { raw, headers: { 'content-type': `multipart/form-data; boundary=${b}`, 'content-length': String(raw.length) } };
}

// One receiver Job per upload: created, its Pod found by label and called on its address. A signed
// URL is the gates alone; its PUT and its form each create the receiver Job named from the ticket.
export const rbac: RbacScenario = {
  calls: [
    ['PUT', `/api/v1/servers/survival/files/upload?path=${q('plugins/up.txt')}&overwrite=true`, upload('uploaded\n')],
    ['POST', `/api/v1/servers/survival/files/upload-url?path=${q('plugins/up-url.txt')}&overwrite=true`],
    ['PUT', signedPath, upload('uploaded through a signed URL\n')],
    ['POST', `/api/v1/servers/survival/files/upload-url?path=plugins&overwrite=true`],
    ['POST', signedPath, form('up-form.txt', 'uploaded as a form\n')],
  ],
};

export const container: ContainerCall[] = [
  {
    method: 'PUT',
    path: `/api/v1/servers/survival/files/upload?path=${q('plugins/up.txt')}&overwrite=true`,
    body: 'uploaded from a container\n',
    headers: uploadHeaders('uploaded from a container\n'),
    status: [200, 201],
    check: (_b, s) => assert.equal(readFileSync(join(s.world, 'plugins', 'up.txt'), 'utf8'), 'uploaded from a container\n'),
  },
  { method: 'POST', path: `/api/v1/servers/survival/files/upload-url?path=plugins&overwrite=true`, status: [200] },
  {
    method: 'POST',
    path: signedPath,
    // The container tier sends a string body as it is.
    body: form('up-form.txt', 'a form from a container\n').raw.toString(),
    headers: form('up-form.txt', 'a form from a container\n').headers,
    status: [200],
    check: (_b, s) => assert.equal(readFileSync(join(s.world, 'plugins', 'up-form.txt'), 'utf8'), 'a form from a container\n'),
  },
];
