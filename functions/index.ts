/**
 * Every function's routes, for hosts that serve them together (`npm start`, the tests), as an
 * ingress in front of the separate Knative services would.
 * @module
 */
import { APPS } from './apps.generated.ts';

/** Each function folder's routes (its app.ts), by the folder's name, as scripts/collect.ts finds them. */
export const FUNCTIONS = APPS;
