/**
 * The shipped Restorer: creates the restore Job from a template in configuration
 * (FELIS_RESTORE_TEMPLATE, a Job manifest in YAML or JSON). Every string in the template may use
 * `{{server}}`, `{{backupRef}}`, `{{backupId}}` and `{{worldClaim}}`. The Job always carries the
 * labels that make it a `restore` holder to Felis and to us, whatever the template says.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import { kubeStatus } from '../kube/errors.ts';
import { jobFinished } from '../kube/job-facts.ts';
import type { ServerApi } from '../kube/servers.ts';
import { LABEL_MANAGED_BY, LABEL_SERVER } from '../labels.ts';
import { worldClaim } from './contracts.ts';
import { MANAGED_BY_RESTORE, type RestoreOutcome, type RestoreRequest, type Restorer, restoreJobsOf } from './settle.ts';

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

  /**
   * Creates the Job named `jobName`. Another unfinished restore of the world makes it `busy`; the
   * Job already existing (a concurrent pass created it) is `started`, never busy.
   */
  async restore({ server, ref, backupId, jobName }: RestoreRequest): Promise<RestoreOutcome> {
    const mc = await this.#api.getServer(this.#ns, server);
    if (!mc) return 'gone';
    const restores = await this.#api.listJobs(this.#ns, restoreJobsOf(server));
    if (restores.some((j) => j.metadata?.name === jobName)) return 'started';
    if (restores.some((j) => !jobFinished(j))) return 'busy';
    const job = substitute(structuredClone(this.#template), { server, backupRef: ref, backupId, worldClaim: worldClaim(mc, server) });
    const labels = { [LABEL_MANAGED_BY]: MANAGED_BY_RESTORE, [LABEL_SERVER]: server };
    // A fixed name, never generateName: AlreadyExists is what keeps a chain to one restore Job.
    const { generateName: _unused, ...meta } = job.metadata ?? {};
    job.metadata = { ...meta, name: jobName, namespace: this.#ns };
    job.metadata.labels = { ...job.metadata.labels, ...labels };
    if (job.spec?.template) job.spec.template.metadata = { ...job.spec.template.metadata, labels: { ...job.spec.template.metadata?.labels, ...labels } };
    try {
      await this.#api.createJob(this.#ns, job);
    } catch (err) {
      if (kubeStatus(err)?.reason === 'AlreadyExists') return 'started';
      throw err;
    }
    return 'started';
  }
}
