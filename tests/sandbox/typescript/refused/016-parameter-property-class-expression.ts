// refused: parameter property at 4
async () => {
  const Point = class {
    constructor(public x: number, public y: number) {}
  };
  const p = new Point(1, 2);
  return p.x + p.y + (await codemode.counter_get({ name: 'offset' })).value;
}
