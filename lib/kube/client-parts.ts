/**
 * The parts of client-node the functions use, named one by one: a dynamic import of the package
 * itself would keep every export, where named imports let the bundler drop the rest.
 * undici's `request` (for Pod logs) comes along: client-node loads undici anyway.
 * Reached only through `loadClientNode` (./client.ts).
 * @module
 */
export {
  AuthenticationV1Api,
  AuthorizationV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  HttpMethod,
  KubeConfig,
  PatchStrategy,
  RequestContext,
  setHeaderOptions,
} from '@kubernetes/client-node';
export { request } from 'undici';
