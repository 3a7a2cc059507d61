// refused: import = at 3
import type { Stats } from 'node:fs';
import fs = require('node:fs');
const s: Stats = fs.statSync('.');
export const size = s.size;
