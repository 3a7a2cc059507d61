const lines: string[] = (await codemode.fs_read_file({ path: 'numbers.txt' })).split('\n');
let sum: number = 0;
for (let i: number = 0, n: number = lines.length; i < n; i++) {
  sum += Number(lines[i]) || 0;
}
let key: string;
const seen: Record<string, true> = {};
for (key in seen) delete seen[key];
for (const line of lines as readonly string[]) seen[line] = true;
let j: number;
for (j = 0; j < 3; j++) sum += j;
return { sum, unique: Object.keys(seen).length };
