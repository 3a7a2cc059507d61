async () => {
  interface Temperature {
    get celsius(): number;
    set celsius(v: number);
    readonly fahrenheit: number;
  }
  class Reading implements Temperature {
    #c = 0;
    get celsius(): number {
      return this.#c;
    }
    set celsius(v: number) {
      this.#c = Math.round(v * 10) / 10;
    }
    get fahrenheit(): number {
      return this.#c * 1.8 + 32;
    }
  }
  const sensors: { id: string; value: number }[] = await codemode.iot_read_sensors({ kind: 'temperature' });
  return sensors.map((s) => {
    const r: Temperature = new Reading();
    r.celsius = s.value;
    return `${s.id}: ${r.celsius}°C / ${r.fahrenheit.toFixed(1)}°F`;
  });
}
