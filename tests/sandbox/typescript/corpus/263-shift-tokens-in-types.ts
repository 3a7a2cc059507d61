async () => {
  let matrix: Array<Array<number>>= [[1, 2], [3, 4]];
  const sets: Map<string, Set<Array<number>>> = new Map<string, Set<Array<number>>>();
  const flags = 0b1000 >> 2 >>> 0;
  let x: Promise<Array<Array<string>>>|null = null;
  sets.set('m', new Set(matrix));
  const sizes: Array<Array<number>> = await codemode.images_sizes({ album: 'trip' });
  matrix = sizes;
  return { rows: matrix.length, flags, sets: sets.size, x };
}
