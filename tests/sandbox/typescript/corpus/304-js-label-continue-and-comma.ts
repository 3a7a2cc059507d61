const rows = await codemode.sheets_read_range({ sheet: 'orders', range: 'A2:D200' });
let kept = 0, skipped = 0;
rows: for (const row of rows) {
  for (const cell of row) {
    if (cell === '' || cell == null) { skipped++; continue rows; }
  }
  kept++;
}
return { kept, skipped };
