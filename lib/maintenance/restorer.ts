/**
 * The shipped Restorer: creates the restore Job from a template in configuration
 * (FELIS_RESTORE_TEMPLATE, a Job manifest in YAML or JSON). Every string in the template may use
 * `{{server}}`, `{{backupRef}}`, `{{backupId}}` and `{{worldClaim}}`. The Job always carries the
 * labels that make it a `restore` holder to Felis and to us, whatever the template says.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import { LABEL_MANAGED_BY, LABEL_SERVER } from '../labels.ts';
import type { ServerApi } from '../kube/servers.ts';
import { kubeStatus } from '../kube/errors.ts';
import { jobFinished } from './holder.ts';
import { worldClaim } from './contracts.ts';
import type { Restorer } from './settle.ts';

function substitute<T>(value: T, vars: Record<string, string>): T {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (m, k: string) => vars[k] ?? m) as T;
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)])) as T;
  }
  return value;
}

export class TemplateRestorer implements Restorer {
  readonly #api: ServerApi;
  readonly #ns: string;
  readonly #template: V1Job;

  constructor(api: ServerApi, namespace: string, template: V1Job) {
    this.#api = api;
    this.#ns = namespace;
    this.#template = template;
  }

  async restore(server: string, ref: string, backupId: string): Promise<'started' | 'busy' | 'gone'> {
    const mc = await this.#api.getServer(this.#ns, server);
    if (!mc) return 'gone';
    const running = await this.#api.listJobs(this.#ns, `${LABEL_MANAGED_BY}=felis-restore,${LABEL_SERVER}=${server}`);
    if (running.some((j) => !jobFinished(j))) return 'busy';
    const job = substitute(structuredClone(this.#template), { server, backupRef: ref, backupId, worldClaim: worldClaim(mc, server) });
    const labels = { [LABEL_MANAGED_BY]: 'felis-restore', [LABEL_SERVER]: server };
    const { generateName: _unused, ...meta } = job.metadata ?? {};
    job.metadata = { ...meta, name: `felis-restore-${server}-${randomBytes(4).toString('hex')}`, namespace: this.#ns };
    job.metadata.labels = { ...job.metadata.labels, ...labels };
    if (job.spec?.template) job.spec.template.metadata = { ...job.spec.template.metadata, labels: { ...job.spec.template.metadata?.labels, ...labels } };
    try {
      await this.#api.createJob(this.#ns, job);
    } catch (err) {
      if (kubeStatus(err)?.code === 409) return 'busy';
      throw err;
    }
    return 'started';
  }
}
