/** settle's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import { type ContainerCall, type RbacScenario, stagedPull } from '../../test/support/function-e2e.ts';
import { createJob, createServer, holderJob, STOPPED } from '../../test/support/servers.ts';

// A finished restore chain, and a pull of survival's that ended staged: the pass starts the
// restore, then places the pull (the gates, the world's line, the placement Job, which finds no
// staging here and says so) and records the outcome on the pull's Job.
export const rbac: RbacScenario = {
  async setup(c, tag) {
    await stagedPull(c);
    await createServer(c, `chain${tag}`, STOPPED);
    await createJob(
      c,
      holderJob(
        `b-chain${tag}`,
        `chain${tag}`,
        'felis-backup',
        ['sh', '-c', 'sleep 30'],
        { 'felis.lolicon.best/then-restore': 'pending' },
        {
          'felis.lolicon.best/restore-ref': `s3://backups/chain${tag}/1.tar.zst`,
          'felis.lolicon.best/restore-backup-id': '1',
        },
      ),
    );
    await c.setJobConditions('minecraft', `b-chain${tag}`, [
      { type: 'SuccessCriteriaMet', status: 'True' },
      { type: 'Complete', status: 'True' },
    ]);
  },
  calls: [['POST', '/api/v1/restore-chains/settle']],
};

export const container: ContainerCall[] = [{ method: 'POST', path: '/api/v1/restore-chains/settle', status: [200] }];
