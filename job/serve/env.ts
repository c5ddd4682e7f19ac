/**
 * The environment every serving mode of the Job program reads (browse, receive, export): the Pod
 * address from the downward API, the digest of the token callers must present, the port, and
 * bounded periods in seconds. Each reader throws an Error naming the variable; the caller prints it
 * and exits 2.
 *
 * `node:net` is loaded only here, when a serving mode starts: a one-shot Job never pays for it.
 * @module
 */

/** The port a serving Job listens on unless `FELIS_SERVE_PORT` says otherwise. */
export const SERVE_PORT = 8420;

type Env = Record<string, string | undefined>;

/** A whole number of seconds from 1 to 86400, or `fallback` when unset. */
export function seconds(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 86_400) throw new Error(`${name} must be a whole number of seconds from 1 to 86400`);
  return Number(v);
}

/** Where to listen and whom to let in: `FELIS_POD_IP`, the digest in `digestVar`, `FELIS_SERVE_PORT`. */
export function listenEnv(env: Env, digestVar: string): { host: string; digest: string; port: number } {
  const host = env.FELIS_POD_IP ?? '';
  if (process.getBuiltinModule('node:net').isIP(host) === 0) throw new Error('FELIS_POD_IP must be the Pod address to listen on');
  const digest = env[digestVar] ?? '';
  if (!/^[0-9a-f]{64}$/.test(digest)) throw new Error(`${digestVar} must be 64 lowercase hex characters`);
  const p = env.FELIS_SERVE_PORT;
  const port = p === undefined || p === '' ? SERVE_PORT : Number(p);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('FELIS_SERVE_PORT must be a port number');
  return { host, digest, port };
}

/** A serving session's whole environment (browse, edit): where, whom, and its idle and lifetime periods. */
export function sessionEnv(env: Env, defaults: { idleSeconds: number; lifetimeSeconds: number }): { host: string; digest: string; port: number; idle: number; lifetime: number } {
  const { host, digest, port } = listenEnv(env, 'FELIS_SERVE_TOKEN_SHA256');
  return {
    host,
    digest,
    port,
    idle: seconds(env, 'FELIS_SERVE_IDLE_SECONDS', defaults.idleSeconds),
    lifetime: seconds(env, 'FELIS_SERVE_LIFETIME_SECONDS', defaults.lifetimeSeconds),
  };
}
