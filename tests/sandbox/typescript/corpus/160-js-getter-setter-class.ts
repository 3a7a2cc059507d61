class Temperature {
  static #count = 0;
  #celsius = 0;
  constructor(c) {
    this.celsius = c;
    Temperature.#count++;
  }
  get celsius() {
    return this.#celsius;
  }
  set celsius(v) {
    if (typeof v !== 'number') throw new TypeError('number expected');
    this.#celsius = v;
  }
  static get count() {
    return Temperature.#count;
  }
}
const readings = await codemode.iot_read_sensors({ kind: 'temperature' });
const temps = readings.map((r) => new Temperature(r.value));
return { n: Temperature.count, max: Math.max(...temps.map((t) => t.celsius)) };
