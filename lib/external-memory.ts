/**
 * How V8 decides to collect garbage for a process that streams bytes. Every socket read makes a
 * new 64 KiB buffer whose bytes live outside V8's heap ("external" memory). By default V8 keeps a
 * separate limit for that memory, a few dozen MiB above what was left after the last full
 * collection, and each time streamed bytes pass it, V8 marks and sweeps the whole heap, on the
 * main thread and on helper threads. A function holds the Kubernetes client (a heap of about
 * 60 MiB), so a 1 GiB download through it set off about 40 full collections, and their marking
 * took a core's worth of CPU that the Pod and the caller's connection needed: the relay ran at
 * half its speed, CPU-bound.
 *
 * With `--external-memory-accounted-in-global-limit`, external memory counts towards the heap's
 * own growth limit instead, which scales with the heap: the buffers, freed as soon as they are
 * written, go with the ordinary young-generation collections. Memory stays bounded (the same
 * limit governs it; the transfer benches record the peak RSS). Node does not take this flag in
 * NODE_OPTIONS, and V8 reads it each time it computes a limit, so every function sets it at run
 * time, first thing (lib/http/serve.ts). The Job program does not: its heap is small, and the
 * receiver measured no faster with it.
 * @module
 */
import v8 from 'node:v8';

export const EXTERNAL_MEMORY_FLAG = '--external-memory-accounted-in-global-limit';

/** Makes V8 count external memory (stream buffers) in the heap's growth limit. Idempotent. */
export function countExternalMemoryInHeapLimit(): void {
  v8.setFlagsFromString(EXTERNAL_MEMORY_FLAG);
}
