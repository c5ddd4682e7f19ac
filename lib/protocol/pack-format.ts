/**
 * The formats `files/compress` packs a selection as: the function checks the body's `format`
 * against them and the Job takes it as `--format`. No dependencies: both bundles carry it.
 * @module
 */
export const PACK_FORMATS = ['zip', 'tar.gz', 'tar.xz', 'tar.zst'] as const;
export type PackFormat = (typeof PACK_FORMATS)[number];

export function isPackFormat(v: string): v is PackFormat {
  return (PACK_FORMATS as readonly string[]).includes(v);
}
