import { type Dirent, readdirSync } from 'node:fs';
import { join, type ParsedPath } from 'node:path';
import type { Buffer } from 'node:buffer';

export async function largestFiles(dir: string, n = 5): Promise<string[]> {
  const entries: Dirent[] = readdirSync(dir, { withFileTypes: true });
  const parsed: ParsedPath[] = [];
  const chunks: Buffer[] = [];
  const sizes = await Promise.all(
    entries.filter((e) => e.isFile()).map(async (e) => ({ name: join(dir, e.name), size: (await codemode.fs_stat({ path: join(dir, e.name) })).size as number })),
  );
  void parsed;
  void chunks;
  return sizes.sort((a, b) => b.size - a.size).slice(0, n).map((s) => s.name);
}
