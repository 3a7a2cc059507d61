// refused: parameter property at 7
class Base {
  name: string = 'base';
}
class Derived extends Base {
  constructor(
    override name: string,
  ) {
    super();
  }
}
return new Derived('d').name;
