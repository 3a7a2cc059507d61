const matrix = await codemode.sheets_read_range({ sheet: 'Q3', range: 'A1:H40' });
let target = null;
search: for (let r = 0; r < matrix.length; r++) {
  for (let c = 0; c < matrix[r].length; c++) {
    if (String(matrix[r][c]).toLowerCase() === 'total') {
      target = { r, c, value: matrix[r][c + 1] };
      break search;
    }
  }
}
return target;
