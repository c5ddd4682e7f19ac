/**
 * The undo trash's settings as a mutation Job is told them: the function's own (FELIS_TRASH,
 * FELIS_TRASH_SECONDS, lib/config.ts) with the caller's name (lib/actor.ts) as the record's actor.
 * Every place that renders a mutation Job for a caller (the editor, the background ops, the upload
 * receivers) passes its settings through here.
 * @module
 */
import { currentActor } from '../actor.ts';
import type { TrashSettings } from '../protocol/trash-env.ts';

/** `settings` with the request's actor; undefined without settings (the Job keeps its defaults). */
export function callerTrash(settings: TrashSettings | undefined): TrashSettings | undefined {
  if (!settings) return undefined;
  return { enabled: settings.enabled, seconds: settings.seconds, actor: currentActor()?.name ?? '' };
}
