/**
 * Several functions' routes in one Hono app, as an ingress in front of the separate Knative
 * services would route them. Used by `npm start` and the end-to-end tests.
 * @module
 */
import type { Hono } from 'hono';
import { createApp, type AppOptions, type Env } from './app.ts';
import type { Deps } from './deps.ts';
import type { RouteModule } from './serve.ts';

export function createHostApp(opts: AppOptions, deps: Deps, modules: RouteModule[]): Hono<Env> {
  return createApp(opts, (app) => {
    for (const m of modules) m(deps)(app);
  });
}
