// refused: parameter property at 11
class Plain {
  public constructor(x: number) {
    this.x = x;
  }
  x: number;
}
// a public constructor is fine; a public parameter is not
class WithProp {
  constructor(
    x: number, public y: number,
  ) {}
}
return new Plain(1).x + new WithProp(1, 2).y;
