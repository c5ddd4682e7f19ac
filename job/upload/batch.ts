/**
 * Gathers a byte stream's small chunks (a socket gives 16–64 KiB at a time) into blocks of about
 * 1 MiB, so the disk sees one write per block rather than one per chunk. Holds at most one block.
 * @module
 */
export const BLOCK_BYTES = 1 << 20;

export async function* blocks(source: AsyncIterable<Buffer>, size = BLOCK_BYTES): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of source) {
    parts.push(chunk);
    n += chunk.length;
    if (n >= size) {
      yield parts.length === 1 ? parts[0]! : Buffer.concat(parts, n);
      parts = [];
      n = 0;
    }
  }
  if (n > 0) yield parts.length === 1 ? parts[0]! : Buffer.concat(parts, n);
}
