/**
 * Runs one function as its own HTTP server, as a Knative service does: PORT (default 8080),
 * `/healthz` for probes, and a clean stop on SIGTERM/SIGINT (stop accepting, let in-flight
 * requests finish within the grace period, then exit).
 * @module
 */
import type { ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import { kubeConfigFromEnv } from '../kube/client.ts';
import { configFromEnv } from '../config.ts';
import { createLogger, type Logger } from '../log.ts';
import { createApp, type Env } from './app.ts';
import { authFromEnv } from './auth.ts';
import { buildDeps, type Deps } from './deps.ts';
import { listen } from './host.ts';

export type RouteModule = (deps: Deps) => (app: Hono<Env>) => void;

/** Serves `routes` until SIGTERM. For the function bundles in dist/functions. */
export function serveFunction(name: string, routes: RouteModule, env: NodeJS.ProcessEnv = process.env): ServerType {
  const logger = createLogger(name, env);
  // The Kubernetes client loads once the server listens, not before: a woken service answers its
  // readiness probe first, and the first request awaits the load already under way.
  let listening!: () => void;
  const kc = new Promise<void>((resolve) => (listening = resolve)).then(() => kubeConfigFromEnv(env));
  kc.catch((err: unknown) => {
    // No Kubernetes, no function: exit so the platform shows a failing revision, not a healthy one.
    logger.fatal({ err }, 'cannot load the Kubernetes client or configuration');
    process.exit(1);
  });
  const deps = buildDeps(kc, { ...configFromEnv(env), logger });
  const app = createApp({ logger, auth: authFromEnv(env, kc, logger) }, routes(deps));
  const port = Number(env.PORT ?? 8080);
  const server = listen(app, { port, hostname: env.HOST ?? '0.0.0.0', logger }, (info) => {
    logger.info({ port: info.port }, `${name} listening`);
    setImmediate(listening);
  });
  stopOnSignals(server, logger, Number(env.FELIS_SHUTDOWN_SECONDS ?? 100) * 1000);
  return server;
}

/**
 * Stops accepting on SIGTERM/SIGINT, waits for in-flight requests up to `graceMs`, then exits.
 * `onStop` runs after the server has closed; `onForcedExit` runs synchronously just before the
 * exit forced by the grace running out, for what must not outlive the process even then.
 */
export function stopOnSignals(
  server: ServerType,
  logger: Logger,
  graceMs: number,
  onStop?: () => Promise<void>,
  onForcedExit?: () => void,
): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    const force = setTimeout(() => {
      logger.warn({ graceMs }, 'stop grace ran out; exiting now');
      try {
        onForcedExit?.();
      } catch (err) {
        logger.error({ err }, 'forced-exit cleanup failed');
      }
      process.exit(1);
    }, graceMs);
    force.unref();
    server.close(() => {
      Promise.resolve(onStop?.())
        .catch((err) => logger.error({ err }, 'stop failed'))
        .finally(() => process.exit(0));
    });
    if ('closeIdleConnections' in server) (server as { closeIdleConnections(): void }).closeIdleConnections();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
