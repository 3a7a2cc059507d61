type Shape =
  | { kind: 'circle'; r: number }
  | { kind: 'rect'; w: number; h: number }
  | { kind: 'tri'; a: number; b: number; c: number };

function assertNever(x: never): never {
  throw new Error(`unexpected: ${JSON.stringify(x)}`);
}

function area(s: Shape): number {
  if (s.kind === 'circle') return Math.PI * s.r ** 2;
  if (s.kind === 'rect') return s.w * s.h;
  if (s.kind === 'tri') {
    const p = (s.a + s.b + s.c) / 2;
    return Math.sqrt(p * (p - s.a) * (p - s.b) * (p - s.c));
  }
  return assertNever(s);
}

const shapes: Shape[] = await codemode.cad_list_shapes({ drawing: 'floor-2' });
return shapes.reduce((sum, s) => sum + area(s), 0).toFixed(1);
