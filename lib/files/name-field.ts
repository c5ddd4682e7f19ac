/**
 * A request's name field (zip's, compress's and pull's `name`): one new file's name by the name
 * rule (lib/protocol/names.ts), or 400 `bad_name`. A path with folders is a path, refused as
 * `bad_path`; a name field holds one name, so what is wrong with it is the name. Pure; the Job
 * program judges the same fields again with the same rule.
 * @module
 */
import { DomainError } from '../errors.ts';
import { newNameRefusal } from '../protocol/names.ts';

/** A name field that cannot be the new file's name (→ 400 bad_name with this message). */
export class BadNameError extends DomainError {
  constructor(message: string) {
    super('bad_name', 'invalid', message);
    this.name = 'BadNameError';
  }
}

/** Throws BadNameError unless `name` can be one new file's name; `what` names the field (`the archive name`). */
export function checkNameField(what: string, name: string): string {
  const refusal = newNameRefusal(what, name);
  if (refusal) throw new BadNameError(refusal);
  return name;
}
