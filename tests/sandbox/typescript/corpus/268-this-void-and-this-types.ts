async () => {
  function standalone(this: void, x: number): number {
    return x * 2;
  }
  class Chain {
    private value = 0;
    add(n: number): this {
      this.value += n;
      return this;
    }
    double(): this {
      this.value = standalone(this.value);
      return this;
    }
    result(this: Chain): number {
      return this.value;
    }
  }
  const n: number = (await codemode.counter_get({ name: 'builds' })).value;
  return new Chain().add(n).double().add(1).result();
}
