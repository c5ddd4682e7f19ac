/**
 * Test-only fixtures for the file editor's tests (nothing outside them imports this): the editor
 * settings they start from and the server whose world they edit.
 * @module
 */
import type { EditorConfig } from './editor.ts';

/** The editor settings every editor test starts from; `extra` adds what a test is about (trash, async periods). */
export function editorConfig(extra: Partial<EditorConfig> = {}): EditorConfig {
  return {
    namespace: 'minecraft',
    image: 'img',
    command: ['/usr/local/bin/felis', 'files'],
    serviceAccount: 'sa',
    worldsRoot: '/data',
    deadlineSeconds: 120,
    ttlSeconds: 120,
    timeoutMs: 3_000,
    ...extra,
  } as EditorConfig;
}

export const TARGET = { server: 'survival', world: { claim: 'world-survival-0' } };
