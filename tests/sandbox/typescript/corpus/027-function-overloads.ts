function toArray(value: string): string[];
function toArray<T>(value: T[]): T[];
function toArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

const tags = toArray(await codemode.notes_get_tags({ id: 42 }));
const ids = toArray<number>([1, 2, 3]);
return { tags, ids };
