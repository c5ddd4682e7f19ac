/**
 * The floor a function's cold start is compared with: a bare Hono hello-world on the same server
 * adapter, bundled with the same options, printing its port the same way (one JSON line).
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.get('/healthz', (c) => c.text('ok'));
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 8080), hostname: process.env.HOST ?? '0.0.0.0' }, (info) => {
  console.log(JSON.stringify({ port: info.port }));
});
process.once('SIGTERM', () => process.exit(0));
