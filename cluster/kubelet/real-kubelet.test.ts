/**
 * The real-apiserver kubelet's reading of the `containerLogs` query the apiserver forwards (the
 * rest of it runs only on the cluster tier, against a real kube-apiserver).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { logQueryFrom } from './real-kubelet.ts';

describe('containerLogs query', () => {
  it('reads what LogLocation forwards', () => {
    assert.deepEqual(logQueryFrom(new URLSearchParams('follow=true&limitBytes=1048576&tailLines=5&timestamps=true')), {
      tailLines: 5,
      limitBytes: 1048576,
      follow: true,
      previous: false,
      timestamps: true,
    });
    assert.deepEqual(logQueryFrom(new URLSearchParams('previous=true&sinceSeconds=10&sinceTime=2020-01-01T00:00:00Z')), {
      sinceSeconds: 10,
      follow: false,
      previous: true,
      timestamps: false,
      sinceTime: '2020-01-01T00:00:00Z',
    });
  });

  it('takes tail as an alias, tail=all as everything, and refuses a non-integer', () => {
    assert.equal((logQueryFrom(new URLSearchParams('tail=3')) as { tailLines?: number }).tailLines, 3);
    assert.equal((logQueryFrom(new URLSearchParams('tail=all')) as { tailLines?: number }).tailLines, undefined);
    assert.equal(logQueryFrom(new URLSearchParams('tailLines=x')), 'strconv.ParseInt: parsing "x": invalid syntax');
    assert.equal(logQueryFrom(new URLSearchParams('limitBytes=1.5')), 'strconv.ParseInt: parsing "1.5": invalid syntax');
  });
});
