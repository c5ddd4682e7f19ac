/**
 * The file operations as a caller sees them: each renders a file Job, runs it through the
 * SyncRunner, and decodes the result (felis-behaviour §5.2). No HTTP here.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { MAX_WRITE_BYTES, renderFilesJob, type JobParams } from '../job-spec/render.ts';
import { mutates, type Op } from '../job-spec/ops.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import type { SyncRunner } from '../runner/sync-runner.ts';
import { decodeList, decodeRead, decodeWrite, checkResult, type Listing, type ReadFile } from './decode.ts';
import { FileEditError } from './errors.ts';

export interface World {
  claim: string;
  node?: string;
}

/** A server and where its world lives, as the entry gate resolved them. */
export interface Target {
  server: string;
  world: World;
}

export interface EditorConfig {
  namespace: string;
  image: string;
  command: string[];
  serviceAccount: string;
  worldsRoot: string;
  deadlineSeconds: number;
  ttlSeconds: number;
  /** How long a caller waits for a result before 504 files_timeout. */
  timeoutMs: number;
  cpu: string;
  memory: string;
  runAsUser: number;
  runAsGroup: number;
  fsGroup: number;
}

/** A fresh 16-hex op id: names the Job and selects its Pod, so it must never repeat. */
export function newOpId(): string {
  return randomBytes(8).toString('hex');
}

export class FilesEditor {
  readonly #cfg: EditorConfig;
  readonly #runner: SyncRunner;

  constructor(cfg: EditorConfig, runner: SyncRunner) {
    this.#cfg = cfg;
    this.#runner = runner;
  }

  async list(t: Target, path: string, signal?: AbortSignal): Promise<Listing> {
    return decodeList(await this.#run(t, { op: 'list', path }, signal));
  }

  async read(t: Target, path: string, signal?: AbortSignal): Promise<ReadFile> {
    return decodeRead(await this.#run(t, { op: 'read', path }, signal));
  }

  /** Returns the SHA-256 of the bytes written. */
  async write(
    t: Target,
    path: string,
    content: Buffer,
    opts: { sha256: string; expectSha256?: string; createOnly?: boolean },
    signal?: AbortSignal,
  ): Promise<string> {
    if (content.length > MAX_WRITE_BYTES) {
      throw new FileEditError('too_large', `content is ${content.length} bytes, the limit is ${MAX_WRITE_BYTES}`);
    }
    const r = await this.#run(
      t,
      { op: 'write', path, content, sha256: opts.sha256, expectSha256: opts.expectSha256, createOnly: opts.createOnly },
      signal,
    );
    return decodeWrite(r);
  }

  async mkdir(t: Target, path: string, signal?: AbortSignal): Promise<void> {
    checkResult(await this.#run(t, { op: 'mkdir', path }, signal));
  }

  async delete(t: Target, path: string, signal?: AbortSignal): Promise<void> {
    checkResult(await this.#run(t, { op: 'delete', path }, signal));
  }

  async rename(t: Target, path: string, to: string, signal?: AbortSignal): Promise<void> {
    checkResult(await this.#run(t, { op: 'rename', path, to }, signal));
  }

  async #run(
    t: Target,
    call: { op: Op; path: string } & Partial<Pick<JobParams, 'content' | 'sha256' | 'expectSha256' | 'createOnly' | 'to'>>,
    signal?: AbortSignal,
  ) {
    const c = this.#cfg;
    const job = renderFilesJob({
      ...call,
      namespace: c.namespace,
      server: t.server,
      opId: newOpId(),
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      image: c.image,
      command: c.command,
      serviceAccount: c.serviceAccount,
      worldsRoot: c.worldsRoot,
      deadlineSeconds: c.deadlineSeconds,
      ttlSeconds: c.ttlSeconds,
      cpu: c.cpu,
      memory: c.memory,
      runAsUser: c.runAsUser,
      runAsGroup: c.runAsGroup,
      fsGroup: c.fsGroup,
    });
    const deadline = AbortSignal.timeout(c.timeoutMs);
    const payload = await this.#runner.run(job, {
      mutating: mutates(call.op),
      signal: signal ? AbortSignal.any([deadline, signal]) : deadline,
    });
    return parseResultPayload(payload);
  }
}
