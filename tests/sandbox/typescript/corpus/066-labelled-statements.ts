const grid: number[][] = await codemode.sheets_read_range({ sheet: 'inventory', range: 'B2:F20' });
let found: [row: number, col: number] | null = null;
outer: for (let r: number = 0; r < grid.length; r++) {
  inner: for (let c = 0; c < grid[r]!.length; c++) {
    const v = grid[r]![c] as number | undefined;
    if (v === undefined) continue inner;
    if (v < 0) {
      found = [r, c];
      break outer;
    }
  }
}
return found ?? 'no negative stock';
