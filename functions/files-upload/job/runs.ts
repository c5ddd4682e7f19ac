/**
 * upload is an op of the closed set (its contract, functions/files-upload/op.ts), but `felis files
 * --op upload` does not run it: a receiver Job lands uploads (job/upload/).
 * @module
 */
export const runs = { upload: undefined };
