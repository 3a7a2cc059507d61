import { readFile } from 'node:fs/promises';
import type { PathLike } from 'node:fs';

export interface Loaded<T> {
  path: string;
  data: T;
}
export async function loadJson<T = unknown>(path: PathLike & string): Promise<Loaded<T>> {
  return { path, data: JSON.parse(await readFile(path, 'utf8')) as T };
}
const DEFAULT: string = 'config.json';
export { DEFAULT, DEFAULT as default };
