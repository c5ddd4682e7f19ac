/**
 * Runs one function as its own HTTP server, as a Knative service does: PORT (default 8080),
 * `/healthz` for probes, and a clean stop on SIGTERM/SIGINT (stop accepting, let in-flight
 * requests finish within the grace period, then exit).
 *
 * A woken service must answer its readiness probe before anything else, so only this shell loads
 * before it listens: the function's routes (with their validation) and the Kubernetes client load
 * right after the first probe is answered, or shortly after listening if no probe comes, and a
 * request that arrives earlier waits for them. The configuration and the token are still read
 * before listening, so a misconfigured revision never starts listening; what fails to load later
 * (a kubeconfig, a restore template file) ends the process within moments of its first probe.
 * @module
 */

import type { ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import { configFromEnv } from '../config.ts';
import { countExternalMemoryInHeapLimit } from '../external-memory.ts';
import { kubeConfigFromEnv } from '../kube/client.ts';
import { createLogger, type Logger } from '../log.ts';
import { createApp, type Env } from './app.ts';
import { authFromEnv } from './auth.ts';
import { corsOriginsFromEnv } from './cors.ts';
import { listen, type RouteModule, serverTimeoutsFromEnv } from './host.ts';
import { markStopping } from './stopping.ts';

export type { RouteModule };

/** How long after listening the routes start loading when no probe has asked first. */
const LOAD_WITHOUT_PROBE_MS = 50;

type Fetch = (req: Request, env?: unknown) => Response | Promise<Response>;

/** Serves the routes `load` resolves to until SIGTERM. For the function bundles in dist/functions. */
export function serveFunction(name: string, load: () => Promise<RouteModule>, env: NodeJS.ProcessEnv = process.env): ServerType {
  // Transfers stream through some functions; each holds a large heap (see external-memory.ts).
  countExternalMemoryInHeapLimit();
  const logger = createLogger(name, env);
  // The Kubernetes configuration loads with the routes; kubernetes-mode auth awaits the same load.
  let kubeConfigLoaded!: (kc: ReturnType<typeof kubeConfigFromEnv>) => void;
  const kubeConfig = new Promise<Awaited<ReturnType<typeof kubeConfigFromEnv>>>((resolve) => (kubeConfigLoaded = resolve));
  const opts = { logger, auth: authFromEnv(env, kubeConfig, logger), corsOrigins: corsOriginsFromEnv(env) };
  const config = configFromEnv(env);
  const fatal = (what: string) => (err: unknown) => {
    // No routes or no Kubernetes, no function: exit so the platform shows a failing revision.
    logger.fatal({ err }, what);
    process.exit(1);
  };

  let app: Hono<Env> | undefined;
  let loading: Promise<Hono<Env>> | undefined;
  const startLoading = () =>
    (loading ??= (() => {
      const kc = kubeConfigFromEnv(env);
      kubeConfigLoaded(kc);
      kc.catch(fatal('cannot load the Kubernetes client or configuration'));
      const built = Promise.all([load(), import('./deps.ts')]).then(([routes, { buildDeps }]) => {
        app = createApp(opts, routes(buildDeps(kc, { ...config, logger })));
        return app;
      });
      built.catch(fatal('cannot load the function routes or build what they need (e.g. read the restore template)'));
      const t = performance.now();
      // One line per cold start saying what the first request waits for (the image build waits for it too).
      void Promise.all([built, kc]).then(
        () => logger.info({ loaded_ms: Math.round(performance.now() - t) }, `${name} loaded its routes and the Kubernetes client`),
        () => {},
      );
      return built;
    })());

  // Answers /healthz exactly as the full app does, from an app with no routes.
  const shell = createApp(opts, () => {});
  const fetch: Fetch = (req, e) => {
    if (app) return app.fetch(req, e);
    if ((req.method === 'GET' || req.method === 'HEAD') && new URL(req.url).pathname === '/healthz') {
      const res = shell.fetch(req, e);
      // After this answer is written: the probe is not kept waiting on the load it triggers.
      setImmediate(startLoading);
      return res;
    }
    return startLoading().then((a) => a.fetch(req, e));
  };

  const port = Number(env.PORT ?? 8080);
  const timeouts = serverTimeoutsFromEnv(env);
  const server = listen({ fetch }, { port, hostname: env.HOST ?? '0.0.0.0', logger, timeouts }, (info) => {
    logger.info({ port: info.port }, `${name} listening`);
    setTimeout(startLoading, LOAD_WITHOUT_PROBE_MS);
  });
  stopOnSignals(server, logger, Number(env.FELIS_SHUTDOWN_SECONDS ?? 100) * 1000);
  return server;
}

/**
 * Stops accepting on SIGTERM/SIGINT, waits for in-flight requests up to `graceMs`, then exits.
 * `onStop` runs after the server has closed; `onForcedExit` runs synchronously just before the
 * exit forced by the grace running out, for what must not outlive the process even then.
 */
export function stopOnSignals(server: ServerType, logger: Logger, graceMs: number, onStop?: () => Promise<void>, onForcedExit?: () => void): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    // Event streams end now (their callers reconnect elsewhere) rather than hold the close.
    markStopping();
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
    // A connection kept alive after its last answer would hold the close for the whole keep-alive
    // period (120 s, longer than queue-proxy's idle limit): close each one as soon as it is idle,
    // including those whose in-flight request ends after the signal.
    if ('closeIdleConnections' in server) {
      const closeIdle = () => (server as { closeIdleConnections(): void }).closeIdleConnections();
      closeIdle();
      setInterval(closeIdle, 50).unref();
    }
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
