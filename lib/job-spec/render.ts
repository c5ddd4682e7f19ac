/**
 * Renders the file Job exactly as Felis does (name, labels, command, env, limits), so Felis's operator and API see
 * our Jobs as the holders they are, and the original image can run them. Pure: no I/O.
 * @module
 */
import type { V1EnvVar, V1Job } from '@kubernetes/client-node';
import { DomainError } from '../errors.ts';
import {
  ANNOTATION_FILES_PATH,
  CHANGE_MARK,
  COMPONENT_WORLD_FILES,
  FILES_CONTAINER,
  LABEL_COMPONENT,
  LABEL_EVENT,
  LABEL_EVENT_REQUEST,
  LABEL_FILES_ASYNC,
  LABEL_FILES_FOLLOW,
  LABEL_FILES_MODE,
  LABEL_FILES_OP,
  LABEL_FILES_PULL,
  LABEL_FILES_READ_OP,
  LABEL_MANAGED_BY,
  LABEL_SERVER,
  MANAGED_BY_FILES,
  READ_MODES,
} from '../labels.ts';
import { type Batch, carriesItems, encodeBatchEnv } from '../protocol/batch-env.ts';
import { encodeContentEnv, WRITE_RECEIVE_IDLE_SECONDS, WRITE_RECEIVE_LIFETIME_SECONDS } from '../protocol/content-env.ts';
import { type AnyOpFields, contractOf, holdsWorld, isOp, mutates, needsChown, needsFowner, type Op, opHas } from '../protocol/ops.ts';
import { encodeTrashEnv, type TrashSettings } from '../protocol/trash-env.ts';

import { DEFAULT_CPU, DEFAULT_MEMORY, QUANTITY } from './resources.ts';

const FALLBACK_SECONDS = 120;

/**
 * V8 heap limits for the archive ops' Job program (on the container as NODE_OPTIONS; Felis's command
 * line is unchanged, and a program that is not Node ignores it). The extraction's live heap is a
 * few MiB whatever the entry count; without limits V8 sizes its heap for the node, not the 256 MiB
 * container, and lets garbage pile up (275 MiB peak RSS at a million entries, 115 MiB with these).
 */
export const ARCHIVE_NODE_OPTIONS = '--max-semi-space-size=1 --max-old-space-size=32';
/**
 * A pull's heap limit: its live heap is a batch of socket buffers (about 1 MiB), but every socket
 * read allocates a fresh buffer, and a small heap makes V8 collect for them often: a 1 MiB young
 * generation halved the throughput, and a 64 MiB old generation is ~20% faster than 32 MiB (peak RSS
 * ~150 MiB of the Job's 256 MiB at 1 GiB pulled).
 */
export const PULL_NODE_OPTIONS = '--max-old-space-size=64';

/**
 * What a file Job is rendered from: its op's fields (the flags its contract encodes, AnyOpFields),
 * and below what every Job has and what travels beside the flags (env, labels, tokens).
 */
export interface JobParams extends AnyOpFields {
  namespace: string;
  server: string;
  opId: string;
  op: Op | string;
  path: string;
  worldPvc: string;
  /** Execution node; pins the Pod with the Felis node-identity selector when set. */
  nodeName?: string;
  image: string;
  /** Container command; Felis's is `/usr/local/bin/felis files`. */
  command: string[];
  serviceAccount: string;
  worldsRoot: string;
  deadlineSeconds: number;
  ttlSeconds: number;
  cpu?: string;
  memory?: string;
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
  async?: boolean;
  content?: Buffer;
  /**
   * write: the content is streamed to the Job's Pod by a caller with the token whose SHA-256 this
   * is (the token itself never appears in the spec), instead of carried in the env.
   */
  contentTokenSha256?: string;
  uploadToken?: string;
  /** delete-many, move-many, chmod-many, compress: the items, carried in the env (lib/protocol/batch-env.ts). */
  batch?: Batch;
  /** The key of the CloudEvent this Job serves, as a label: a redelivery finds the Job by it. */
  eventKey?: string;
  /** The digest of the request that event carried (lib/events/scope.ts), as a label beside it. */
  eventRequest?: string;
  /** pull: the operator's rules and bounds (FELIS_PULL_*), as the function's config gives them, into the Job's env. */
  pullEnv?: Readonly<Record<string, string>>;
  /** pull: the digest of the token files-pull's cancel call presents (the Pod serves it on its port). */
  cancelTokenSha256?: string;
  /** tail with `follow`: the digest of the token files-tail presents to have the appended lines served on the Pod's port. */
  followTokenSha256?: string;
  /**
   * The undo trash's settings and the caller (lib/protocol/trash-env.ts), into every mutation Job's
   * env; absent, the Job keeps the trash on with its defaults.
   */
  trash?: TrashSettings;
}

export class JobSpecError extends Error {
  constructor(message: string) {
    super(`fileedit: ${message}`);
    this.name = 'JobSpecError';
  }
}

/** A batch whose items, compressed, would not fit the Job's spec (lib/protocol/batch-env.ts). */
export class BatchTooLargeError extends DomainError {
  constructor() {
    super('too_large', 'too_large', 'the batch is too large for one Job: send fewer items or shorter paths');
    this.name = 'BatchTooLargeError';
  }
}

/** `files-<server>-<opid>`: at most 55 characters for a valid server name, so the Pod name fits 63. */
export function filesJobName(server: string, opId: string): string {
  return `files-${server}-${opId}`;
}

export function quantity(v: string | undefined, fallback: string, what: string): string {
  const q = v === undefined || v === '' ? fallback : v;
  if (!QUANTITY.test(q)) throw new JobSpecError(`invalid ${what} quantity ${JSON.stringify(q)}`);
  return q;
}

/** Felis's command line: the op, its path and the world's mount, then the op's own flags (its contract's). */
function args(p: JobParams, op: Op): string[] {
  return ['--op', op, '--path', p.path, '--worlds-root', p.worldsRoot, ...contractOf(op).encode(p)];
}

function env(p: JobParams, op: Op): V1EnvVar[] | undefined {
  const base = opEnv(p, op);
  // Every mutation may trash what it replaces and purges what has expired: it is told how.
  if (!p.trash || !mutates(op)) return base;
  return [...(base ?? []), ...encodeTrashEnv(p.trash)];
}

function opEnv(p: JobParams, op: Op): V1EnvVar[] | undefined {
  if (op === 'write' && p.contentTokenSha256) {
    return servingEnvOf(BROWSE_PORT, { tokenSha256: p.contentTokenSha256, idleSeconds: WRITE_RECEIVE_IDLE_SECONDS, lifetimeSeconds: WRITE_RECEIVE_LIFETIME_SECONDS });
  }
  if (op === 'write') return encodeContentEnv(p.content ?? Buffer.alloc(0));
  if (op === 'upload') return [{ name: 'FELIS_UPLOAD_TOKEN', value: p.uploadToken ?? '' }];
  if (opHas(op, 'batch')) {
    const vars = encodeBatchEnv(p.batch!);
    if (!vars) throw new BatchTooLargeError();
    return vars;
  }
  const out: V1EnvVar[] = [];
  // compress: its selection's paths; the many-file ops returned theirs above.
  if (carriesItems(op)) {
    const vars = encodeBatchEnv(p.batch!);
    if (!vars) throw new BatchTooLargeError();
    out.push(...vars);
  }
  if (opHas(op, 'heapLimited')) out.push({ name: 'NODE_OPTIONS', value: ARCHIVE_NODE_OPTIONS });
  // A follow serves its lines on the Pod's address, to the bearer of its token alone.
  if (p.followTokenSha256) out.push(...listenEnvOf(BROWSE_PORT), { name: 'FELIS_SERVE_TOKEN_SHA256', value: p.followTokenSha256 });
  if (op === 'pull') {
    out.push({ name: 'NODE_OPTIONS', value: PULL_NODE_OPTIONS });
    for (const name of Object.keys(p.pullEnv ?? {}).sort()) if (PULL_ENV.includes(name)) out.push({ name, value: p.pullEnv![name] });
    // The cancel call: listened for on the Pod's address for as long as the pull runs.
    if (p.cancelTokenSha256) out.push(...listenEnvOf(BROWSE_PORT), { name: 'FELIS_SERVE_TOKEN_SHA256', value: p.cancelTokenSha256 });
    // Its staging is named by its op id, and kept until no placement can still be started for it:
    // the Job's deadline, then the time its finished Job stays listed (functions/files-pull/job/pull-staging.ts).
    out.push({ name: PULL_KEEP_ENV, value: String(pullKeepSeconds(p)) });
  }
  if (opHas(op, 'journaled') || op === 'pull') out.push(OP_ID_ENV);
  return out.length > 0 ? out : undefined;
}

/** The operator's pull settings a pull Job's env carries (functions/files-pull/job/pull.ts reads them); nothing else passes. */
export const PULL_ENV: readonly string[] = ['FELIS_PULL_ALLOW', 'FELIS_PULL_DENY', 'FELIS_PULL_PORTS', 'FELIS_PULL_MAX_BYTES', 'FELIS_PULL_CONNECT_TIMEOUT_SECONDS', 'FELIS_PULL_IDLE_TIMEOUT_SECONDS'];
export { LABEL_FILES_PULL };
/** How long a pull's staging is kept at most (seconds), in its Job's env (functions/files-pull/job/pull-staging.ts). */
export const PULL_KEEP_ENV = 'FELIS_PULL_KEEP_SECONDS';

/** A pull's staging lives at most its Job's deadline plus the time the finished Job stays listed. */
export function pullKeepSeconds(p: Pick<JobParams, 'deadlineSeconds' | 'ttlSeconds'>): number {
  return (p.deadlineSeconds > 0 ? p.deadlineSeconds : FALLBACK_SECONDS) + (p.ttlSeconds > 0 ? p.ttlSeconds : FALLBACK_SECONDS);
}
const OP_ID_ENV: V1EnvVar = { name: 'FELIS_OP_ID', valueFrom: { fieldRef: { fieldPath: `metadata.labels['${LABEL_FILES_OP}']` } } };

/**
 * Renders the Job, or throws JobSpecError before any API call, in Felis's validation order.
 */
export function renderFilesJob(p: JobParams): V1Job {
  if (!p.image) throw new JobSpecError('no worker image configured');
  if (!p.worldPvc) throw new JobSpecError('no world volume claim');
  if (!p.opId) throw new JobSpecError('no operation id');
  if (!isOp(p.op)) throw new JobSpecError(`unknown operation ${JSON.stringify(p.op)}`);
  const op = p.op;
  if (p.contentTokenSha256 !== undefined) {
    if (op !== 'write') throw new JobSpecError(`operation ${op} takes no streamed content`);
    if (!/^[0-9a-f]{64}$/.test(p.contentTokenSha256)) throw new JobSpecError('a streamed write needs a token digest');
    if (p.content !== undefined) throw new JobSpecError('a streamed write carries no content in its spec');
  }
  if (op === 'upload' && (!p.sourceUrl || !p.uploadToken)) {
    throw new JobSpecError('an upload needs a source URL and a token');
  }
  if (op === 'pull' && !p.url) throw new JobSpecError('a pull needs a URL');
  if (op === 'pull-place' && (!p.to || !/^[0-9a-f]{16}$/.test(p.pullOp ?? ''))) throw new JobSpecError('a placement needs the name and the op id of its pull');
  if (p.cancelTokenSha256 !== undefined && (op !== 'pull' || !/^[0-9a-f]{64}$/.test(p.cancelTokenSha256))) throw new JobSpecError('only a pull takes a cancel token digest');
  if (p.followTokenSha256 !== undefined && (op !== 'tail' || !p.follow || !/^[0-9a-f]{64}$/.test(p.followTokenSha256))) throw new JobSpecError('only a tail with follow takes a follow token digest');
  if (carriesItems(op) !== (p.batch !== undefined)) throw new JobSpecError(carriesItems(op) ? `operation ${op} needs its items` : `operation ${op} takes no items`);
  if (p.async && !opHas(op, 'async')) {
    throw new JobSpecError(`operation ${op} cannot run in the background`);
  }
  const cpu = quantity(p.cpu, DEFAULT_CPU, 'cpu');
  const memory = quantity(p.memory, DEFAULT_MEMORY, 'memory');
  if (p.command.length === 0) throw new JobSpecError('no worker command configured');

  const rw = mutates(op);
  const holds = holdsWorld(op);
  const labels: Record<string, string> = {
    [LABEL_MANAGED_BY]: MANAGED_BY_FILES,
    [LABEL_COMPONENT]: COMPONENT_WORLD_FILES,
    [LABEL_SERVER]: p.server,
    [LABEL_FILES_OP]: p.opId,
    // An op that holds nothing and is no read mode of its own (a pull writes only its own staging;
    // an op Felis does not know reads): mode `read`, which Felis's rule and ours both pass by; a
    // pull's own label names the op (lib/labels.ts fileOpOf).
    [LABEL_FILES_MODE]: holds || READ_MODES.has(op) ? op : 'read',
  };
  if (p.async) labels[LABEL_FILES_ASYNC] = 'true';
  // A follow's Job: reachable by files-tail (the NetworkPolicy), counted against the follow limit.
  if (p.followTokenSha256) labels[LABEL_FILES_FOLLOW] = 'true';
  if (op === 'pull') labels[LABEL_FILES_PULL] = 'true';
  // Any other op labelled `read` says which it is (lib/labels.ts fileOpOf).
  else if (labels[LABEL_FILES_MODE] !== op) labels[LABEL_FILES_READ_OP] = op;
  if (p.eventKey) labels[LABEL_EVENT] = p.eventKey;
  if (p.eventKey && p.eventRequest) labels[LABEL_EVENT_REQUEST] = p.eventRequest;
  return jobOf(p, {
    labels,
    // Async Jobs carry the path, as Felis's; a change of ours that holds the world says so (a later
    // change of ours waits for it in turn, lib/maintenance/world-line.ts); a sync read carries none.
    annotations: p.async || holds ? { ...(p.async ? { [ANNOTATION_FILES_PATH]: p.path } : {}), ...(holds ? CHANGE_MARK : {}) } : undefined,
    deadlineSeconds: p.deadlineSeconds > 0 ? p.deadlineSeconds : FALLBACK_SECONDS,
    readOnly: !rw,
    args: args(p, op),
    env: env(p, op),
    // A streamed write's Pod takes its content on the serving port, as a receiver's takes an upload.
    ...(p.contentTokenSha256 ? { ports: [{ name: 'receive', containerPort: BROWSE_PORT, protocol: 'TCP' }] } : {}),
    ...(op === 'pull' && p.cancelTokenSha256 ? { ports: [{ name: 'cancel', containerPort: BROWSE_PORT, protocol: 'TCP' }] } : {}),
    ...(p.followTokenSha256 ? { ports: [{ name: 'follow', containerPort: BROWSE_PORT, protocol: 'TCP' }] } : {}),
    requests: { cpu, memory },
    limits: { cpu, memory },
    // Reading needs no capability: the game's uid owns the files. Writing replaces them whatever their mode.
    capabilities: !rw ? [] : needsChown(op) ? ['CHOWN', 'DAC_OVERRIDE'] : needsFowner(op) ? ['DAC_OVERRIDE', 'FOWNER'] : ['DAC_OVERRIDE'],
    // The trash is readable by its owner alone, the user the writing Jobs run as.
    asWriter: opHas(op, 'asWriter'),
  });
}

/** Where a Pod-serving mode listens: the Pod's own address (from the downward API) and `port`. */
export function listenEnvOf(port: number): V1EnvVar[] {
  return [
    { name: 'FELIS_POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    { name: 'FELIS_SERVE_PORT', value: String(port) },
  ];
}

/** What the browse and receive modes read (job/serve/env.ts): where to listen, whom to let in, how long to stay. */
export function servingEnvOf(port: number, p: { tokenSha256: string; idleSeconds: number; lifetimeSeconds: number }): V1EnvVar[] {
  return [
    ...listenEnvOf(port),
    { name: 'FELIS_SERVE_TOKEN_SHA256', value: p.tokenSha256 },
    { name: 'FELIS_SERVE_IDLE_SECONDS', value: String(p.idleSeconds) },
    { name: 'FELIS_SERVE_LIFETIME_SECONDS', value: String(p.lifetimeSeconds) },
  ];
}

/** What differs between the kinds of file Job; the rest of the Job is the same for all of them. */
export interface JobShape {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  deadlineSeconds: number;
  readOnly: boolean;
  args: string[];
  env?: V1EnvVar[];
  ports?: { name: string; containerPort: number; protocol: string }[];
  requests: { cpu: string; memory: string };
  limits: { cpu: string; memory: string };
  capabilities: string[];
  /**
   * Runs as the writers' user though it needs no capability: the trash listing. The trash is the
   * writing Jobs' own (mode 0700, and a record counts only when that user wrote it), so only that
   * user can read it; with no capability and a read-only world it can change nothing.
   */
  asWriter?: boolean;
  /** A scratch folder of the Pod's own (emptyDir, at most `sizeLimit`), for a program whose root and world are read-only. */
  scratch?: { mountPath: string; sizeLimit: string };
}

export type JobBase = Pick<
  JobParams,
  'namespace' | 'server' | 'opId' | 'worldPvc' | 'nodeName' | 'image' | 'command' | 'serviceAccount' | 'worldsRoot' | 'ttlSeconds' | 'runAsUser' | 'runAsGroup' | 'fsGroup'
>;

const SCRATCH_VOLUME = 'scratch';

/** The game's uid and gid: the world's files belong to them. */
export const GAME_UID = 1000;

/**
 * The Pod's security context. A Job that needs capabilities (one that writes the world: it must
 * replace files whatever their mode and give new ones back to the game's uid) runs as root with
 * only those, as Felis's do. A Job that needs none (list, read, browse, export: reading files the
 * game's uid owns) runs as that uid instead, non-root, so it fits PodSecurity `restricted`.
 * Every Pod gets the runtime's default seccomp profile.
 */
function podSecurityOf(p: JobBase, capabilities: string[], asWriter = false): Record<string, unknown> {
  const seccompProfile = { type: 'RuntimeDefault' };
  if (capabilities.length === 0 && !asWriter) {
    const uid = (p.runAsUser ?? 0) > 0 ? p.runAsUser! : GAME_UID;
    const gid = (p.runAsGroup ?? 0) > 0 ? p.runAsGroup! : GAME_UID;
    return { runAsNonRoot: true, runAsUser: uid, runAsGroup: gid, ...((p.fsGroup ?? 0) > 0 ? { fsGroup: p.fsGroup } : {}), seccompProfile };
  }
  const podSecurity: Record<string, unknown> = { runAsNonRoot: false, runAsUser: p.runAsUser ?? 0, runAsGroup: p.runAsGroup ?? 0 };
  if ((p.fsGroup ?? 0) > 0) podSecurity.fsGroup = p.fsGroup;
  podSecurity.seccompProfile = seccompProfile;
  return podSecurity;
}

/** One file Job: one `files` container over the world claim, no API token; root with only the capabilities given, or the game's uid with none. */
export function jobOf(p: JobBase, shape: JobShape): V1Job {
  const podSecurity = podSecurityOf(p, shape.capabilities, shape.asWriter);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: filesJobName(p.server, p.opId),
      namespace: p.namespace,
      labels: { ...shape.labels },
      ...(shape.annotations ? { annotations: shape.annotations } : {}),
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: shape.deadlineSeconds,
      ttlSecondsAfterFinished: p.ttlSeconds > 0 ? p.ttlSeconds : FALLBACK_SECONDS,
      template: {
        metadata: { labels: { ...shape.labels } },
        spec: {
          restartPolicy: 'Never',
          serviceAccountName: p.serviceAccount,
          automountServiceAccountToken: false,
          ...(p.nodeName ? { nodeSelector: { 'felis.node-restriction.kubernetes.io/identity': p.nodeName } } : {}),
          securityContext: podSecurity,
          volumes: [
            { name: 'world', persistentVolumeClaim: { claimName: p.worldPvc, readOnly: shape.readOnly } },
            ...(shape.scratch ? [{ name: SCRATCH_VOLUME, emptyDir: { sizeLimit: shape.scratch.sizeLimit } }] : []),
          ],
          containers: [
            {
              name: FILES_CONTAINER,
              image: p.image,
              command: [...p.command],
              args: shape.args,
              ...(shape.env ? { env: shape.env } : {}),
              ...(shape.ports ? { ports: shape.ports } : {}),
              volumeMounts: [{ name: 'world', mountPath: p.worldsRoot, readOnly: shape.readOnly }, ...(shape.scratch ? [{ name: SCRATCH_VOLUME, mountPath: shape.scratch.mountPath }] : [])],
              resources: { requests: { ...shape.requests }, limits: { ...shape.limits } },
              securityContext: {
                privileged: false,
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: shape.capabilities.length > 0 ? { drop: ['ALL'], add: shape.capabilities } : { drop: ['ALL'] },
              },
            },
          ],
        },
      },
    },
  };
}

/** Ours only: marks a file Job that serves list and read for a while (a browse session). */
export const LABEL_FILES_BROWSE = 'felis.lolicon.best/files-browse';
/** The container port a serving Job listens on (its Pod address comes from the downward API). */
export const BROWSE_PORT = 8420;
/** A browse Job asks for little, as Felis's browser Job does; its limits stay the file Job's. */
export const BROWSE_REQUESTS = { cpu: '10m', memory: '32Mi' } as const;

export interface BrowseJobParams extends JobBase, Pick<JobParams, 'cpu' | 'memory'> {
  /** Hex SHA-256 of the token callers present; the token itself never appears in the spec. */
  tokenSha256: string;
  idleSeconds: number;
  lifetimeSeconds: number;
}

/**
 * A browse Job: the file Job program in `--serve` mode, world mounted read-only. Labelled as a
 * `read` file Job, so it never counts as a holder of the world, for us or for Felis (whose rule
 * treats any other mode as a write), plus the browse label by which the functions find it again.
 * Its deadline leaves a minute past the program's own lifetime for a clean stop.
 */
/** The browse Pod's scratch folder (an emptyDir) and its size: room for its list indexes (at most 256 MiB). */
export const BROWSE_SCRATCH_PATH = '/scratch';
export const BROWSE_SCRATCH_LIMIT = '320Mi';

/**
 * What every session Job (browse, edit) starts from: its settings checked, its limits, and the
 * labels of a `read` file Job (never a holder) with the session's own label, by which the
 * functions find it again.
 */
function sessionBase(p: BrowseJobParams, kind: string, sessionLabel: string): { cpu: string; memory: string; labels: Record<string, string> } {
  if (!p.image) throw new JobSpecError('no worker image configured');
  if (!p.worldPvc) throw new JobSpecError('no world volume claim');
  if (!p.opId) throw new JobSpecError('no operation id');
  if (!/^[0-9a-f]{64}$/.test(p.tokenSha256)) throw new JobSpecError(`${kind} job needs a token digest`);
  if (p.command.length === 0) throw new JobSpecError('no worker command configured');
  return {
    cpu: quantity(p.cpu, DEFAULT_CPU, 'cpu'),
    memory: quantity(p.memory, DEFAULT_MEMORY, 'memory'),
    labels: {
      [LABEL_MANAGED_BY]: MANAGED_BY_FILES,
      [LABEL_COMPONENT]: COMPONENT_WORLD_FILES,
      [LABEL_SERVER]: p.server,
      [LABEL_FILES_OP]: p.opId,
      [LABEL_FILES_MODE]: 'read',
      [sessionLabel]: 'true',
    },
  };
}

export function renderBrowseJob(p: BrowseJobParams): V1Job {
  const { cpu, memory, labels } = sessionBase(p, 'a browse', LABEL_FILES_BROWSE);
  return jobOf(p, {
    labels,
    deadlineSeconds: p.lifetimeSeconds + 60,
    readOnly: true,
    args: ['--serve', '--worlds-root', p.worldsRoot],
    // The archive ops' heap limits: a paged listing scans a folder of any size, and without them V8
    // lets the scan's garbage pile up (145 MiB peak RSS over 200,000 entries; 85 MiB with them).
    // The scratch folder holds sorted indexes of big folders a paged listing reads (job/listing/list-index.ts): the Pod's own disk, never the world's.
    env: [...servingEnvOf(BROWSE_PORT, p), { name: 'NODE_OPTIONS', value: ARCHIVE_NODE_OPTIONS }, { name: 'FELIS_SCRATCH_DIR', value: BROWSE_SCRATCH_PATH }],
    scratch: { mountPath: BROWSE_SCRATCH_PATH, sizeLimit: BROWSE_SCRATCH_LIMIT },
    ports: [{ name: 'serve', containerPort: BROWSE_PORT, protocol: 'TCP' }],
    requests: { ...BROWSE_REQUESTS },
    limits: { cpu, memory },
    capabilities: [],
  });
}

/** Ours only: marks a file Job that makes small changes for lock holders for a while (an edit session). */
export const LABEL_FILES_EDIT = 'felis.lolicon.best/files-edit';

/**
 * An edit session's Job: the file Job program in `--serve --edit` mode, world mounted read-write,
 * with the capabilities of the ops it makes (write, mkdir and copy give new files to the game's
 * uid; chmod-many changes modes). Labelled as a `read` file Job, so it never holds the world by
 * itself, for us or for Felis: it changes nothing except inside a call whose caller holds the
 * annotation lock, and checks that lock's date before each (docs/edit-sessions.md). Found again
 * by the edit label; pinned to the node the server's Jobs use, as a browse Job is.
 */
export function renderEditJob(p: BrowseJobParams): V1Job {
  const { cpu, memory, labels } = sessionBase(p, 'an edit', LABEL_FILES_EDIT);
  return jobOf(p, {
    labels,
    deadlineSeconds: p.lifetimeSeconds + 60,
    readOnly: false,
    args: ['--serve', '--edit', '--worlds-root', p.worldsRoot],
    // The heap limits of the heaviest op it makes (a copy of up to 64 MiB), as its one-shot Job has.
    env: [...servingEnvOf(BROWSE_PORT, p), { name: 'NODE_OPTIONS', value: ARCHIVE_NODE_OPTIONS }],
    ports: [{ name: 'edit', containerPort: BROWSE_PORT, protocol: 'TCP' }],
    requests: { ...BROWSE_REQUESTS },
    limits: { cpu, memory },
    capabilities: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER'],
  });
}
