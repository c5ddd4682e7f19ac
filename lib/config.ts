/**
 * The functions' configuration, read once from the environment (the Knative service's env) with
 * one schema. Without FELIS_IMAGE there is no editor, and file routes answer 503
 * files_unavailable, as Felis does.
 * @module
 */
import { z } from 'zod';
import { DEFAULT_CPU, DEFAULT_MEMORY } from './job-spec/render.ts';
import type { EditorConfig } from './files/editor.ts';
import { browseConfigFromEnv, type BrowseConfig } from './browse/config.ts';

const int = (d: number) => z.coerce.number().int().min(0).default(d);
const optional = z
  .string()
  .optional()
  .transform((v) => v || undefined);

const envSchema = z.object({
  FELIS_NAMESPACE: z.string().min(1).default('minecraft'),
  FELIS_IMAGE: optional,
  FELIS_FILES_COMMAND: z.string().min(1).default('/usr/local/bin/felis files'),
  FELIS_JOB_SERVICE_ACCOUNT: z.string().min(1).default('felis-restore'),
  FELIS_WORLDS_ROOT: z.string().min(1).default('/data'),
  FELIS_JOB_DEADLINE_SECONDS: int(120),
  FELIS_JOB_TTL_SECONDS: int(120),
  FELIS_FILES_TIMEOUT_SECONDS: int(90),
  FELIS_JOB_CPU: z.string().default(DEFAULT_CPU),
  FELIS_JOB_MEMORY: z.string().default(DEFAULT_MEMORY),
  FELIS_JOB_RUN_AS_USER: int(0),
  FELIS_JOB_RUN_AS_GROUP: int(0),
  FELIS_JOB_FS_GROUP: int(0),
  FELIS_RESTORE_TEMPLATE: optional,
  FELIS_RESTART_ANNOTATION: optional,
  FELIS_CONTROLLER_NODE: optional,
});

export interface Config {
  namespace: string;
  /** Undefined when no worker image is configured. */
  editor: EditorConfig | undefined;
  /** Path of a restore Job template (YAML or JSON); without one, chains settle as not_configured. */
  restoreTemplate?: string;
  /** The annotation Felis's restart endpoint writes (default in lib/maintenance/contracts.ts). */
  restartAnnotation?: string;
  /** Where a Job runs when the server names no node of its own (Felis's controller node). */
  controllerNode?: string;
  /** Browse sessions for list and read; off (one-shot Jobs only) without FELIS_JOB_KEY_FILE. */
  browse?: BrowseConfig;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new Error(`invalid configuration ${String(i.path[0])}: ${i.message}`);
  }
  const e = parsed.data;
  const browse = browseConfigFromEnv(env);
  const editor: EditorConfig | undefined = e.FELIS_IMAGE
    ? {
        namespace: e.FELIS_NAMESPACE,
        image: e.FELIS_IMAGE,
        command: e.FELIS_FILES_COMMAND.split(/\s+/).filter(Boolean),
        serviceAccount: e.FELIS_JOB_SERVICE_ACCOUNT,
        worldsRoot: e.FELIS_WORLDS_ROOT,
        deadlineSeconds: e.FELIS_JOB_DEADLINE_SECONDS,
        ttlSeconds: e.FELIS_JOB_TTL_SECONDS,
        timeoutMs: e.FELIS_FILES_TIMEOUT_SECONDS * 1000,
        cpu: e.FELIS_JOB_CPU,
        memory: e.FELIS_JOB_MEMORY,
        runAsUser: e.FELIS_JOB_RUN_AS_USER,
        runAsGroup: e.FELIS_JOB_RUN_AS_GROUP,
        fsGroup: e.FELIS_JOB_FS_GROUP,
      }
    : undefined;
  return {
    namespace: e.FELIS_NAMESPACE,
    editor,
    restoreTemplate: e.FELIS_RESTORE_TEMPLATE,
    restartAnnotation: e.FELIS_RESTART_ANNOTATION,
    controllerNode: e.FELIS_CONTROLLER_NODE,
    ...(browse ? { browse } : {}),
  };
}
