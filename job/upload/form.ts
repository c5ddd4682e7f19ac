/**
 * A `multipart/form-data` upload into a folder (a signed upload URL's POST, Wings' shape): one or
 * more parts named `files`, each with a file name, each landed at `<folder>/<name>` exactly as a
 * single upload is (landUpload: a working file, the digest computed, synced, renamed into place,
 * the old file to the undo trash), one after the other in the order they come.
 *
 * The body is parsed as it streams by @fastify/busboy (a well-kept parser: a hand-written one is
 * where boundary and header edge cases hide); a part's bytes go straight from the parser into the
 * working file, so at most a few of its chunks are in memory and a slow disk slows the sender.
 * A part's length is not known in advance: each may take what the body has left (the function
 * bounds the whole body by its `Content-Length`), which is also what its space check counts.
 *
 * Hostile names are refused, never cleaned: busboy is told to keep the name as sent
 * (`preservePath`), and a name with a `/`, `.`/`..`, a working name or anything the name rule
 * refuses stops the upload with `bad_path`. Any other part (another name, a field, a part
 * without a file name) stops it with `form`: a panel that misspells `files` learns so instead of
 * uploading nothing. The first refusal or broken part ends the upload; files placed before it stay.
 * @module
 */
import type http from 'node:http';
import type { Readable } from 'node:stream';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import { newNameRefusal } from '../../lib/protocol/names.ts';
import type { Result, ResultCode } from '../../lib/protocol/result.ts';
import { isWorkingName, reservedMessage } from '../runtime/working-files.ts';
import { fail } from '../volume/failure.ts';
import type { Landing, UploadRequest } from './land.ts';

/** The form's part name, as Wings names it. */
export const FILES_FIELD = 'files';
/** More parts than this in one form is no upload a panel makes. */
export const MAX_FORM_FILES = 1000;

export interface FormRequest {
  /** The folder the files go into ('' or '.' for the world's root). */
  folder: string;
  overwrite: boolean;
  parents?: boolean;
  /** The body's length in bytes: no part can be longer. */
  size: number;
}

export interface PlacedFile {
  path: string;
  sha256: string;
  size: number;
}

/** What a form upload placed, and why it stopped early if it did. */
export interface FormLanding {
  files: PlacedFile[];
  /** An op refusal (`bad_path`, `exists`, `no_space`, …) or `form` (the form's shape). */
  refused?: { code: string; error: string };
  /** The bytes were not what the form promised (it broke off, or was not multipart). */
  transfer?: { reason: 'short' | 'long' | 'digest' | 'broken'; error: string };
}

type Part = { kind: 'file'; field: string; name: string | undefined; stream: BusboyFileStream } | { kind: 'field'; field: string } | { kind: 'end' } | { kind: 'error'; error: Error };

/** Why a part's file name cannot be placed, or undefined. */
export function fileNameRefusal(name: string | undefined): string | undefined {
  if (name === undefined || name === '') return `each ${FILES_FIELD} part needs a file name`;
  if (name.includes('/')) return `the file name ${JSON.stringify(name)} has a "/": a part names one file, not a path`;
  if (name === '.' || name === '..') return `the file name ${JSON.stringify(name)} names a folder`;
  if (isWorkingName(name)) return reservedMessage(name);
  return newNameRefusal('file name', name);
}

function joined(folder: string, name: string): string {
  const f = folder.replace(/\/+$/, '');
  return f === '' || f === '.' ? name : `${f}/${name}`;
}

/**
 * Lands each `files` part of `body` in turn through `land`. Never throws for anything the caller
 * sent; the body is left unread from the first refusal on (the caller drains it).
 */
export async function landForm(land: (req: UploadRequest, body: AsyncIterable<Buffer>) => Promise<Landing>, req: FormRequest, headers: http.IncomingHttpHeaders, body: Readable): Promise<FormLanding> {
  const files: PlacedFile[] = [];
  let bb: BusboyInstance;
  try {
    bb = Busboy({ headers: headers as { 'content-type': string }, preservePath: true, limits: { files: MAX_FORM_FILES, fields: 0, fieldSize: 1024, parts: MAX_FORM_FILES } });
  } catch (e) {
    return { files, refused: { code: 'form', error: `the body is not multipart/form-data: ${(e as Error).message}` } };
  }
  // The parser's events, taken one at a time: a part is landed whole before the next is looked at
  // (the parser waits meanwhile, since nobody reads the next part's stream).
  const queue: Part[] = [];
  let wake: (() => void) | undefined;
  const push = (p: Part) => {
    queue.push(p);
    wake?.();
  };
  bb.on('file', (field, stream, name) => push({ kind: 'file', field, name, stream }));
  bb.on('field', (field) => push({ kind: 'field', field }));
  bb.on('fieldsLimit', () => push({ kind: 'field', field: '' }));
  bb.on('filesLimit', () => push({ kind: 'error', error: new Error(`a form takes at most ${MAX_FORM_FILES} files`) }));
  bb.on('partsLimit', () => push({ kind: 'error', error: new Error(`a form takes at most ${MAX_FORM_FILES} parts`) }));
  bb.on('finish', () => push({ kind: 'end' }));
  bb.on('error', (error: Error) => push({ kind: 'error', error }));
  // The part being landed: a body that breaks off must end its landing too, not leave it waiting.
  let current: BusboyFileStream | undefined;
  const broke = (error: Error) => {
    current?.destroy(error);
    push({ kind: 'error', error });
  };
  body.on('error', broke);
  body.on('close', () => {
    if (!(body as http.IncomingMessage).complete) broke(new Error('the request was broken off'));
  });
  body.pipe(bb);
  let used = 0;
  const stop = (l: Omit<FormLanding, 'files'>): FormLanding => {
    body.unpipe(bb);
    bb.removeAllListeners('file');
    return { files, ...l };
  };
  for (;;) {
    while (queue.length === 0) await new Promise<void>((r) => (wake = r));
    wake = undefined;
    const p = queue.shift()!;
    if (p.kind === 'end') {
      if (files.length === 0) return stop({ refused: { code: 'form', error: `the form has no ${FILES_FIELD} part` } });
      return { files };
    }
    if (p.kind === 'error') return stop({ transfer: { reason: 'broken', error: `the form could not be read: ${p.error.message}` } });
    if (p.kind === 'field' || p.field !== FILES_FIELD) {
      const what = p.kind === 'field' ? `the field ${JSON.stringify(p.field)}` : `the file part ${JSON.stringify(p.field)}`;
      return stop({ refused: { code: 'form', error: `${what} is not taken: send each file as a part named ${FILES_FIELD}, with a file name` } });
    }
    const bad = fileNameRefusal(p.name);
    if (bad) return stop({ refused: { code: 'bad_path', error: bad } });
    const path = joined(req.folder, p.name!);
    current = p.stream;
    const landing = await land({ path, size: Math.max(0, req.size - used), upTo: true, overwrite: req.overwrite, ...(req.parents ? { parents: true } : {}) }, p.stream);
    if (landing.kind === 'transfer') {
      current = undefined;
      return stop({ transfer: { reason: landing.reason, error: landing.message } });
    }
    current = undefined;
    const r: Result = landing.result;
    if (r.code || !r.sha256) return stop({ refused: { code: r.code ?? 'bad_path', error: r.error ?? `${path} was not placed` } });
    const size = landing.received ?? 0;
    used += size;
    files.push({ path, sha256: r.sha256, size });
    // A stream left with bytes (a landing that returned early) must not hold the parser up.
    p.stream.resume();
  }
}

/** The Result the receiver's Job reports for a form: what it placed, or the refusal that ended it. */
export function formResult(l: FormLanding): Result | undefined {
  if (l.refused && l.refused.code !== 'form') return fail(l.refused.code as ResultCode, l.refused.error);
  if (l.transfer) return undefined;
  return { files: l.files.length, bytes: l.files.reduce((n, f) => n + f.size, 0) };
}
