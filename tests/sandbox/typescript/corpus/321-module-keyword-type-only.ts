module Shapes {
  export interface Point { x: number; y: number }
  export type Polygon = Point[];
}
const poly: Shapes.Polygon = await codemode.geo_polygon({ id: 'zone-7' });
const area = Math.abs(poly.reduce((s, p, i) => { const q = poly[(i + 1) % poly.length]!; return s + p.x * q.y - q.x * p.y; }, 0)) / 2;
return area;
