import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { statusOf, type TestCluster, testCluster } from './cluster.test-kit.ts';

describe('labelSelector grammar (through listNamespacedPod)', () => {
  let t: TestCluster;
  const pods: Record<string, Record<string, string>> = {
    a: { app: 'mc', tier: 'web', size: '10' },
    b: { app: 'mc', tier: 'db', size: '3' },
    c: { app: 'proxy', size: 'big' },
    d: {},
  };

  before(async () => {
    t = await testCluster();
    for (const [name, labels] of Object.entries(pods)) {
      await t.core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
      });
    }
  });
  after(() => t.close());

  const names = async (labelSelector: string) => (await t.core.listNamespacedPod({ namespace: 'default', labelSelector })).items.map((p) => p.metadata!.name).sort();

  const cases: [string, string[]][] = [
    ['app=mc', ['a', 'b']],
    ['app==mc', ['a', 'b']],
    ['app!=mc', ['c', 'd']],
    ['app in (mc,proxy)', ['a', 'b', 'c']],
    ['app notin (mc)', ['c', 'd']],
    ['tier', ['a', 'b']],
    ['!tier', ['c', 'd']],
    ['size>5', ['a']],
    ['size<5', ['b']],
    ['app=mc,tier=db', ['b']],
    ['app=mc, tier in (web, db) ,size>1', ['a', 'b']],
    ['', ['a', 'b', 'c', 'd']],
    ['tier=', []],
    ['tier in (,db)', ['b']],
  ];
  for (const [sel, want] of cases) {
    it(`${JSON.stringify(sel)} selects ${want.join(',') || 'nothing'}`, async () => {
      assert.deepEqual(await names(sel), want);
    });
  }

  const bad: [string, string][] = [
    ['app===mc', "unable to parse requirement: found '=', expected: identifier"],
    ['app IN (a)', "unable to parse requirement: found 'IN', expected: in, notin, =, ==, !=, gt, lt"],
    ['app=has space', "found 'space', expected: ',' or 'end of string'"],
    ['app in a', "unable to parse requirement: found 'a' expected: '('"],
    ['app=mc,', "found '', expected: identifier after ','"],
    ['size>x', "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"],
  ];
  for (const [sel, message] of bad) {
    it(`${JSON.stringify(sel)} is a 400 BadRequest`, async () => {
      const s = await statusOf(t.core.listNamespacedPod({ namespace: 'default', labelSelector: sel }));
      assert.equal(s.code, 400);
      assert.deepEqual(s.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'BadRequest', code: 400 });
    });
  }

  it('an invalid key is a 400 naming the name part', async () => {
    const s = await statusOf(t.core.listNamespacedPod({ namespace: 'default', labelSelector: '-bad=1' }));
    assert.equal(s.code, 400);
    assert.match(s.body.message, /^unable to parse requirement: .*name part must consist of alphanumeric characters/);
  });

  it('upper case and _ are allowed in a key name part', async () => {
    assert.deepEqual(await names('Bad_Key!=x'), ['a', 'b', 'c', 'd']);
  });
});
